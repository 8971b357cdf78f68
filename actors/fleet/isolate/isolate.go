// Package isolate is what the scheduler needs of writers in git
// worktrees: the Isolator that makes, commits and merges a writer's
// worktree (assemble's is the real one, on core/worktree), and the Queue
// that runs that git work off the scheduler's mailbox, since checking out a
// large tree or merging into it takes long enough to hold every other
// message of the fleet up.
package isolate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/core/panics"
)

// Worktree is one writer's worktree: its branch, its directory and the
// snapshot it was made from.
type Worktree struct {
	Branch string `json:"branch"`
	Dir    string `json:"dir"`
	Base   string `json:"base"`
}

// Isolator makes, commits and merges the worktrees of worktree writers;
// assemble's, on core/worktree, is the real one.
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
	// Merge merges the branch into the parent's working tree; unless it
	// is merged the parent's files are untouched. It removes nothing.
	Merge(ctx context.Context, w Worktree) event.Merge
	// Keep removes the worktree's directory and keeps its branch (a task
	// not merged); Drop removes both (merged, or nothing changed).
	Keep(ctx context.Context, w Worktree) event.Merge
	Drop(ctx context.Context, w Worktree) event.Merge
	// Export, on a worker, commits the worktree's changes and returns
	// them as a patch from its snapshot (event.Changes), then removes the
	// worktree and its branch: the changes go to the scheduler.
	Export(ctx context.Context, w Worktree) event.Changes
	// Import, on the scheduler's side, applies a worker's patch to the
	// fleet's snapshot as the task's branch (a worktree without a
	// directory), which Merge then merges. A patch that does not apply is
	// an error, and the patch is kept where the error says.
	Import(ctx context.Context, fleetID string, spec event.TaskSpec, ch event.Changes) (Worktree, error)
	// Resume merges the changes of res, a result of fleet fleetID that a
	// scheduler which then stopped journalled with its merge pending: its
	// branch (committed first when its worktree was cut off before its
	// commit) or the worker's patch journalled with it. A branch already
	// gone was merged. It removes what the merge leaves behind.
	Resume(ctx context.Context, fleetID string, res event.TaskResult) event.Merge
}

// ErrNoRepo is why a worktree task fails where there is no git repository.
var ErrNoRepo = errors.New("isolation \"worktree\" needs a git repository, and the workspace is not in one")

// Default gives the writers in specs that name no isolation the
// configured one: worktree only when configured so and iso can make
// worktrees here, claims otherwise.
func Default(specs []event.TaskSpec, configured string, iso Isolator) {
	worktree := configured == event.IsolationWorktree && iso != nil
	checked := false
	for i := range specs {
		s := &specs[i]
		if !s.Writer || s.Isolation != "" {
			continue
		}
		if worktree && !checked {
			worktree, checked = iso.Available(), true
		}
		s.Isolation = event.IsolationClaims
		if worktree {
			s.Isolation = event.IsolationWorktree
		}
	}
}

// Timeout bounds the git work of one step of one task's worktree.
const Timeout = 2 * time.Minute

// queueLen bounds the git jobs waiting: at most one per writer slot and
// one per worktree dropped, far below it.
const queueLen = 256

// Queue runs one scheduler's git work: worktrees are made as soon as they
// are asked for, side by side, and so are commits; merges run one at a
// time, in the order Settle was called, which is the order tasks ended;
// removals run beside everything. Every goroutine is the System's, so
// its Shutdown waits for them. Its methods are for the scheduler's
// mailbox only (not safe for concurrent use); done functions run on the
// Queue's goroutines.
type Queue struct {
	sys  *kernel.System
	iso  Isolator
	log  *slog.Logger
	jobs chan func()
	shut bool
}

// NewQueue returns the queue of git work on iso.
func NewQueue(sys *kernel.System, iso Isolator, log *slog.Logger) *Queue {
	return &Queue{sys: sys, iso: iso, log: log}
}

// Make makes the worktree of spec, a task of fleet fleetID, and calls done
// with it (or why not) exactly once.
func (q *Queue) Make(fleetID string, spec event.TaskSpec, done func(Worktree, error)) {
	iso := q.iso
	q.sys.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		defer cancel()
		done(iso.Prepare(ctx, fleetID, spec))
	}, func(reason any, _ []byte) { done(Worktree{}, fmt.Errorf("panic: %v", reason)) })
}

