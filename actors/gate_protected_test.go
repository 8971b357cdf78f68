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
	"reasonix/core/sandbox"
	"reasonix/core/tool"
)

// protectedWorkspace is a workspace with a sandbox whose Protected the
// gate consults, and a symlink lnk -> .git/hooks to reach one through.
func protectedWorkspace(t *testing.T) (string, func(string) (string, bool)) {
	t.Helper()
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755))
	must(t, os.Symlink(filepath.Join(".git", "hooks"), filepath.Join(root, "lnk")))
	sb, err := sandbox.New(sandbox.Options{Root: root, Bash: "off"})
	must(t, err)
	return root, sb.Protected
}

// TestProtectedWriteGate: a file-tool write to a trust-bearing file asks
// a person every time, in every posture and whatever the rules or grants
// say, and is refused where nobody can answer; an ordinary write beside it
// follows the usual rules.
func TestProtectedWriteGate(t *testing.T) {
	t.Parallel()
	root, protected := protectedWorkspace(t)
	writer := &funcTool{name: "write_file"}
	mover := &funcTool{name: "move_file"}
	grants := permission.NewGrants(root, "/home/u")
	must(t, grants.Add("Edit"))
	pol := func(mode string, allow, deny []string) *permission.Policy {
		p, err := permission.NewPolicy(mode, allow, nil, deny, root, "/home/u")
		must(t, err)
		return &p
	}
	args := func(path string) string { return `{"path":` + quote(path) + `,"content":"x"}` }
	tests := []struct {
		name   string
		perms  agent.Permissions
		tool   tool.Tool
		args   string
		want   permission.Decision
		reason string
	}{
		{"config, yolo", agent.Permissions{Policy: pol("allow", []string{"Edit"}, nil), Posture: permission.PostureYolo, Interactive: true, Grants: grants, Protected: protected},
			writer, args("reasonix.toml"), permission.Ask, "trust-bearing file"},
		{"mcp json, auto", agent.Permissions{Policy: pol("ask", nil, nil), Posture: permission.PostureAuto, Interactive: true, Protected: protected},
			writer, args(".mcp.json"), permission.Ask, "asked every time"},
		{"command file", agent.Permissions{Policy: pol("ask", nil, nil), Interactive: true, Protected: protected},
			writer, args(".reasonix/commands/x.md"), permission.Ask, "asked every time"},
		{"hook through a symlink", agent.Permissions{Policy: pol("allow", []string{"Edit"}, nil), Posture: permission.PostureYolo, Interactive: true, Protected: protected},
			writer, args("lnk/pre-commit"), permission.Ask, ".git/hooks"},
		{"move destination", agent.Permissions{Policy: pol("allow", []string{"Edit"}, nil), Posture: permission.PostureYolo, Interactive: true, Protected: protected},
			mover, `{"path":"a.txt","destination":".git/config"}`, permission.Ask, "trust-bearing file"},
		{"headless", agent.Permissions{Policy: pol("allow", []string{"Edit"}, nil), Posture: permission.PostureYolo, Protected: protected},
			writer, args("reasonix.toml"), permission.Deny, "this headless run has nobody who can"},
		{"subagent", agent.Permissions{Policy: pol("allow", []string{"Edit"}, nil), Posture: permission.PostureYolo, Interactive: true, Delegated: true, Protected: protected},
			writer, args("reasonix.toml"), permission.Deny, "a subagent has nobody who can"},
		{"deny rule still denies", agent.Permissions{Policy: pol("ask", nil, []string{"Edit(reasonix.toml)"}), Interactive: true, Protected: protected},
			writer, args("reasonix.toml"), permission.Deny, "blocked by deny rule"},
		{"memory is not protected", agent.Permissions{Policy: pol("allow", []string{"Edit"}, nil), Interactive: true, Protected: protected},
			writer, args(".reasonix/memory/x.md"), permission.Allow, ""},
		{"ordinary file", agent.Permissions{Policy: pol("allow", []string{"Edit"}, nil), Interactive: true, Protected: protected},
			writer, args("main.go"), permission.Allow, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := tt.perms.CheckTool(tt.tool, tt.args)
			if g.Decision != tt.want || !strings.Contains(g.Reason, tt.reason) {
				t.Fatalf("%v %q, want %v with %q", g.Decision, g.Reason, tt.want, tt.reason)
			}
			if g.Decision == permission.Ask && (!g.Once || len(g.Suggest) != 0) {
				t.Errorf("ask once=%v suggest=%v: want once-only and no rule suggestions", g.Once, g.Suggest)
			}
		})
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestProtectedWriteAsksEveryTime: answering "session" approves the one
// write; the next write to the same file asks again, and no grant is left.
func TestProtectedWriteAsksEveryTime(t *testing.T) {
	t.Parallel()
	_, protected := protectedWorkspace(t)
	var runs atomic.Int32
	writer := &funcTool{name: "write_file", run: func(_ context.Context, args json.RawMessage) (string, error) {
		runs.Add(1)
		return "wrote", nil
	}}
	grants := permission.NewGrants("/ws", "/home/u")
	h := newHarness(t, harnessOpts{tools: []tool.Tool{writer},
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Posture: permission.PostureYolo, Interactive: true, Grants: grants, Protected: protected}})
	args := `{"path":"reasonix.toml","content":"[sandbox]\nbash = \"off\"\n"}`
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("write_file", args)}},
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("write_file", args)}},
		providertest.Turn{Text: "ok"},
	)
	h.sess.Run("go")
	var seen []event.Event
	for _, choice := range []string{event.ApproveSession, event.ApproveOnce} {
		ev, evs := collectUntil(h, isApproval)
		seen = append(seen, evs...)
		req := ev.(*event.ApprovalRequested)
		if !req.OnceOnly {
			t.Errorf("approval %+v is not once-only", req)
		}
		h.sess.Approve(&agent.ApprovalResponse{RequestID: req.RequestID, Choice: choice, Rule: "Edit"})
	}
	done, evs := h.wait()
	seen = append(seen, evs...)
	if done.Status != event.StatusOK || runs.Load() != 2 {
		t.Fatalf("done %+v, runs %d", done, runs.Load())
	}
	if n := len(eventsOf[*event.ApprovalRequested](seen)); n != 2 {
		t.Errorf("%d approval requests, want one per write", n)
	}
	if r := grants.Rules(); len(r) != 0 {
		t.Errorf("session grants = %v, want none", r)
	}
}

// TestFailedCheckNeverAllowsHeadless: a permission check that panics asks
// a person under the ask posture; headless, with nobody to ask, that is a
// deny, not the allow an unanswered Ask gets there.
func TestFailedCheckNeverAllowsHeadless(t *testing.T) {
	t.Parallel()
	p, err := permission.NewPolicy("ask", nil, nil, []string{"Read(secrets/**)"}, "/ws", "/home/u")
	must(t, err)
	p.Resolve = func(string) (string, error) { panic("resolver bug") }
	args := `{"path":"docs/a.md"}`
	if g := (agent.Permissions{Policy: &p}).Check("read_file", true, args); g.Decision != permission.Deny {
		t.Errorf("headless: %v %q, want deny", g.Decision, g.Reason)
	}
	if g := (agent.Permissions{Policy: &p, Interactive: true}).Check("read_file", true, args); g.Decision != permission.Ask {
		t.Errorf("interactive: %v %q, want ask", g.Decision, g.Reason)
	}
}
