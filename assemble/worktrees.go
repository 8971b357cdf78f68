package assemble

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/fleet/isolate"
	"reasonix/actors/fleet/resume"
	"reasonix/core/atomicfile"
	"reasonix/core/config"
	"reasonix/core/journal"
	"reasonix/core/sandbox"
	"reasonix/core/worktree"
)

// worktrees is the session's isolate.Isolator on core/worktree: a
// writer's worktree lives under <git dir>/reasonix/worktrees/<session>/<task>
// on branch reasonix/<session>/<task>, made from one snapshot of the
// parent's working tree per fleet. A merge writes only paths the parent's
// own file tools could write without asking: nothing in the home, nothing
// a deny rule forbids, no trust-bearing file (those a person merges with
// reasonix worktrees merge).
//
// The repository is looked for on first use, not when the session starts:
// a session that never isolates a writer never runs git.
type worktrees struct {
	cwd, session string
	sb           *sandbox.Sandbox

	once    sync.Once
	repo    *worktree.Repo
	findErr error

	mu    sync.Mutex
	snaps map[string]string // fleet id → snapshot commit
}

// worktreeFind bounds the look for the repository.
const worktreeFind = 10 * time.Second

func newWorktrees(cwd, session string, sb *sandbox.Sandbox) *worktrees {
	return &worktrees{cwd: cwd, session: session, sb: sb, snaps: map[string]string{}}
}

// find looks for the repository once.
func (w *worktrees) find() error {
	w.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), worktreeFind)
		defer cancel()
		w.repo, w.findErr = worktree.Find(ctx, w.cwd)
	})
	return w.findErr
}

// Available reports whether the workspace is in a git repository.
func (w *worktrees) Available() bool { return w.find() == nil }

// BranchPrefix starts the name of every branch a worktree writer gets.
const BranchPrefix = "reasonix/"

// TaskBranch is the branch of task id of session.
func TaskBranch(session, id string) string { return BranchPrefix + session + "/" + id }

func (w *worktrees) Prepare(ctx context.Context, fleetID string, spec event.TaskSpec) (isolate.Worktree, error) {
	snap, branch, err := w.fresh(ctx, fleetID, spec.ID)
	if err != nil {
		return isolate.Worktree{}, err
	}
	dir := filepath.Join(w.repo.GitDir, "reasonix", "worktrees", w.session, spec.ID)
	t, err := w.repo.Add(ctx, dir, branch, snap)
	if err != nil {
		return isolate.Worktree{}, err
	}
	return isolate.Worktree{Branch: branch, Dir: t.Dir, Base: snap}, nil
}

// fresh is where task id of fleet fleetID starts: the fleet's snapshot and
// the task's branch, with whatever an earlier attempt of the task left
// there removed first.
func (w *worktrees) fresh(ctx context.Context, fleetID, id string) (snap, branch string, err error) {
	if err := w.find(); err != nil {
		return "", "", err
	}
	if snap, err = w.snapshot(ctx, fleetID); err != nil {
		return "", "", err
	}
	branch = TaskBranch(w.session, id)
	if old, err := w.repo.Open(ctx, branch); err == nil {
		if err := w.repo.Remove(ctx, old, true); err != nil {
			return "", "", err
		}
	}
	return snap, branch, nil
}

// snapshot is the fleet's snapshot of the working tree, taken on first
// use; concurrent callers share one.
func (w *worktrees) snapshot(ctx context.Context, fleetID string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if snap, ok := w.snaps[fleetID]; ok {
		return snap, nil
	}
	snap, err := w.repo.Snapshot(ctx, "refs/reasonix/snapshots/"+w.session+"/"+fleetID)
	if err == nil {
		w.snaps[fleetID] = snap
	}
	return snap, err
}