// Settle commits w's changes at once and then, in its turn among the
// merges, merges them (when merge is set and there are any) or keeps them
// on the branch; done gets the outcome exactly once, before the worktree
// is removed (a merged one with its branch).
func (q *Queue) Settle(w Worktree, merge bool, done func(event.Merge)) {
	iso := q.iso
	type commitOut struct {
		changed []string
		err     error
	}
	committed := make(chan commitOut, 1)
	q.sys.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		defer cancel()
		changed, err := iso.Commit(ctx, w)
		committed <- commitOut{changed, err}
	}, func(reason any, _ []byte) { committed <- commitOut{err: fmt.Errorf("panic: %v", reason)} })
	q.serial(func() {
		once := false
		defer panics.Recover(func(err error) {
			if !once {
				done(event.Merge{Status: event.MergeKept, Branch: w.Branch, Error: err.Error()})
			}
		})
		out := <-committed
		m := event.Merge{Status: event.MergeKept, Branch: w.Branch, Files: out.changed}
		switch {
		case out.err != nil:
			m.Error = "commit: " + out.err.Error()
		case !merge:
		case len(out.changed) == 0:
			m = event.Merge{Status: event.MergeNone}
		default:
			ctx, cancel := context.WithTimeout(context.Background(), Timeout)
			m = iso.Merge(ctx, w)
			cancel()
		}
		once = true
		done(m)
		gone := m.Status == event.MergeMerged || m.Status == event.MergeNone
		q.sys.Go(func() { q.remove(w, gone) }, nil)
	})
}

// SettleImported is Settle for a task that ran on a worker: in its turn
// among the merges, its patch becomes its branch here (Import) and is
// merged (when merge is set) or kept there.
func (q *Queue) SettleImported(fleetID string, spec event.TaskSpec, ch event.Changes, merge bool, done func(event.Merge)) {
	iso := q.iso
	q.serial(func() {
		once := false
		defer panics.Recover(func(err error) {
			if !once {
				done(event.Merge{Status: event.MergeKept, Error: err.Error()})
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		defer cancel()
		m := event.Merge{Status: event.MergeNone}
		var w Worktree
		var err error
		switch {
		case ch.Error != "":
			m = event.Merge{Status: event.MergeKept, Error: "the worker sent no changes: " + ch.Error}
		case len(ch.Patch) == 0:
		default:
			if w, err = iso.Import(ctx, fleetID, spec, ch); err != nil {
				m = event.Merge{Status: event.MergeConflict, Files: ch.Files, Error: err.Error()}
				break
			}
			m = event.Merge{Status: event.MergeKept, Branch: w.Branch, Files: ch.Files}
			if merge {
				m = iso.Merge(ctx, w)
			}
		}
		once = true
		done(m)
		if m.Status == event.MergeMerged {
			q.sys.Go(func() { q.remove(w, true) }, nil)
		}
	})
}

// Resume settles, in its turn among the merges, a result journalled with
// its merge pending by a scheduler that stopped before the merge (see
// Isolator.Resume); done gets the outcome exactly once.
func (q *Queue) Resume(fleetID string, res event.TaskResult, done func(event.Merge)) {
	iso := q.iso
	q.serial(func() {
		once := false
		defer panics.Recover(func(err error) {
			if !once {
				done(event.Merge{Status: event.MergeKept, Branch: res.Merge.Branch, Error: err.Error()})
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		defer cancel()
		m := iso.Resume(ctx, fleetID, res)
		once = true
		done(m)
	})
}

// Drop removes a worktree whose task never ran, branch and all.
func (q *Queue) Drop(w Worktree) {
	if !q.shut {
		q.sys.Go(func() { q.remove(w, true) }, nil)
	}
}

// remove removes w: its branch too when gone, else only its directory.
func (q *Queue) remove(w Worktree, gone bool) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	r := q.iso.Keep
	if gone {
		r = q.iso.Drop
	}
	if m := r(ctx, w); m.Error != "" {
		q.log.Warn("worktree not removed", "branch", w.Branch, "err", m.Error)
	}
}

// serial runs job on the goroutine of merges, after the jobs before it.
func (q *Queue) serial(job func()) {
	if q.shut {
		return // the journal says what a resume has to finish
	}
	if q.jobs == nil {
		jobs := make(chan func(), queueLen)
		q.jobs = jobs
		q.sys.Go(func() {
			for j := range jobs {
				// A job that panics costs only itself.
				func() {
					defer panics.Recover(func(error) {})
					j()
				}()
			}
		}, nil)
	}
	q.jobs <- job
}

// Close takes no more work. What was asked for still runs (a merge is
// never cut off half way); what it reports may no longer be heard, and
// the journal says what a resume has to finish.
func (q *Queue) Close() {
	if q.shut {
		return
	}
	q.shut = true
	if q.jobs != nil {
		close(q.jobs)
	}
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
