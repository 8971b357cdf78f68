package actors

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/core/permission"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// TestDelegationWrites: while planning, a read-only task or fleet may run
// and one that gives any task write_paths waits for the plan.
func TestDelegationWrites(t *testing.T) {
	for args, want := range map[string]bool{
		`{"prompt":"look around"}`:                                             false,
		`{"prompt":"fix it","write_paths":["a.go"]}`:                           true,
		`{"tasks":[{"prompt":"a"},{"prompt":"b"}]}`:                            false,
		`{"tasks":[{"prompt":"a"},{"prompt":"b","write_paths":["docs/"]}]}`:    true,
		`{"tasks":[{"prompt":"a","write_paths":[]}],"budget":{"tokens":1000}}`: false,
		`not json`: true,
	} {
		if got := team.DelegationWrites(args); got != want {
			t.Errorf("delegationWrites(%s) = %v, want %v", args, got, want)
		}
	}
}

// TestPlanningRefusesBashLikeWriteFile: while a session plans, a bash call
// is judged exactly as a write_file call is. With no rule for it (whatever
// the posture, and even where a person could be asked) it is refused with
// the plan-mode reason and never runs, nobody is asked, and the turn goes
// on; a deny rule refuses it as a deny; only an explicit allow rule lets it
// through to the ordinary gate, where it runs.
func TestPlanningRefusesBashLikeWriteFile(t *testing.T) {
	t.Parallel()
	const planRefusal = "Blocked: plan mode: nothing may be changed before the plan is approved"
	calls := map[string]string{
		"bash":       `{"command":"go test ./..."}`,
		"write_file": `{"path":"docs/notes.md","content":"x"}`,
	}
	for _, tc := range []struct {
		name  string
		perms func(t *testing.T) agent.Permissions
		want  string // prefix of the result the model gets
		runs  int32
	}{
		{name: "no policy", perms: func(*testing.T) agent.Permissions { return agent.Permissions{} }, want: planRefusal},
		{name: "yolo posture", want: planRefusal, perms: func(t *testing.T) agent.Permissions {
			return agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Posture: permission.PostureYolo}
		}},
		{name: "auto posture", want: planRefusal, perms: func(t *testing.T) agent.Permissions {
			return agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Posture: permission.PostureAuto}
		}},
		{name: "interactive", want: planRefusal, perms: func(t *testing.T) agent.Permissions {
			return agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true}
		}},
		{name: "deny rule", want: "Blocked: blocked by deny rule", perms: func(t *testing.T) agent.Permissions {
			return agent.Permissions{Policy: policy(t, "ask", nil, nil, []string{"Bash(go test:*)", "Edit(docs/**)"}), Posture: permission.PostureYolo}
		}},
		{name: "allow rule", want: "ran ", runs: 1, perms: func(t *testing.T) agent.Permissions {
			return agent.Permissions{Policy: policy(t, "ask", []string{"Bash(go test:*)", "Edit(docs/**)"}, nil, nil)}
		}},
	} {
		for _, name := range []string{"bash", "write_file"} {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				var runs atomic.Int32
				writer := &funcTool{name: name, run: func(_ context.Context, args json.RawMessage) (string, error) {
					runs.Add(1)
					return "ran " + string(args), nil
				}}
				// A call that wrongly waits for a person ends at this
				// timeout instead of hanging the test.
				h := newHarness(t, harnessOpts{tools: []tool.Tool{writer}, planMode: true, perms: tc.perms(t),
					approvalTimeout: 2 * time.Second})
				h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call(name, calls[name])}},
					providertest.Turn{Text: "still planning"})
				done, evs := h.turn("change it")
				if done.Status != event.StatusOK || done.Text != "still planning" {
					t.Fatalf("turn = %+v", done)
				}
				if n := runs.Load(); n != tc.runs {
					t.Errorf("%s ran %d times while planning, want %d", name, n, tc.runs)
				}
				if asks := eventsOf[*event.ApprovalRequested](evs); len(asks) != 0 {
					t.Errorf("planning asked for approval: %+v", asks[0])
				}
				reqs := h.srv.Requests()
				if len(reqs) != 2 {
					t.Fatalf("%d requests, want 2", len(reqs))
				}
				if !strings.HasPrefix(reqs[0].LastUser(), "[Plan mode:") {
					t.Errorf("the turn is not marked as planning: %q", reqs[0].LastUser())
				}
				if tm := toolMessages(reqs[1]); len(tm) != 1 || !strings.HasPrefix(tm[0].Content, tc.want) {
					t.Errorf("result of %s while planning = %+v, want %q…", name, tm, tc.want)
				}
			})
		}
	}
}