// Import makes a worker's patch the task's branch here, on the fleet's
// snapshot. A patch that does not apply is kept under <git
// dir>/reasonix/patches/<session>/<task>.patch, which the error names.
func (w *worktrees) Import(ctx context.Context, fleetID string, spec event.TaskSpec, ch event.Changes) (isolate.Worktree, error) {
	snap, branch, err := w.fresh(ctx, fleetID, spec.ID)
	if err != nil {
		return isolate.Worktree{}, err
	}
	if _, err := w.repo.ApplyPatch(ctx, snap, branch, ch.Patch); err != nil {
		path := filepath.Join(w.repo.GitDir, "reasonix", "patches", w.session, spec.ID+".patch")
		if werr := os.MkdirAll(filepath.Dir(path), 0o755); werr == nil {
			if werr = atomicfile.Write(path, ch.Patch, 0o600); werr == nil {
				err = fmt.Errorf("%w; the changes are kept in %s", err, path)
			}
		}
		return isolate.Worktree{}, err
	}
	return isolate.Worktree{Branch: branch, Base: snap}, nil
}

// Export commits a worktree's changes on a worker and returns them as a
// patch from its snapshot, then removes the worktree and its branch.
func (w *worktrees) Export(ctx context.Context, wt isolate.Worktree) event.Changes {
	if err := w.find(); err != nil {
		return event.Changes{Error: err.Error()}
	}
	t, err := w.repo.Open(ctx, wt.Branch)
	if err != nil {
		return event.Changes{Error: err.Error()}
	}
	defer func() { _ = w.repo.Remove(ctx, t, true) }()
	commit, files, err := w.repo.Commit(ctx, t, "reasonix: "+strings.TrimPrefix(wt.Branch, BranchPrefix))
	if err != nil {
		return event.Changes{Error: err.Error()}
	}
	if len(files) == 0 {
		return event.Changes{}
	}
	patch, err := w.repo.Patch(ctx, t.Base, commit)
	if err != nil {
		return event.Changes{Files: files, Error: err.Error()}
	}
	return event.Changes{Patch: patch, Files: files}
}

func (w *worktrees) Commit(ctx context.Context, wt isolate.Worktree) ([]string, error) {
	if err := w.find(); err != nil {
		return nil, err
	}
	t, err := w.repo.Open(ctx, wt.Branch)
	if err != nil {
		return nil, err
	}
	if t.Dir == "" {
		return nil, fmt.Errorf("the worktree of %s is gone", wt.Branch)
	}
	_, changed, err := w.repo.Commit(ctx, t, "reasonix: "+strings.TrimPrefix(wt.Branch, BranchPrefix))
	return changed, err
}

func (w *worktrees) Merge(ctx context.Context, wt isolate.Worktree) event.Merge {
	if err := w.find(); err != nil {
		return event.Merge{Status: event.MergeKept, Branch: wt.Branch, Error: err.Error()}
	}
	return mergeBranch(ctx, w.repo, wt.Branch, w.mergeCheck)
}

func (w *worktrees) Keep(ctx context.Context, wt isolate.Worktree) event.Merge {
	m := event.Merge{Status: event.MergeKept, Branch: wt.Branch}
	if err := w.find(); err != nil {
		m.Error = err.Error()
		return m
	}
	if t, err := w.repo.Open(ctx, wt.Branch); err == nil && t.Dir != "" {
		if err := w.repo.Remove(ctx, t, false); err != nil {
			m.Error = err.Error()
		}
	}
	return m
}

func (w *worktrees) Drop(ctx context.Context, wt isolate.Worktree) event.Merge {
	m := event.Merge{Status: event.MergeNone}
	if err := w.find(); err != nil {
		m.Error = err.Error()
		return m
	}
	if t, err := w.repo.Open(ctx, wt.Branch); err == nil {
		if err := w.repo.Remove(ctx, t, true); err != nil {
			m.Error = err.Error()
		}
	}
	return m
}

// Resume is isolate.Isolator's: what a stopped scheduler left pending is
// merged as `fleet resume` would (settlePending).
func (w *worktrees) Resume(ctx context.Context, fleetID string, res event.TaskResult) event.Merge {
	if err := w.find(); err != nil {
		return event.Merge{Status: event.MergeKept, Branch: res.Merge.Branch, Error: err.Error()}
	}
	return settlePending(ctx, w.repo, w.mergeCheck, w.session, fleetID, res)
}

// mergeCheck refuses a path the parent's file tools could not write, or
// only after asking a person.
func (w *worktrees) mergeCheck(rel string) error {
	abs := filepath.Join(w.repo.Root, filepath.FromSlash(rel))
	if _, err := w.sb.WritePath(abs); err != nil {
		return err
	}
	if p, protected := w.sb.Protected(abs); protected {
		return fmt.Errorf("%s is trust-bearing: merge it yourself (reasonix worktrees merge)", p)
	}
	return nil
}

