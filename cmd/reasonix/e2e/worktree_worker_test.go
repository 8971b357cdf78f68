//go:build linux

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
)

// gitAt runs git in dir and returns its output.
func gitAt(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// TestE2EWorktreeWriterOnAWorker: two worktree writers placed on a worker
// (the parent runs nothing itself) each edit a function of funcs.go in a
// worktree there; their changes come back as patches and are merged into
// the parent's working tree, and nothing of them stays on the worker: its
// checkout is as it was, with no worktree or branch left, and neither is
// there any on the parent's side.
func TestE2EWorktreeWriterOnAWorker(t *testing.T) {
	t.Parallel()
	r := newRig(t, map[string]string{"funcs.go": funcsFile(2), "README.md": "readme\n"},
		providertest.WithResponder(worktreeFleet(2, func(i int) (int, string) { return i, fmt.Sprintf("new %d", i) }, nil)))
	gitWork(t, r.e, nil)
	writeWorkFiles(t, r.e.work, map[string]string{"notes.txt": "notes\n"})
	w := r.startWorker("w1", 2, workerToken)
	r.writeParentConfig("max_subagent_concurrency = 2\nmax_parallel_writers = 2", "run_local = false", workerEntry{name: "w1", capacity: 2})
	parent := r.startParent("run", "--output-format", "stream-json", "fan out")
	if _, code := parent.waitExit(t); code != 0 {
		t.Fatalf("parent exit %d\n--- stderr\n%s\n--- stdout (tail)\n%s", code, parent.stderr, tail(parent.stdout.String(), 4000))
	}
	if n := startedOn(parent.stdout.String(), "w1"); n != 2 {
		t.Errorf("%d tasks started on w1, want both", n)
	}
	if out := parentResult(t, r.e.srv, "fan"); !strings.HasPrefix(out, "2 tasks: 2 ok") || strings.Count(out, "[worktree: merged into the workspace: funcs.go]") != 2 {
		t.Fatalf("fleet result:\n%s", tail(out, 3000))
	}
	want := strings.NewReplacer(`"old 1"`, `"new 1"`, `"old 2"`, `"new 2"`).Replace(funcsFile(2))
	wantFile(t, r.e, "funcs.go", want)
	if b, _ := os.ReadFile(filepath.Join(w.checkout, "funcs.go")); string(b) != funcsFile(2) {
		t.Errorf("the worker's checkout changed:\n%s", b)
	}
	if n := strings.Count(gitAt(t, w.checkout, "worktree", "list", "--porcelain"), "worktree "); n != 1 {
		t.Errorf("the worker keeps %d worktrees:\n%s", n, gitAt(t, w.checkout, "worktree", "list"))
	}
	if b := strings.TrimSpace(gitAt(t, w.checkout, "branch", "--list", "reasonix/*")); b != "" {
		t.Errorf("the worker keeps branches: %s", b)
	}
	noWorktreesLeft(t, r.e)
	finish(t, r, "w1")
}
