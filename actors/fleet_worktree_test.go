package actors

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/fleet/isolate"
	"reasonix/core/journal"
	"reasonix/core/provider/providertest"
)

// bookIsolator is an isolate.Isolator that keeps its worktrees in memory:
// a branch is made, committed with one changed file, merged, dropped.
// It counts merges per branch, whichever way they came.
type bookIsolator struct {
	mu      sync.Mutex
	merges  map[string]int
	resumed map[string]int
	gone    map[string]bool
}

func newBookIsolator() *bookIsolator {
	return &bookIsolator{merges: map[string]int{}, resumed: map[string]int{}, gone: map[string]bool{}}
}

func (b *bookIsolator) Available() bool { return true }

func (b *bookIsolator) Prepare(_ context.Context, fleetID string, spec event.TaskSpec) (isolate.Worktree, error) {
	return isolate.Worktree{Branch: "reasonix/s/" + spec.ID, Dir: "/wt/" + spec.ID, Base: "snap-" + fleetID}, nil
}

func (b *bookIsolator) Commit(_ context.Context, w isolate.Worktree) ([]string, error) {
	return []string{strings.TrimPrefix(w.Branch, "reasonix/s/") + ".go"}, nil
}

func (b *bookIsolator) Merge(_ context.Context, w isolate.Worktree) event.Merge {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.merges[w.Branch]++
	return event.Merge{Status: event.MergeMerged, Branch: w.Branch, Files: []string{strings.TrimPrefix(w.Branch, "reasonix/s/") + ".go"}}
}

func (b *bookIsolator) Keep(context.Context, isolate.Worktree) event.Merge {
	return event.Merge{Status: event.MergeKept}
}

func (b *bookIsolator) Drop(_ context.Context, w isolate.Worktree) event.Merge {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gone[w.Branch] = true
	return event.Merge{}
}

func (b *bookIsolator) Export(context.Context, isolate.Worktree) event.Changes {
	return event.Changes{}
}

func (b *bookIsolator) Import(context.Context, string, event.TaskSpec, event.Changes) (isolate.Worktree, error) {
	return isolate.Worktree{}, fmt.Errorf("no workers here")
}

// Resume is the real one's rule: a branch that is gone was merged; one
// still there is merged now.
func (b *bookIsolator) Resume(ctx context.Context, _ string, res event.TaskResult) event.Merge {
	b.mu.Lock()
	b.resumed[res.Merge.Branch]++
	gone := b.gone[res.Merge.Branch]
	b.mu.Unlock()
	if gone {
		return event.Merge{Status: event.MergeMerged, Branch: res.Merge.Branch}
	}
	return b.Merge(ctx, isolate.Worktree{Branch: res.Merge.Branch})
}

// TestDeadSchedulerMergesWhatItLeftPending: the scheduler stops after a
// worktree writer's result was journalled with its merge pending and
// before that merge was journalled; the session's new scheduler goes on
// from the journal and settles the merge, once, before the result reaches
// the parent, which reads it merged. Without that the parent read the
// result as pending and the journal never recorded its merge.
func TestDeadSchedulerMergesWhatItLeftPending(t *testing.T) {
	ctx := context.Background()
	j, err := journal.OpenPath(ctx, filepath.Join(t.TempDir(), "fleets.db"))
	must(t, err)
	defer j.Close()
	iso := newBookIsolator()
	spec := &fleet.FleetSpec{MaxRunning: 1, MaxWriters: 1, Root: "/ws", Journal: j, Isolator: iso}
	h := newHarness(t, harnessOpts{fleet: spec,
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				return providertest.Turn{Text: "edited for " + req.FirstUser()}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(2, func(int) string { return `,"isolation":"worktree"` })}}
			}
			return providertest.Turn{Text: "parent read: " + toolMessages(req)[0].Content}
		})}})
	// The first settled merge is heard by no one: the scheduler dies as it
	// arrives.
	killed := killActorAt(t, "scheduler", func(msg any) bool { return fmt.Sprintf("%T", msg) == "*fleet.worktreeSettled" })
	done, _ := h.turn("fan out")
	<-killed
	if done.Status != event.StatusOK || !strings.Contains(done.Text, "2 tasks: 2 ok") {
		t.Fatalf("parent turn: %+v", done)
	}
	if n := strings.Count(done.Text, "[worktree: merged"); n != 2 {
		t.Errorf("the parent read %d merged results, want 2:\n%s", n, done.Text)
	}
	iso.mu.Lock()
	resumed := len(iso.resumed)
	iso.mu.Unlock()
	if resumed != 1 {
		t.Errorf("%d merges settled by the new scheduler, want the one left pending", resumed)
	}
	fleets, err := j.Fleets(ctx)
	if err != nil || len(fleets) != 1 || !fleets[0].Replied {
		t.Fatalf("journalled fleets: %+v, %v", fleets, err)
	}
	recs, err := j.Records(ctx, fleets[0].Key)
	must(t, err)
	merges := map[string]int{}
	for _, r := range recs {
		if r.Kind == journal.KindMerge {
			merges[r.Task]++
		}
	}
	if len(merges) != 2 {
		t.Errorf("merge records per task %v: want one for each of 2", merges)
	}
	for task, n := range merges {
		if n != 1 {
			t.Errorf("task %s: %d merge records, want 1", task, n)
		}
	}
}
