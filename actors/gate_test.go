package actors

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/core/permission"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
	"reasonix/core/trust"
)

func policy(t *testing.T, mode string, allow, ask, deny []string) *permission.Policy {
	t.Helper()
	p, err := permission.NewPolicy(mode, allow, ask, deny, "/ws", "/home/u")
	must(t, err)
	return &p
}

// shell is a fake writer tool named bash that counts its runs.
func shell(runs *atomic.Int32) *funcTool {
	return &funcTool{name: "bash", run: func(_ context.Context, args json.RawMessage) (string, error) {
		runs.Add(1)
		return "ran " + string(args), nil
	}}
}

func TestDenyRuleBlocksCall(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := newHarness(t, harnessOpts{tools: []tool.Tool{shell(&runs)},
		perms: agent.Permissions{Policy: policy(t, "ask", []string{"Bash"}, nil, []string{"Bash(rm:*)"})}})
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"echo ok && rm -rf /"}`), call("bash", `{"command":"echo ok"}`)}},
		providertest.Turn{Text: "adapted"},
	)
	done, _ := h.turn("go")
	if done.Status != event.StatusOK {
		t.Fatalf("done = %+v", done)
	}
	tm := toolMessages(h.srv.Requests()[1])
	if !strings.HasPrefix(tm[0].Content, "Blocked: blocked by deny rule Bash(rm:*)") {
		t.Errorf("denied call result = %q", tm[0].Content)
	}
	if !strings.HasPrefix(tm[1].Content, "ran ") || runs.Load() != 1 {
		t.Errorf("allowed call: %q, runs %d", tm[1].Content, runs.Load())
	}
}

func TestHeadlessAskResolvesToAllow(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := newHarness(t, harnessOpts{tools: []tool.Tool{shell(&runs)},
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil)}})
	h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"make"}`)}}, providertest.Turn{Text: "ok"})
	done, evs := h.turn("go")
	if done.Status != event.StatusOK || runs.Load() != 1 || len(eventsOf[*event.ApprovalRequested](evs)) != 0 {
		t.Fatalf("done %+v, runs %d", done, runs.Load())
	}
}

func TestInteractiveApprovals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		choice  string
		wantRun bool
	}{
		{"allow once", event.ApproveOnce, true},
		{"deny", event.ApproveDeny, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var runs atomic.Int32
			h := newHarness(t, harnessOpts{tools: []tool.Tool{shell(&runs)},
				perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true}})
			h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"go test ./..."}`)}}, providertest.Turn{Text: "ok"})
			h.sess.Run("go")
			ev := h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.ApprovalRequested); return ok }).(*event.ApprovalRequested)
			if ev.Tool != "bash" || len(ev.Suggestions) == 0 || !strings.Contains(strings.Join(ev.Suggestions, " "), "Bash(go test:*)") {
				t.Errorf("approval request = %+v", ev)
			}
			h.sess.Approve(&agent.ApprovalResponse{RequestID: ev.RequestID, Choice: tc.choice})
			done, _ := h.wait()
			if done.Status != event.StatusOK || (runs.Load() == 1) != tc.wantRun {
				t.Fatalf("done %+v runs %d", done, runs.Load())
			}
			got := toolMessages(h.srv.Requests()[1])[0].Content
			if !tc.wantRun && !strings.Contains(got, "Blocked: denied by the user") {
				t.Errorf("result = %q", got)
			}
		})
	}
}

func TestAlwaysAllowGrantsAndPersists(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	project := filepath.Join(t.TempDir(), "reasonix.toml")
	must(t, os.WriteFile(project, []byte("# team settings\ndefault_model = \"x\"\n"), 0o644))
	h := newHarness(t, harnessOpts{tools: []tool.Tool{shell(&runs)},
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true,
			Grants: permission.NewGrants("/ws", "/home/u"), ProjectFile: project}})
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"go test ./a"}`)}},
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"go test ./b"}`)}},
		providertest.Turn{Text: "ok"},
	)
	h.sess.Run("go")
	ev := h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.ApprovalRequested); return ok }).(*event.ApprovalRequested)
	h.sess.Approve(&agent.ApprovalResponse{RequestID: ev.RequestID, Choice: event.ApproveAlways, Rule: "Bash(go test:*)"})
	// The second call is covered by the grant: no second approval request.
	done, evs := h.wait()
	if done.Status != event.StatusOK || runs.Load() != 2 {
		t.Fatalf("done %+v runs %d", done, runs.Load())
	}
	if n := len(eventsOf[*event.ApprovalRequested](evs)); n != 0 {
		t.Errorf("%d more approval requests after an always-allow", n)
	}
	saved := func(e event.Event) bool {
		n, ok := e.(*event.Notice)
		return ok && strings.Contains(n.Message, "saved")
	}
	found := false
	for _, e := range evs {
		found = found || saved(e)
	}
	if !found { // the save runs in the background and may finish after the turn
		h.waitEvent(saved)
	}
	data, err := os.ReadFile(project)
	must(t, err)
	if !strings.HasPrefix(string(data), "# team settings\n") || !strings.Contains(string(data), "allow = ['Bash(go test:*)']") {
		t.Errorf("project file:\n%s", data)
	}
}

func TestCancelWhileAwaitingApproval(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := newHarness(t, harnessOpts{tools: []tool.Tool{shell(&runs)},
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true}})
	h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"make"}`)}})
	h.sess.Run("go")
	h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.ApprovalRequested); return ok })
	h.sess.Cancel()
	done, _ := h.wait()
	if done.Status != event.StatusCancelled || runs.Load() != 0 {
		t.Fatalf("done %+v runs %d", done, runs.Load())
	}
}

