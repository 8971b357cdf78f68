package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/cmd/reasonix/internal/fleetcmd"
	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

// funcsFile is a Go file of n functions, f<i> returning "old <i>", each a
// few lines apart so that edits of different functions merge cleanly.
func funcsFile(n int) string {
	var b strings.Builder
	b.WriteString("package funcs\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "\n// f%d is function %d.\nfunc f%d() string {\n\treturn \"old %d\"\n}\n", i, i, i, i)
	}
	return b.String()
}

// gitWork makes e's workspace a git repository holding files, committed.
func gitWork(t testing.TB, e *e2e, files map[string]string) {
	t.Helper()
	testenv.Need(t, "git")
	writeWorkFiles(t, e.work, files)
	gitIn(t, e, "init", "-q", "-b", "main")
	gitIn(t, e, "add", "-A")
	gitIn(t, e, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
}

// gitIn runs git in e's workspace and returns its output.
func gitIn(t testing.TB, e *e2e, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = e.work
	cmd.Env = append(os.Environ(), "HOME="+e.home, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// noWorktreesLeft fails t unless git lists only the main worktree and no
// reasonix branch is left but those named in kept.
func noWorktreesLeft(t *testing.T, e *e2e, kept ...string) {
	t.Helper()
	if n := strings.Count(gitIn(t, e, "worktree", "list", "--porcelain"), "worktree "); n != 1 {
		t.Errorf("git worktree list shows %d worktrees, want only the main one:\n%s", n, gitIn(t, e, "worktree", "list"))
	}
	branches := strings.Fields(gitIn(t, e, "branch", "--list", "reasonix/*", "--format=%(refname:short)"))
	if strings.Join(branches, " ") != strings.Join(kept, " ") {
		t.Errorf("reasonix branches left: %v, want %v", branches, kept)
	}
}

// worktreeFleet is a responder where the parent runs a fleet of n writers
// in worktrees, all claiming funcs.go; writer i reads notes.txt and
// README.md, then edits f<edit(i)> to return "<value(i)>". hold, when set,
// is asked before a writer's first answer: it may hold it back, and when
// it says so the writer never answers.
func worktreeFleet(n int, edit func(i int) (fn int, value string), hold func(i int) (stall bool)) func(providertest.Request) providertest.Turn {
	return func(req providertest.Request) providertest.Turn {
		if !isSubagent(req) {
			if len(toolResults(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet",
					Arguments: fleetArgs(n, func(int) string { return `,"isolation":"worktree","write_paths":["funcs.go"]` })}}}
			}
			return providertest.Turn{Text: "the writers are done"}
		}
		var i int
		fmt.Sscanf(req.FirstUser(), "task %d", &i)
		if len(toolResults(req)) > 0 {
			return providertest.Turn{Text: fmt.Sprintf("edited for task %d", i)}
		}
		if hold != nil && hold(i) {
			return providertest.Turn{Latency: time.Hour, Text: "never"}
		}
		fn, value := edit(i)
		return providertest.Turn{ToolCalls: []providertest.ToolCall{
			toolCall("notes", "read_file", map[string]string{"path": "notes.txt"}),
			toolCall("readme", "read_file", map[string]string{"path": "README.md"}),
			toolCall("edit", "edit_file", map[string]string{"path": "funcs.go",
				"old_string": fmt.Sprintf("return \"old %d\"", fn), "new_string": fmt.Sprintf("return %q", value)}),
		}}
	}
}

// TestE2EWorktreeWritersRunTogether: 8 writers that all claim funcs.go and
// each edit a different function of it run at once in worktrees of their
// own (the fake holds every first answer until all 8 have asked, which
// claims would never allow), each sees the parent's uncommitted and
// untracked changes, and the file ends with all 8 edits, with no worktree
// or branch left behind.
func TestE2EWorktreeWritersRunTogether(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	arrived, all := 0, make(chan struct{})
	var together atomic.Bool
	hold := func(int) bool {
		mu.Lock()
		if arrived++; arrived == 8 {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			together.Store(true)
		case <-time.After(20 * time.Second):
		}
		return false
	}
	e := newE2E(t, providertest.WithResponder(worktreeFleet(8, func(i int) (int, string) { return i, fmt.Sprintf("new %d", i) }, hold)))
	e.writeConfig("\n[agent]\nmax_subagent_concurrency = 8\nmax_parallel_writers = 8\n")
	gitWork(t, e, map[string]string{"funcs.go": funcsFile(8), "README.md": "committed readme\n"})
	writeWorkFiles(t, e.work, map[string]string{"notes.txt": "untracked notes\n", "README.md": "uncommitted readme\n"})
	r := e.run("run", "--output-format", "stream-json", "fan out")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	if out := fleetResult(t, e); !strings.HasPrefix(out, "8 tasks: 8 ok") || !strings.Contains(out, "[worktree: merged into the workspace: funcs.go]") {
		t.Fatalf("fleet result:\n%s", out)
	}
	if !together.Load() {
		t.Error("the 8 writers never had a request in flight at the same time")
	}
	for i := 1; i <= 8; i++ {
		res := subagentResults(t, e, fmt.Sprintf("task %d", i))
		wantResult(t, res, "notes", "untracked notes")
		wantResult(t, res, "readme", "uncommitted readme")
	}
	wantFile(t, e, "funcs.go", strings.NewReplacer(
		`"old 1"`, `"new 1"`, `"old 2"`, `"new 2"`, `"old 3"`, `"new 3"`, `"old 4"`, `"new 4"`,
		`"old 5"`, `"new 5"`, `"old 6"`, `"new 6"`, `"old 7"`, `"new 7"`, `"old 8"`, `"new 8"`).Replace(funcsFile(8)))
	wantFile(t, e, "README.md", "uncommitted readme\n")
	if !strings.Contains(r.stdout, `"merge":{"status":"merged"`) {
		t.Errorf("no task_done event says its merge:\n%.2000s", r.stdout)
	}
	noWorktreesLeft(t, e)
	if st := gitIn(t, e, "status", "--porcelain"); !strings.Contains(st, " M funcs.go") || !strings.Contains(st, "?? notes.txt") {
		t.Errorf("git status after the fleet:\n%s", st)
	}
}

// TestE2EWorktreeConflictKeepsTheBranch: two writers change the same line;
// the first to end is merged, the second's merge conflicts: the parent's
// file keeps the first edit, the result and `worktrees list` name the
// kept branch, which holds the second edit, and `worktrees drop` removes
// it.
func TestE2EWorktreeConflictKeepsTheBranch(t *testing.T) {
	t.Parallel()
	first, once := make(chan struct{}), sync.Once{}
	hold := func(i int) bool {
		if i == 2 {
			select {
			case <-first:
			case <-time.After(20 * time.Second):
			}
		}
		return false
	}
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		turn := worktreeFleet(2, func(i int) (int, string) { return 1, fmt.Sprintf("from task %d", i) }, hold)(req)
		if isSubagent(req) && req.FirstUser() == "task 1" && len(toolResults(req)) > 0 {
			defer once.Do(func() { close(first) })
		}
		return turn
	}))
	gitWork(t, e, map[string]string{"funcs.go": funcsFile(2), "README.md": "readme\n"})
	writeWorkFiles(t, e.work, map[string]string{"notes.txt": "notes\n"})
	r := e.run("run", "fan out")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	out := fleetResult(t, e)
	if !strings.Contains(out, "not merged, conflicts in funcs.go") || !strings.Contains(out, "reasonix/") {
		t.Fatalf("fleet result:\n%s", out)
	}
	wantFile(t, e, "funcs.go", strings.Replace(funcsFile(2), `"old 1"`, `"from task 1"`, 1))
	r = e.run("worktrees", "list", "--json", "--cwd", e.work)
	var kept []struct{ ID, Branch, Dir string }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &kept) != nil || len(kept) != 1 {
		t.Fatalf("worktrees list:\n%s", r)
	}
	if kept[0].Dir != "" {
		t.Errorf("the conflicting task's worktree directory is still there: %s", kept[0].Dir)
	}
	if got := gitIn(t, e, "show", kept[0].Branch+":funcs.go"); !strings.Contains(got, `"from task 2"`) {
		t.Errorf("the kept branch does not hold the second edit:\n%s", got)
	}
	noWorktreesLeft(t, e, kept[0].Branch)
	if r = e.run("worktrees", "merge", kept[0].ID, "--cwd", e.work); r.code != 1 || !strings.Contains(r.stderr, "conflicts in funcs.go") {
		t.Errorf("worktrees merge of a conflicting branch:\n%s", r)
	}
	if r = e.run("worktrees", "drop", kept[0].ID, "--cwd", e.work); r.code != 0 {
		t.Fatalf("worktrees drop:\n%s", r)
	}
	noWorktreesLeft(t, e)
}

