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
)

// freshTool is a fake writer named remember that, like the real one, needs
// a person's approval for every call. It counts its runs.
type freshTool struct{ funcTool }

var _ tool.FreshApproval = (*freshTool)(nil)

func (*freshTool) Preview(args json.RawMessage) string {
	return "remember project/db-host: " + string(args)
}

func newFreshTool(runs *atomic.Int32) *freshTool {
	return &freshTool{funcTool{name: "remember", run: func(_ context.Context, args json.RawMessage) (string, error) {
		runs.Add(1)
		return "saved " + string(args), nil
	}}}
}

const freshArgs = `{"name":"db-host","content":"staging is db.internal"}`

// TestFreshGateDecisions covers the decision table of checkTool for a
// tool that needs a fresh approval, beside a plain writer under the same
// permissions to show the rule is specific to such tools.
func TestFreshGateDecisions(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	fresh, plain := newFreshTool(&runs), &funcTool{name: "remember_plain"}
	granted := permission.NewGrants("/ws", "/home/u")
	must(t, granted.Add("remember"))
	must(t, granted.Add("remember_plain"))
	tests := []struct {
		name       string
		perms      agent.Permissions
		want       permission.Decision
		wantReason string
		plain      permission.Decision // the plain writer under the same permissions
	}{
		{"ask posture", agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true},
			permission.Ask, "remember project/db-host: " + freshArgs, permission.Ask},
		{"yolo", agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Posture: permission.PostureYolo, Interactive: true},
			permission.Ask, "asked every time", permission.Allow},
		{"auto", agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Posture: permission.PostureAuto, Interactive: true},
			permission.Ask, "asked every time", permission.Allow},
		{"allow rule and allow mode", agent.Permissions{Policy: policy(t, "allow", []string{"remember", "remember_plain"}, nil, nil), Interactive: true},
			permission.Ask, "asked every time", permission.Allow},
		{"session grant", agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Grants: granted, Interactive: true},
			permission.Ask, "asked every time", permission.Allow},
		{"no policy", agent.Permissions{Interactive: true},
			permission.Ask, "asked every time", permission.Allow},
		{"headless", agent.Permissions{Policy: policy(t, "allow", nil, nil, nil), Posture: permission.PostureYolo},
			permission.Deny, "this headless run has nobody who can", permission.Allow},
		{"delegated", agent.Permissions{Policy: policy(t, "allow", nil, nil, nil), Posture: permission.PostureYolo, Interactive: true, Delegated: true},
			permission.Deny, "a subagent has nobody who can", permission.Allow},
		{"deny rule", agent.Permissions{Policy: policy(t, "ask", []string{"remember"}, nil, []string{"remember", "remember_plain"}), Posture: permission.PostureYolo, Interactive: true},
			permission.Deny, "blocked by deny rule remember", permission.Deny},
		{"deny mode", agent.Permissions{Policy: policy(t, "deny", nil, nil, nil), Interactive: true},
			permission.Deny, "permission mode is deny", permission.Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := tt.perms.CheckTool(fresh, freshArgs)
			if g.Decision != tt.want || !strings.Contains(g.Reason, tt.wantReason) {
				t.Errorf("fresh tool: %v %q, want %v with %q", g.Decision, g.Reason, tt.want, tt.wantReason)
			}
			if len(g.Suggest) != 0 {
				t.Errorf("fresh tool got rule suggestions %v; no rule can cover it", g.Suggest)
			}
			if g.Decision == permission.Ask && !strings.Contains(g.Reason, "remember project/db-host: ") {
				t.Errorf("the ask reason %q lacks the preview", g.Reason)
			}
			if p := tt.perms.CheckTool(plain, freshArgs); p.Decision != tt.plain {
				t.Errorf("plain writer: %v %q, want %v", p.Decision, p.Reason, tt.plain)
			}
		})
	}
	if runs.Load() != 0 {
		t.Fatal("deciding ran the tool")
	}
}

// collectUntil reads events until match accepts one, returning it and every
// event read on the way, so a test can also assert what did not happen.
func collectUntil(h *harness, match func(event.Event) bool) (event.Event, []event.Event) {
	h.t.Helper()
	var seen []event.Event
	e := h.waitEvent(func(e event.Event) bool { seen = append(seen, e); return match(e) })
	return e, seen
}

func isApproval(e event.Event) bool { _, ok := e.(*event.ApprovalRequested); return ok }

func TestFreshYoloStillAsks(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := newHarness(t, harnessOpts{tools: []tool.Tool{newFreshTool(&runs)},
		perms: agent.Permissions{Policy: policy(t, "allow", []string{"remember"}, nil, nil), Posture: permission.PostureYolo, Interactive: true}})
	h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("remember", freshArgs)}}, providertest.Turn{Text: "saved"})
	h.sess.Run("remember the staging host")
	ev := h.waitEvent(isApproval).(*event.ApprovalRequested)
	if !ev.OnceOnly || len(ev.Suggestions) != 0 || !strings.Contains(ev.Reason, "remember project/db-host: "+freshArgs) {
		t.Errorf("approval request = %+v, want once-only with the preview and no suggestions", ev)
	}
	if runs.Load() != 0 {
		t.Fatal("the call ran before it was approved")
	}
	h.sess.Approve(&agent.ApprovalResponse{RequestID: ev.RequestID, Choice: event.ApproveOnce})
	done, _ := h.wait()
	if done.Status != event.StatusOK || runs.Load() != 1 {
		t.Fatalf("done %+v, runs %d", done, runs.Load())
	}
	if got := toolMessages(h.srv.Requests()[1])[0].Content; got != "saved "+freshArgs {
		t.Errorf("result = %q", got)
	}
}