// MergeBranch merges branch (a worktree writer's, made by the isolator)
// into repo's working tree against the snapshot it was made from, with
// check asked about every path (nil: none). Merged: the worktree and the
// branch are removed. A conflict or a refused path leaves the working tree
// as it was and keeps the branch; the worktree directory is removed.
func MergeBranch(ctx context.Context, repo *worktree.Repo, branch string, check func(string) error) event.Merge {
	m := mergeBranch(ctx, repo, branch, check)
	// Merged, nothing is left; otherwise the branch keeps the changes and
	// the directory goes, so no worktree outlives its task.
	t, err := repo.Open(ctx, branch)
	if err == nil && (t.Dir != "" || m.Status == event.MergeMerged) {
		if err := repo.Remove(ctx, t, m.Status == event.MergeMerged); err != nil && m.Error == "" {
			m.Error = "the worktree was not removed: " + err.Error()
		}
	}
	return m
}

// mergeBranch is MergeBranch without the removal.
func mergeBranch(ctx context.Context, repo *worktree.Repo, branch string, check func(string) error) event.Merge {
	m := event.Merge{Branch: branch}
	t, err := repo.Open(ctx, branch)
	if err == nil && t.Base == "" {
		err = errors.New("its snapshot is not recorded")
	}
	var head string
	if err == nil {
		head, err = branchHead(ctx, repo, branch)
	}
	var res worktree.MergeResult
	if err == nil {
		res, err = repo.Merge(ctx, t.Base, head, worktree.MergeOptions{Check: check})
	}
	switch {
	case err != nil:
		m.Status, m.Error = event.MergeKept, err.Error()
	case len(res.Conflicts) > 0:
		m.Status, m.Conflicts = event.MergeConflict, res.Conflicts
	default:
		m.Status, m.Files = event.MergeMerged, res.Files
	}
	return m
}

// branchHead is the commit branch points at.
func branchHead(ctx context.Context, repo *worktree.Repo, branch string) (string, error) {
	kept, err := repo.List(ctx, branch)
	if err != nil {
		return "", err
	}
	for _, k := range kept {
		if k.Branch == branch {
			return k.Head, nil
		}
	}
	return "", fmt.Errorf("no branch %s", branch)
}

// SettleWorktrees finishes, for a fleet resumed from its journal (key),
// the worktree work a crash cut short: a task whose result was journalled
// with its merge pending and no merge recorded is merged now, once, and
// the merge journalled (done gets the outcome); a task the resume failed
// as interrupted keeps its branch and loses its worktree directory. It
// returns a line for each, to print.
func SettleWorktrees(ctx context.Context, cfg *config.Config, cwd string, j fleet.FleetJournal, rf *resume.Fleet) []string {
	var failed, settled []string
	for id, res := range rf.Submit.Done {
		switch {
		case res.Merge == nil:
		case rf.Replayed.Merges[id] != nil:
			settled = append(settled, id)
		case res.Merge.Status == event.MergeKept:
			failed = append(failed, id)
		}
	}
	for _, id := range rf.Failed {
		if rf.Replayed.Worktrees[id] != nil {
			failed = append(failed, id)
		}
	}
	sort.Strings(failed)
	pending := rf.PendingMerges()
	if len(pending)+len(failed)+len(settled) == 0 {
		return nil
	}
	repo, err := worktree.Find(ctx, cwd)
	if err != nil {
		return []string{fmt.Sprintf("worktree merges of fleet %s left pending: %v", rf.Submit.Key, err)}
	}
	check := func(string) error { return errors.New("no sandbox to check it against") }
	if sb, err := mergeSandbox(cfg, cwd); err == nil {
		w := &worktrees{repo: repo, sb: sb}
		check = w.mergeCheck
	}
	var notes []string
	session, _, _ := strings.Cut(rf.Submit.Key, "/")
	for _, id := range pending {
		res := rf.Submit.Done[id]
		m := settlePending(ctx, repo, check, session, rf.Submit.FleetID, res)
		b, _ := json.Marshal(m)
		if _, err := j.Append(ctx, journal.Record{Fleet: rf.Submit.Key, Kind: journal.KindMerge, Task: id, At: time.Now(), Data: b}); err != nil {
			notes = append(notes, fmt.Sprintf("task %s: merge not journalled: %v", id, err))
		}
		res.Merge, res.Text, res.Changes = &m, res.Text+isolate.MergeNote(m), nil
		rf.Submit.Done[id] = res
		notes = append(notes, fmt.Sprintf("task %s: the merge a crash cut short: %s", id, m.Status))
	}
	for _, id := range failed {
		var wt isolate.Worktree
		if json.Unmarshal(rf.Replayed.Worktrees[id], &wt) != nil {
			continue
		}
		if t, err := repo.Open(ctx, wt.Branch); err == nil && t.Dir != "" {
			// Its work is kept on the branch, committed first.
			_, _, _ = repo.Commit(ctx, t, "reasonix: "+strings.TrimPrefix(wt.Branch, BranchPrefix))
			_ = repo.Remove(ctx, t, false)
		}
		notes = append(notes, fmt.Sprintf("task %s: its changes are kept on branch %s", id, wt.Branch))
	}
	return append(notes, removeLeftovers(ctx, repo, rf, settled)...)
}

