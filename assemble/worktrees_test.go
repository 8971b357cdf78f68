package assemble

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/actors/event"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/actors/fleet/isolate"
	"reasonix/actors/fleet/resume"
	"reasonix/core/journal"
	"reasonix/core/testenv"
	"reasonix/scheduler"
)

// TestSettleWorktreesMergesAPendingMergeOnce: a worktree task whose result
// was journalled with its merge pending (the process died before the
// merge) is merged by the resume and its merge journalled; a second
// resume, which finds the merge record, merges nothing again; a merge
// that would write a trust-bearing file is refused and kept.
func TestSettleWorktreesMergesAPendingMergeOnce(t *testing.T) {
	t.Parallel()
	testenv.Need(t, "git")
	cfg, cwd := buildConfig(t, "http://127.0.0.1:1", "")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = cwd
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(rel, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(cwd, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "one\n")
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
	sb, err := NewSandbox(cfg, cwd)
	if err != nil {
		t.Fatal(err)
	}
	iso := newWorktrees(cwd, "s1", sb)
	ctx := context.Background()
	made := map[string]isolate.Worktree{}
	for id, edit := range map[string][2]string{"f1.1": {"a.txt", "two\n"}, "f1.2": {"reasonix.toml", "[agent]\n"}, "f1.3": {"b.txt", "new\n"}} {
		w, err := iso.Prepare(ctx, "f1", event.TaskSpec{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.Dir, edit[0]), []byte(edit[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		made[id] = w
		if id == "f1.3" {
			continue // cut off before its commit
		}
		if _, err := iso.Commit(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	// f1.4 ran on a worker: its changes came back as a patch, journalled
	// with its result, and no branch of it is here.
	w4, err := iso.Prepare(ctx, "f1", event.TaskSpec{ID: "f1.4"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w4.Dir, "c.txt"), []byte("from a worker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	remote := iso.Export(ctx, w4)
	if len(remote.Patch) == 0 || remote.Error != "" {
		t.Fatalf("export: %+v", remote)
	}
	j, err := journal.OpenPath(ctx, filepath.Join(t.TempDir(), "fleets.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	resumed := func(merges map[string]json.RawMessage) *resume.Fleet {
		done := map[string]event.TaskResult{}
		for id, w := range made {
			done[id] = event.TaskResult{TaskID: id, Status: event.TaskOK, Text: "ok",
				Merge: &event.Merge{Status: event.MergePending, Branch: w.Branch}}
		}
		done["f1.4"] = event.TaskResult{TaskID: "f1.4", Status: event.TaskOK, Text: "ok",
			Merge: &event.Merge{Status: event.MergePending}, Changes: &remote}
		return &resume.Fleet{Submit: &fleetmsg.SubmitFleet{Key: "s1/f1-1", FleetID: "f1", Done: done},
			Replayed: &scheduler.Replayed{Merges: merges, Worktrees: map[string]json.RawMessage{}}}
	}
	rf := resumed(map[string]json.RawMessage{})
	notes := SettleWorktrees(ctx, cfg, cwd, j, rf)
	if b, _ := os.ReadFile(filepath.Join(cwd, "a.txt")); string(b) != "two\n" {
		t.Fatalf("a.txt = %q after the resume, want the pending merge; notes %q", b, notes)
	}
	if m := rf.Submit.Done["f1.1"].Merge; m.Status != event.MergeMerged || !strings.Contains(rf.Submit.Done["f1.1"].Text, "merged into the workspace") {
		t.Errorf("f1.1 after the resume: %+v %q", m, rf.Submit.Done["f1.1"].Text)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "b.txt")); string(b) != "new\n" {
		t.Errorf("b.txt = %q: the work of a task cut off before its commit was not merged", b)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "c.txt")); string(b) != "from a worker\n" {
		t.Errorf("c.txt = %q: a worker's journalled patch was not merged", b)
	}
	if m := rf.Submit.Done["f1.2"].Merge; m.Status != event.MergeConflict || len(m.Conflicts) != 1 {
		t.Errorf("a merge writing reasonix.toml: %+v", m)
	}
	if _, err := os.Stat(filepath.Join(cwd, "reasonix.toml")); !os.IsNotExist(err) {
		t.Errorf("the merge wrote a trust-bearing file: %v", err)
	}
	recs, err := j.Records(ctx, "s1/f1-1")
	if err != nil {
		t.Fatal(err)
	}
	merges := map[string]json.RawMessage{}
	for _, r := range recs {
		if r.Kind == journal.KindMerge {
			merges[r.Task] = r.Data
		}
	}
	if len(merges) != 4 {
		t.Fatalf("journalled merges: %v", merges)
	}
	// The second resume finds both merges journalled.
	write("a.txt", "three\n")
	if notes := SettleWorktrees(ctx, cfg, cwd, j, resumed(merges)); len(notes) != 0 {
		t.Errorf("a second resume settled again: %q", notes)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "a.txt")); string(b) != "three\n" {
		t.Errorf("a.txt = %q after the second resume", b)
	}
}

// TestIsolatorResumeMergesOnce: the isolator's Resume, which a scheduler
// started again in the same process asks to settle a merge its
// predecessor left pending, merges a branch still there into the
// workspace and removes it; asked again for the same result (the branch
// gone: merged), it writes nothing.
func TestIsolatorResumeMergesOnce(t *testing.T) {
	t.Parallel()
	testenv.Need(t, "git")
	cfg, cwd := buildConfig(t, "http://127.0.0.1:1", "")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = cwd
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	sb, err := NewSandbox(cfg, cwd)
	if err != nil {
		t.Fatal(err)
	}
	iso := newWorktrees(cwd, "s1", sb)
	ctx := context.Background()
	w, err := iso.Prepare(ctx, "f1", event.TaskSpec{ID: "f1.1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.Dir, "a.txt"), []byte("from the task\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := event.TaskResult{TaskID: "f1.1", Status: event.TaskOK, Merge: &event.Merge{Status: event.MergePending, Branch: w.Branch}}
	if m := iso.Resume(ctx, "f1", res); m.Status != event.MergeMerged || len(m.Files) != 1 {
		t.Fatalf("first resume: %+v", m)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "a.txt")); string(b) != "from the task\n" {
		t.Fatalf("a.txt = %q after the resume", b)
	}
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("the parent's since\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m := iso.Resume(ctx, "f1", res); m.Status != event.MergeMerged || len(m.Files) != 0 {
		t.Errorf("second resume: %+v", m)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "a.txt")); string(b) != "the parent's since\n" {
		t.Errorf("a.txt = %q: the second resume merged again", b)
	}
	if kept, err := iso.repo.List(ctx, BranchPrefix); err != nil || len(kept) != 0 {
		t.Errorf("worktrees left: %+v %v", kept, err)
	}
}
