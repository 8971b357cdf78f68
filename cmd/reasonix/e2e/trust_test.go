package e2e

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/provider/providertest"
)

// writeProjectConfig writes the workspace's reasonix.toml.
func (e *e2e) writeProjectConfig(text string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.work, "reasonix.toml"), []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// trustStatus runs `reasonix trust --status` and returns the state it
// printed.
func (e *e2e) trustStatus() string {
	e.t.Helper()
	r := e.run("trust", "--status")
	if r.code != 0 {
		e.t.Fatalf("trust --status:\n%s", r)
	}
	return strings.TrimSpace(r.stdout)
}

// TestE2EProjectCannotLiftDenyRules: `deny = []` in the project's
// reasonix.toml removes none of the user's deny rules, whether the
// workspace is trusted or not.
func TestE2EProjectCannotLiftDenyRules(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeConfig("\n[permissions]\ndeny = [\"Bash(rm:*)\"]\n\n[sandbox]\nbash = \"off\"\n")
	e.writeProjectConfig("[permissions]\ndeny = []\n")
	keep := filepath.Join(e.work, "keep")
	if err := os.Mkdir(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, args := range [][]string{{"run", "clean up"}, {"run", "--trust-project", "clean up"}} {
		e.srv.Push(
			providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "rm", Name: "bash", Arguments: `{"command":"rm -rf keep"}`}}},
			providertest.Turn{Text: "adapted"},
		)
		r := e.run(args...)
		if r.code != 0 {
			t.Fatalf("%v:\n%s", args, r)
		}
		if _, err := os.Stat(keep); err != nil {
			t.Fatalf("%v: the denied rm ran: %v", args, err)
		}
		res := toolResults(e.srv.Requests()[2*i+1])
		if len(res) != 1 || !strings.HasPrefix(res[0].Content, "Blocked: blocked by deny rule Bash(rm:*)") {
			t.Fatalf("%v: rm result = %+v", args, res)
		}
	}
}

// TestE2EProjectAllowNeedsTrust: with the user's writer fallback at deny,
// the project's allow rule lets a command run only while the workspace is
// trusted with its files as they are: untrusted, after an edit, and after
// a revoke, the command is blocked and the run says why in one notice;
// --trust-project honours it for one run without recording anything.
func TestE2EProjectAllowNeedsTrust(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeConfig("\n[permissions]\nmode = \"deny\"\n\n[sandbox]\nbash = \"off\"\n")
	e.writeProjectConfig("[permissions]\nallow = [\"Bash(touch:*)\"]\n")
	made := filepath.Join(e.work, "made.txt")

	// touch runs the model's touch and reports whether the file appeared.
	touch := func(step string, args ...string) (bool, result) {
		t.Helper()
		_ = os.Remove(made)
		e.srv.Push(
			providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "t", Name: "bash", Arguments: `{"command":"touch made.txt"}`}}},
			providertest.Turn{Text: "done"},
		)
		r := e.run(append([]string{"run"}, append(args, "make a file")...)...)
		if r.code != 0 {
			t.Fatalf("%s: run failed:\n%s", step, r)
		}
		_, err := os.Stat(made)
		return err == nil, r
	}
	const notice = `reasonix: notice: `
	wantBlocked := func(step string, args ...string) {
		t.Helper()
		ran, r := touch(step, args...)
		if ran {
			t.Fatalf("%s: the project's allow rule was honoured:\n%s", step, r)
		}
		if strings.Count(r.stderr, notice) != 1 || !strings.Contains(r.stderr, "ignored until you trust this workspace: permissions.allow") ||
			!strings.Contains(r.stderr, `"reasonix trust"`) {
			t.Fatalf("%s: want one notice naming permissions.allow:\n%s", step, r)
		}
	}
	wantRan := func(step string, args ...string) {
		t.Helper()
		ran, r := touch(step, args...)
		if !ran {
			t.Fatalf("%s: the trusted allow rule was not honoured:\n%s", step, r)
		}
		if strings.Contains(r.stderr, notice) {
			t.Fatalf("%s: a notice although nothing was ignored:\n%s", step, r)
		}
	}

	wantBlocked("untrusted")
	if s := e.trustStatus(); s != "untrusted" {
		t.Fatalf("status = %q", s)
	}
	wantRan("--trust-project", "--trust-project")
	if s := e.trustStatus(); s != "untrusted" {
		t.Fatalf("--trust-project recorded trust: status %q", s)
	}

	r := e.run("trust")
	if r.code != 0 || !strings.Contains(r.stdout, "trusted ") || !strings.Contains(r.stdout, "reasonix.toml: permissions.allow") {
		t.Fatalf("trust:\n%s", r)
	}
	if s := e.trustStatus(); s != "trusted" {
		t.Fatalf("status = %q", s)
	}
	wantRan("trusted")

	e.writeProjectConfig("[permissions]\nallow = [\"Bash(touch:*)\"]\n# edited\n")
	if s := e.trustStatus(); s != "changed" {
		t.Fatalf("status after the edit = %q", s)
	}
	wantBlocked("edited")

	if r := e.run("trust"); r.code != 0 {
		t.Fatalf("trust again:\n%s", r)
	}
	wantRan("trusted again")
	r = e.run("trust", "--revoke")
	if r.code != 0 || !strings.Contains(r.stdout, "revoked") {
		t.Fatalf("revoke:\n%s", r)
	}
	wantBlocked("revoked")
	if r := e.run("trust", "--revoke"); r.code != 0 || !strings.Contains(r.stdout, "no trust decision") {
		t.Fatalf("second revoke:\n%s", r)
	}
}