// TestAlwaysAllowKeepsTrust: the rule an "always" answer saves changes
// reasonix.toml, a trust-bearing file; the edit is the user's own, so a
// workspace trusted before it is still trusted after it, and an untrusted
// one is told the rule waits for "reasonix trust".
func TestAlwaysAllowKeepsTrust(t *testing.T) {
	t.Parallel()
	for _, trusted := range []bool{true, false} {
		t.Run(map[bool]string{true: "trusted", false: "untrusted"}[trusted], func(t *testing.T) {
			t.Parallel()
			var runs atomic.Int32
			home, ws := t.TempDir(), t.TempDir()
			project := filepath.Join(ws, "reasonix.toml")
			must(t, os.WriteFile(project, []byte("# team settings\n"), 0o644))
			if trusted {
				st, err := trust.Open(home)
				must(t, err)
				must(t, st.Trust(ws))
			}
			h := newHarness(t, harnessOpts{tools: []tool.Tool{shell(&runs)},
				perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true,
					Grants: permission.NewGrants(ws, "/home/u"), ProjectFile: project, TrustHome: home}})
			h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"go test ./a"}`)}}, providertest.Turn{Text: "ok"})
			h.sess.Run("go")
			ev := h.waitEvent(isApproval).(*event.ApprovalRequested)
			h.sess.Approve(&agent.ApprovalResponse{RequestID: ev.RequestID, Choice: event.ApproveAlways, Rule: "Bash(go test:*)"})
			saved := func(e event.Event) bool {
				n, ok := e.(*event.Notice)
				return ok && strings.Contains(n.Message, "saved")
			}
			_, evs := h.wait()
			var note *event.Notice
			for _, e := range evs {
				if saved(e) {
					note = e.(*event.Notice)
				}
			}
			if note == nil { // the save runs in the background and may finish after the turn
				note = h.waitEvent(saved).(*event.Notice)
			}
			if waits := strings.Contains(note.Message, "reasonix trust"); waits == trusted {
				t.Errorf("notice %q (trusted %v)", note.Message, trusted)
			}
			st, err := trust.Open(home)
			must(t, err)
			state, err := st.Check(ws)
			must(t, err)
			want := trust.Untrusted
			if trusted {
				want = trust.Trusted
			}
			if state != want {
				t.Errorf("trust after the save = %s, want %s", state, want)
			}
		})
	}
}