func TestFreshGrantDoesNotCover(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	grants := permission.NewGrants("/ws", "/home/u")
	must(t, grants.Add("remember"))
	h := newHarness(t, harnessOpts{tools: []tool.Tool{newFreshTool(&runs)},
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Grants: grants, Interactive: true}})
	h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("remember", freshArgs)}}, providertest.Turn{Text: "not saved"})
	h.sess.Run("go")
	ev := h.waitEvent(isApproval).(*event.ApprovalRequested)
	h.sess.Approve(&agent.ApprovalResponse{RequestID: ev.RequestID, Choice: event.ApproveDeny})
	done, _ := h.wait()
	if done.Status != event.StatusOK || runs.Load() != 0 {
		t.Fatalf("done %+v, runs %d", done, runs.Load())
	}
	if got := toolMessages(h.srv.Requests()[1])[0].Content; !strings.HasPrefix(got, "Blocked: denied by the user") {
		t.Errorf("result = %q", got)
	}
}

// TestFreshAlwaysDoesNotPersist: answering "always" (or "session") approves
// the one call; the next call asks again, and neither a session grant nor a
// rule in the project file is left behind.
func TestFreshAlwaysDoesNotPersist(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	project := filepath.Join(t.TempDir(), "reasonix.toml")
	const settings = "# team settings\ndefault_model = \"x\"\n"
	must(t, os.WriteFile(project, []byte(settings), 0o644))
	grants := permission.NewGrants("/ws", "/home/u")
	h := newHarness(t, harnessOpts{tools: []tool.Tool{newFreshTool(&runs)},
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true, Grants: grants, ProjectFile: project}})
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("remember", freshArgs)}},
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("remember", freshArgs)}},
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("remember", freshArgs)}},
		providertest.Turn{Text: "ok"},
	)
	h.sess.Run("go")
	var seen []event.Event
	for _, choice := range []string{event.ApproveAlways, event.ApproveSession, event.ApproveOnce} {
		ev, evs := collectUntil(h, isApproval)
		seen = append(seen, evs...)
		h.sess.Approve(&agent.ApprovalResponse{RequestID: ev.(*event.ApprovalRequested).RequestID, Choice: choice, Rule: "remember"})
	}
	done, evs := h.wait()
	seen = append(seen, evs...)
	if done.Status != event.StatusOK || runs.Load() != 3 {
		t.Fatalf("done %+v, runs %d", done, runs.Load())
	}
	if n := len(eventsOf[*event.ApprovalRequested](seen)); n != 3 {
		t.Errorf("%d approval requests, want one per call", n)
	}
	for _, n := range eventsOf[*event.Notice](seen) {
		if strings.Contains(n.Message, "remember") {
			t.Errorf("notice %q: a rule was granted or saved", n.Message)
		}
	}
	if r := grants.Rules(); len(r) != 0 {
		t.Errorf("session grants = %v, want none", r)
	}
	// The executor saves "always" rules in the background; it must not
	// have started one, so the file is already final here.
	if data, err := os.ReadFile(project); err != nil || string(data) != settings {
		t.Errorf("project file = %q, %v; want it untouched", data, err)
	}
}

func TestFreshHeadlessRefuses(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := newHarness(t, harnessOpts{tools: []tool.Tool{newFreshTool(&runs)},
		perms: agent.Permissions{Policy: policy(t, "allow", []string{"remember"}, nil, nil), Posture: permission.PostureYolo}})
	h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("remember", freshArgs)}}, providertest.Turn{Text: "could not save"})
	done, evs := h.turn("go")
	if done.Status != event.StatusOK || runs.Load() != 0 || len(eventsOf[*event.ApprovalRequested](evs)) != 0 {
		t.Fatalf("done %+v, runs %d, events %v", done, runs.Load(), evs)
	}
	got := toolMessages(h.srv.Requests()[1])[0].Content
	if !strings.HasPrefix(got, "Blocked: remember needs a person to approve each call, and this headless run has nobody who can") {
		t.Errorf("result = %q", got)
	}
}

func TestFreshDelegatedRefuses(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	// A subagent whose parent could answer approvals is still refused.
	h := newHarness(t, harnessOpts{tools: []tool.Tool{newFreshTool(&runs)},
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Posture: permission.PostureYolo, Interactive: true, Delegated: true}})
	h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("remember", freshArgs)}}, providertest.Turn{Text: "could not save"})
	done, evs := h.turn("go")
	if done.Status != event.StatusOK || runs.Load() != 0 || len(eventsOf[*event.ApprovalRequested](evs)) != 0 {
		t.Fatalf("done %+v, runs %d", done, runs.Load())
	}
	got := toolMessages(h.srv.Requests()[1])[0].Content
	if !strings.HasPrefix(got, "Blocked: remember needs a person to approve each call, and a subagent has nobody who can") {
		t.Errorf("result = %q", got)
	}
}

func TestFreshDenyRuleDenies(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := newHarness(t, harnessOpts{tools: []tool.Tool{newFreshTool(&runs)},
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, []string{"remember"}), Posture: permission.PostureYolo, Interactive: true}})
	h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("remember", freshArgs)}}, providertest.Turn{Text: "denied"})
	done, evs := h.turn("go")
	if done.Status != event.StatusOK || runs.Load() != 0 || len(eventsOf[*event.ApprovalRequested](evs)) != 0 {
		t.Fatalf("done %+v, runs %d", done, runs.Load())
	}
	if got := toolMessages(h.srv.Requests()[1])[0].Content; !strings.HasPrefix(got, "Blocked: blocked by deny rule remember") {
		t.Errorf("result = %q", got)
	}
}