// TestE2EProjectSubagentAskNeedsTrust: `agent.subagent_ask = "allow"` from
// the project is left out of the effective config until the workspace is
// trusted, and `reasonix config show` says so.
func TestE2EProjectSubagentAskNeedsTrust(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeProjectConfig("[agent]\nsubagent_ask = \"allow\"\n")
	r := e.run("config", "show")
	if r.code != 0 || !strings.Contains(r.stdout, `subagent_ask = "parent"  # from default`) ||
		!strings.Contains(r.stderr, "ignored until you trust this workspace: agent.subagent_ask") {
		t.Fatalf("untrusted:\n%s", r)
	}
	if r := e.run("trust"); r.code != 0 || !strings.Contains(r.stdout, "agent.subagent_ask") {
		t.Fatalf("trust:\n%s", r)
	}
	r = e.run("config", "show")
	if r.code != 0 || !strings.Contains(r.stdout, `subagent_ask = "allow"  # from `) || strings.Contains(r.stderr, "notice") {
		t.Fatalf("trusted:\n%s", r)
	}
}

// TestE2ETrustNothingToTrust: trusting a workspace without project files
// says there was nothing to trust, and a damaged store stops every command
// that reads the config with exit 2 and the repair.
func TestE2ETrustNothingToTrust(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	if r := e.run("trust"); r.code != 0 || !strings.Contains(r.stdout, "nothing to trust") {
		t.Fatalf("trust:\n%s", r)
	}
	if err := os.WriteFile(filepath.Join(e.home, "trust.json"), []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"trust"}, {"trust", "--status"}, {"config", "show"}, {"run", "hi"}} {
		if r := e.run(args...); r.code != cmdutil.ExitUsage || !strings.Contains(r.stderr, "trust.json") || !strings.Contains(r.stderr, "delete it") {
			t.Errorf("%v with a damaged store:\n%s", args, r)
		}
	}
}

// TestE2ETUIAsksTrustOnce: the chat asks once, on the plain terminal
// before it takes the screen, whether to trust a workspace whose project
// file would loosen something. Yes is recorded and the next start asks
// nothing; after the file changes it asks again, and a no is recorded too,
// so the start after that asks nothing either.
func TestE2ETUIAsksTrustOnce(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the chat is tested in tmux")
	}
	e := newE2E(t)
	project := filepath.Join(e.work, "reasonix.toml")
	if err := os.WriteFile(project, []byte("[permissions]\nallow = [\"Bash(touch:*)\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const question = "Trust this workspace? [y/N]"
	status := func() string {
		t.Helper()
		r := e.run("trust", "--status")
		if r.code != 0 {
			t.Fatalf("trust --status:\n%s", r)
		}
		return strings.TrimSpace(r.stdout)
	}
	answer := func(reply string) {
		t.Helper()
		m := startTUI(t, e)
		s := m.waitFor("the trust question", func(s string) bool { return strings.Contains(s, question) })
		if !strings.Contains(s, "permissions.allow") {
			t.Errorf("the question does not say what would change:\n%s", s)
		}
		m.send(reply)
		m.waitFor("the chat to start", func(s string) bool { return strings.Contains(s, tuiReady) && strings.Contains(s, tuiIdle) })
		m.quit()
	}
	noQuestion := func() {
		t.Helper()
		m := openTUI(t, e)
		if s := m.scrollback(); strings.Contains(s, question) {
			t.Errorf("asked again:\n%s", s)
		}
		m.quit()
	}

	answer("y")
	if got := status(); got != "trusted" {
		t.Fatalf("after yes: %s", got)
	}
	noQuestion()

	if err := os.WriteFile(project, []byte("[permissions]\nallow = [\"Bash(touch:*)\", \"Bash(ls:*)\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	answer("n")
	if got := status(); got != "declined" {
		t.Fatalf("after no: %s", got)
	}
	noQuestion()
}