// settlePending merges the changes of res, a result of fleet fleetID in
// session journalled with its merge pending whose merge a stop cut off
// (see isolate.Isolator.Resume).
func settlePending(ctx context.Context, repo *worktree.Repo, check func(string) error, session, fleetID string, res event.TaskResult) event.Merge {
	branch := res.Merge.Branch
	if branch == "" {
		branch = TaskBranch(session, res.TaskID)
	}
	t, err := repo.Open(ctx, branch)
	if err != nil && res.Changes != nil && len(res.Changes.Patch) > 0 {
		// A worker's changes, journalled with the result: they become the
		// branch now, on the fleet's snapshot.
		onto := "refs/reasonix/snapshots/" + session + "/" + fleetID
		if _, err := repo.ApplyPatch(ctx, onto, branch, res.Changes.Patch); err != nil {
			return event.Merge{Status: event.MergeConflict, Files: res.Changes.Files, Error: err.Error()}
		}
		t, err = repo.Open(ctx, branch)
	}
	if err != nil {
		// The branch goes only once merged: the merge happened, its record
		// did not.
		return event.Merge{Status: event.MergeMerged, Branch: branch}
	}
	if t.Dir != "" {
		// Cut off before its commit: what the worktree holds is the task's
		// work.
		if _, _, err := repo.Commit(ctx, t, "reasonix: "+strings.TrimPrefix(branch, BranchPrefix)); err != nil {
			return event.Merge{Status: event.MergeKept, Branch: branch, Error: "commit: " + err.Error()}
		}
	}
	return MergeBranch(ctx, repo, branch, check)
}

// removeLeftovers removes what the settled tasks (their merge journalled)
// left when the process died before their worktree was removed: the
// worktree and the branch of one merged or unchanged, the directory of
// one whose branch is kept.
func removeLeftovers(ctx context.Context, repo *worktree.Repo, rf *resume.Fleet, settled []string) []string {
	sort.Strings(settled)
	var notes []string
	for _, id := range settled {
		var wt isolate.Worktree
		var m event.Merge
		if json.Unmarshal(rf.Replayed.Worktrees[id], &wt) != nil || json.Unmarshal(rf.Replayed.Merges[id], &m) != nil {
			continue
		}
		t, err := repo.Open(ctx, wt.Branch)
		if err != nil {
			continue // nothing left
		}
		gone := m.Status == event.MergeMerged || m.Status == event.MergeNone
		if t.Dir == "" && !gone {
			continue // the branch kept, as it should be
		}
		if err := repo.Remove(ctx, t, gone); err != nil {
			notes = append(notes, fmt.Sprintf("task %s: its worktree was not removed: %v", id, err))
			continue
		}
		notes = append(notes, fmt.Sprintf("task %s: removed the worktree it left", id))
	}
	return notes
}

// mergeSandbox is the workspace's sandbox with the permission deny rules,
// which a merge outside a session checks paths against.
func mergeSandbox(cfg *config.Config, cwd string) (*sandbox.Sandbox, error) {
	perms, err := buildPermissions(cfg, cwd, "", nil, false)
	if err != nil {
		return nil, err
	}
	return newSandbox(cfg, cwd, perms.Policy)
}