// TestE2EWorktreeFleetSurvivesSIGKILL: SIGKILL once 4 of 8 worktree
// writers have ended and merged, then `fleet resume`: the other 4 run
// again in fresh worktrees and merge, so the file holds every edit once,
// and nothing is left behind.
func TestE2EWorktreeFleetSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	var resumed atomic.Bool
	// Writers 5 to 8 never answer before the kill.
	hold := func(i int) bool { return i > 4 && !resumed.Load() }
	e := newE2E(t, providertest.WithResponder(worktreeFleet(8, func(i int) (int, string) { return i, fmt.Sprintf("new %d", i) }, hold)))
	e.writeConfig("\n[agent]\nmax_subagent_concurrency = 8\nmax_parallel_writers = 8\n")
	gitWork(t, e, map[string]string{"funcs.go": funcsFile(8), "README.md": "readme\n"})
	writeWorkFiles(t, e.work, map[string]string{"notes.txt": "notes\n"})
	killAfterTasks(t, e, 4, "fan out")
	r := e.run("fleet", "list", "--json")
	var list []fleetcmd.FleetJSON
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list) != 1 || list[0].Finished != 4 {
		t.Fatalf("fleet list:\n%s", r)
	}
	resumed.Store(true)
	if r = e.run("fleet", "resume", list[0].ID); r.code != 0 || !strings.HasPrefix(r.stdout, "8 tasks: 8 ok") {
		t.Fatalf("fleet resume:\n%s", r)
	}
	b, err := os.ReadFile(filepath.Join(e.work, "funcs.go"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 8; i++ {
		if n := strings.Count(string(b), fmt.Sprintf(`"new %d"`, i)); n != 1 {
			t.Errorf("edit %d is in funcs.go %d times, want once:\n%s", i, n, b)
		}
	}
	if strings.Contains(string(b), `"old `) {
		t.Errorf("funcs.go still holds an unedited function:\n%s", b)
	}
	noWorktreesLeft(t, e)
}

// TestE2EWorktreeFailedTaskKeepsItsWork: a worktree writer that edits and
// then fails is not merged: the workspace is as it was, its answer and
// `worktrees list` name the kept branch, and `worktrees merge` brings the
// edit in and removes the branch.
func TestE2EWorktreeFailedTaskKeepsItsWork(t *testing.T) {
	t.Parallel()
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		switch {
		case !isSubagent(req) && len(toolResults(req)) == 0:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "task",
				Arguments: `{"prompt":"task 1","isolation":"worktree"}`}}}
		case !isSubagent(req):
			return providertest.Turn{Text: "noted"}
		case len(toolResults(req)) == 0:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{toolCall("edit", "edit_file",
				map[string]string{"path": "funcs.go", "old_string": `return "old 1"`, "new_string": `return "kept 1"`})}}
		}
		return providertest.Turn{Status: 400, Body: `{"error":{"message":"bad request","type":"invalid_request_error"}}`}
	}))
	gitWork(t, e, map[string]string{"funcs.go": funcsFile(1)})
	if r := e.run("run", "edit in a worktree"); r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	if out := fleetResult(t, e); !strings.Contains(out, "the task did not end ok; its changes (funcs.go) are kept on branch reasonix/") {
		t.Fatalf("task result:\n%s", out)
	}
	wantFile(t, e, "funcs.go", funcsFile(1))
	r := e.run("worktrees", "list", "--json")
	var kept []struct{ ID, Dir string }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &kept) != nil || len(kept) != 1 || kept[0].Dir != "" {
		t.Fatalf("worktrees list:\n%s", r)
	}
	if r = e.run("worktrees", "merge", kept[0].ID); r.code != 0 || !strings.Contains(r.stdout, "funcs.go") {
		t.Fatalf("worktrees merge:\n%s", r)
	}
	wantFile(t, e, "funcs.go", strings.Replace(funcsFile(1), `"old 1"`, `"kept 1"`, 1))
	noWorktreesLeft(t, e)
}
