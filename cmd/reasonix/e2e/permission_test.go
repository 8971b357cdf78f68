package e2e

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

// TestE2EWriteOutsideWorkspaceRefused: a model that writes ../outside.txt
// gets a refusal it can read, and no file appears outside the workspace.
func TestE2EWriteOutsideWorkspaceRefused(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	outside := filepath.Join(filepath.Dir(e.work), "outside.txt")
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"../outside.txt","content":"escaped"}`}}},
		providertest.Turn{Text: "I could not write there."},
	)
	r := e.run("run", "write a file next to the workspace")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatalf("%s exists (err %v): the write escaped the workspace", outside, err)
	}
	res := toolResults(e.srv.Requests()[1])
	if len(res) != 1 || !strings.HasPrefix(res[0].Content, "Error:") || !strings.Contains(res[0].Content, "allow_write") {
		t.Fatalf("refusal result = %+v", res)
	}
}

// TestE2EDenyRuleBlocksBash: a deny rule from the config and one from
// --deny both block bash calls; the model's next turn sees "Blocked", and
// an allowed call beside them still runs.
func TestE2EDenyRuleBlocksBash(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeConfig("\n[permissions]\ndeny = [\"Bash(rm:*)\"]\n\n[sandbox]\nbash = \"off\"\n")
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{
			{ID: "rm", Name: "bash", Arguments: `{"command":"echo hi && rm -rf keep"}`},
			{ID: "push", Name: "bash", Arguments: `{"command":"git push origin main"}`},
			{ID: "ok", Name: "bash", Arguments: `{"command":"echo fine"}`},
		}},
		providertest.Turn{Text: "adapted"},
	)
	if err := os.Mkdir(filepath.Join(e.work, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := e.run("run", "--deny", "Bash(git push:*)", "clean up")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(e.work, "keep")); err != nil {
		t.Fatalf("the denied rm ran: %v", err)
	}
	res := toolResults(e.srv.Requests()[1])
	if len(res) != 3 {
		t.Fatalf("results = %+v", res)
	}
	if !strings.HasPrefix(res[0].Content, "Blocked: blocked by deny rule Bash(rm:*)") {
		t.Errorf("rm result = %q", res[0].Content)
	}
	if !strings.HasPrefix(res[1].Content, "Blocked: blocked by deny rule Bash(git push:*)") {
		t.Errorf("git push result = %q", res[1].Content)
	}
	if !strings.Contains(res[2].Content, "fine") || !strings.Contains(res[2].Content, "exit code: 0") {
		t.Errorf("allowed call result = %q", res[2].Content)
	}
}

// TestE2EJailedBashCannotWriteOutside runs bash under the default
// enforce mode (bubblewrap on Linux): a write outside the workspace fails
// while one inside succeeds.
func TestE2EJailedBashCannotWriteOutside(t *testing.T) {
	t.Parallel()
	switch runtime.GOOS {
	case "linux":
		testenv.NeedBwrap(t)
	case "darwin":
		// sandbox-exec ships with the system.
	default:
		t.Skipf("no bash sandbox backend on %s", runtime.GOOS)
	}
	e := newE2E(t)
	r0 := e.run("doctor", "--offline")
	if !strings.Contains(r0.stdout, "confined by") || r0.code != 0 {
		// Installed is not enough: bwrap may be unable to create
		// namespaces here, which doctor reports.
		testenv.Missing(t, "no working bash sandbox here:\n%s", r0.stdout)
	}
	// Not under /tmp: the jail keeps /tmp writable for builds and tests.
	outsideDir, err := os.MkdirTemp("/var/tmp", "reasonix-outside-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outsideDir) })
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "b", Name: "bash",
			Arguments: `{"command":"echo in > inside.txt; echo out > ` + outsideDir + `/outside.txt; echo done"}`}}},
		providertest.Turn{Text: "ok"},
	)
	r := e.run("run", "write two files")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(e.work, "inside.txt")); err != nil {
		t.Errorf("write inside the workspace failed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outsideDir, "outside.txt")); !os.IsNotExist(err) {
		t.Errorf("jailed bash wrote outside the workspace (err %v)", err)
	}
	res := toolResults(e.srv.Requests()[1])
	if len(res) != 1 || !strings.Contains(res[0].Content, "done") {
		t.Errorf("bash result = %+v", res)
	}
}
