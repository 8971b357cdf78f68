package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"reasonix/actors/event"
	"reasonix/core/journal"
)

// Writers in worktrees. A writer with isolation "worktree" gets a git
// worktree of its own, made from a snapshot of the parent's working tree
// (one per fleet), and its file tools and bash are rooted there; its
// claims no longer keep it from overlapping writers, only the writer cap
// counts it. When it ends, its changes are committed on its branch; a task
// that ended ok is merged into the parent's working tree at once, in the
// order tasks end, since the scheduler handles one end at a time. The
// journal holds the worktree (before the task starts), the result with its
// merge pending, then the merge's outcome, so a resume after a crash
// merges what was committed and not merged, once.

// Worktree is one writer's worktree: its branch, its directory and the
// snapshot it was made from.
type Worktree struct {
	Branch string `json:"branch"`
	Dir    string `json:"dir"`
	Base   string `json:"base"`
}

// Isolator makes, commits and merges the worktrees of worktree writers;
// core/worktree's Manager is the real one.
type Isolator interface {
	// Available reports whether worktrees can be made here (the
	// workspace is in a git repository). It is asked when a fleet needs
	// to know, not before.
	Available() bool
	// Prepare makes the worktree of spec, a task of fleet fleetID, from
	// the fleet's snapshot of the parent's working tree (taken at the
	// fleet's first worktree task). A branch left by an earlier attempt of
	// the task is replaced.
	Prepare(ctx context.Context, fleetID string, spec event.TaskSpec) (Worktree, error)
	// Commit records what the worktree holds on its branch and returns
	// the paths it changed since the snapshot.
	Commit(ctx context.Context, w Worktree) ([]string, error)
	// Merge merges the branch into the parent's working tree. Merged: the
	// worktree and its branch are removed. Otherwise the branch is kept
	// and the parent's files are untouched.
	Merge(ctx context.Context, w Worktree) event.Merge
	// Keep removes the worktree's directory and keeps its branch, for a
	// task that did not end ok; Drop removes both (nothing changed).
	Keep(ctx context.Context, w Worktree) event.Merge
	Drop(ctx context.Context, w Worktree) event.Merge
}

// worktreeTimeout bounds the git work of one task's worktree.
const worktreeTimeout = 2 * time.Minute

// errNoRepo is why a worktree task fails where there is no git repository.
var errNoRepo = errors.New("isolation \"worktree\" needs a git repository, and the workspace is not in one")

// isolate gives the writers of a new fleet that name no isolation the
// configured one; worktrees only where they can be made.
func (f *fleetActor) isolate(specs []event.TaskSpec) {
	for i := range specs {
		s := &specs[i]
		if !s.Writer || s.Isolation != "" {
			continue
		}
		s.Isolation = event.IsolationClaims
		if f.spec.WriterIsolation == event.IsolationWorktree && f.spec.Isolator != nil && f.spec.Isolator.Available() {
			s.Isolation = event.IsolationWorktree
		}
	}
}

// makeWorktree gives a worktree task its worktree before its agent is
// built and journals it.
func (f *fleetActor) makeWorktree(t *runningTask) error {
	if f.spec.Isolator == nil {
		return errNoRepo
	}
	ctx, cancel := context.WithTimeout(context.Background(), worktreeTimeout)
	defer cancel()
	w, err := f.spec.Isolator.Prepare(ctx, t.fleet, t.spec)
	if err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	t.wt, t.spec.Workdir = &w, w.Dir
	if err := f.jot(t.fleet, journal.KindWorktree, t.spec.ID, w); err != nil {
		f.dropWorktree(t)
		return fmt.Errorf("worktree: %w", err)
	}
	return nil
}

// dropWorktree removes the worktree of a task that never started.
func (f *fleetActor) dropWorktree(t *runningTask) {
	if t.wt == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), worktreeTimeout)
	defer cancel()
	f.spec.Isolator.Drop(ctx, *t.wt)
	t.wt = nil
}

// settleWorktree commits a worktree task's changes and merges them (a
// task that ended ok) or keeps them on its branch, journalling the result
// as it goes; it returns the result to deliver, which says what became of
// the changes.
func (f *fleetActor) settleWorktree(t *runningTask, res event.TaskResult) event.TaskResult {
	ctx, cancel := context.WithTimeout(context.Background(), worktreeTimeout)
	defer cancel()
	iso, w := f.spec.Isolator, *t.wt
	t.wt = nil
	changed, err := iso.Commit(ctx, w)
	var m event.Merge
	switch {
	case err != nil:
		m = iso.Keep(ctx, w)
		m.Error = "commit: " + err.Error()
	case res.Status != event.TaskOK:
		m = iso.Keep(ctx, w)
		m.Files = changed
	case len(changed) == 0:
		m = iso.Drop(ctx, w)
	default:
		// The result is journalled before the merge, saying it is
		// pending: a crash from here on leaves a resume to merge it.
		res.Merge = &event.Merge{Status: event.MergePending, Branch: w.Branch, Files: changed}
		if res = f.journalResult(t.fleet, res); res.Status != event.TaskOK {
			m := iso.Keep(ctx, w)
			res.Merge = &m
			return res
		}
		m = iso.Merge(ctx, w)
		_ = f.jot(t.fleet, journal.KindMerge, res.TaskID, m) // a failure ends the fleet (endBroken)
		res.Merge = &m
		res.Text += MergeNote(m)
		return res
	}
	res.Merge = &m
	res.Text += MergeNote(m)
	return f.journalResult(t.fleet, res)
}

// MergeNote is what a task's answer gains to tell the parent what became
// of its worktree's changes ("" when there were none).
func MergeNote(m event.Merge) string {
	files := strings.Join(m.Files, ", ")
	switch {
	case m.Error != "":
		return fmt.Sprintf("\n\n[worktree: not merged (%s); the changes are kept on branch %s]", m.Error, m.Branch)
	case m.Status == event.MergeMerged:
		return "\n\n[worktree: merged into the workspace: " + files + "]"
	case m.Status == event.MergeConflict:
		return fmt.Sprintf("\n\n[worktree: not merged, conflicts in %s; the workspace is as it was and the changes are kept on branch %s]",
			strings.Join(m.Conflicts, ", "), m.Branch)
	case m.Status == event.MergeKept && len(m.Files) > 0:
		return fmt.Sprintf("\n\n[worktree: the task did not end ok; its changes (%s) are kept on branch %s, not merged]", files, m.Branch)
	}
	return ""
}
