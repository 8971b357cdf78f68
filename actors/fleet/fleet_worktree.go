package fleet

import (
	"encoding/json"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet/isolate"
	"reasonix/actors/fleet/resume"
	"reasonix/core/journal"
)

// Writers in worktrees. A writer with isolation "worktree" gets a git
// worktree of its own from a snapshot of the parent's working tree (one
// per fleet), its tools rooted there; its claims keep no one waiting, only
// the writer cap counts it. The git work runs on the isolate.Queue, off
// this mailbox: the task holds its slots while its worktree is made, and
// its result waits while its changes are committed and merged, in the
// order tasks end. A task on a worker brings its changes back as a patch,
// merged the same way. The journal holds the worktree, the result with its
// merge pending, then the merge, so a resume merges what a crash left
// pending, once.

// worktreeMade reports a worktree made for attempt of task (or why not).
type worktreeMade struct {
	task    string
	attempt int
	wt      isolate.Worktree
	err     error
}

// worktreeSettled reports what became of an ended task's changes.
type worktreeSettled struct {
	task string
	m    event.Merge
}

// settling is an ended worktree task whose changes are being committed and
// merged; its result is delivered once they are.
type settling struct {
	t   *runningTask
	res event.TaskResult
}

// git is the scheduler's queue of git work, made on first use.
func (f *fleetActor) git() *isolate.Queue {
	if f.gitQ == nil {
		f.gitQ = isolate.NewQueue(f.sys, f.spec.Isolator, f.log)
	}
	return f.gitQ
}

// makeWorktree has a worktree task's worktree made off the mailbox; the
// task keeps its slots meanwhile and starts on worktreeMade.
func (f *fleetActor) makeWorktree(c actor.Context, t *runningTask, deadline time.Time) {
	id := t.spec.ID
	if f.spec.Isolator == nil {
		f.finishTask(c, id, event.TaskResult{TaskID: id, Status: event.TaskFailed, Error: isolate.ErrNoRepo.Error()})
		return
	}
	t.making, t.heldDeadline = true, deadline
	sys, self, attempt := f.sys, f.self, t.attempt
	f.git().Make(t.fleet, t.spec, func(w isolate.Worktree, err error) {
		sys.Send(self, &worktreeMade{task: id, attempt: attempt, wt: w, err: err})
	})
}

// worktreeDone starts the task whose worktree is made, journalled first; a
// task that ended meanwhile has its worktree removed.
func (f *fleetActor) worktreeDone(c actor.Context, m *worktreeMade) {
	t := f.tasks[m.task]
	if t == nil || !t.making || t.attempt != m.attempt {
		if m.err == nil {
			f.git().Drop(m.wt)
		}
		return
	}
	t.making = false
	err := m.err
	if err == nil {
		t.wt, t.spec.Workdir = &m.wt, m.wt.Dir
		if err = f.jot(t.fleet, journal.KindWorktree, m.task, m.wt); err != nil {
			f.dropWorktree(t)
		}
	}
	if err != nil {
		f.finishTask(c, m.task, event.TaskResult{TaskID: m.task, Status: event.TaskFailed, Error: "worktree: " + err.Error()})
		return
	}
	f.startAll(c, []toStart{{t, t.heldDeadline}}, nil)
	f.armTimer()
}

// dropWorktree removes the worktree of a task that never started.
func (f *fleetActor) dropWorktree(t *runningTask) {
	if t.wt != nil {
		f.git().Drop(*t.wt)
		t.wt = nil
	}
}

// settleWorktree journals an ended worktree task's result with its merge
// pending (or, for a task that did not end ok, its changes kept), then
// has its changes committed and merged, or kept, off the mailbox; the
// result is delivered on worktreeSettled. A crash meanwhile leaves the
// journal saying what a resume still has to do.
func (f *fleetActor) settleWorktree(t *runningTask, res event.TaskResult) {
	w := *t.wt
	t.wt = nil
	res, merge, done := f.pend(t, res, res.Status == event.TaskOK, event.Merge{Branch: w.Branch})
	f.git().Settle(w, merge, done)
}

// settleImported is settleWorktree for a worktree task that ran on a
// worker, whose changes came back with its result: the result is
// journalled with them (and its merge pending), and they are merged here,
// in their turn.
func (f *fleetActor) settleImported(t *runningTask, res event.TaskResult) {
	ch := *res.Changes
	_, merge, done := f.pend(t, res, res.Status == event.TaskOK && len(ch.Patch) > 0, event.Merge{Files: ch.Files})
	f.git().SettleImported(t.fleet, t.spec, ch, merge, done)
}

// pend journals an ended worktree task's result with m as its merge,
// pending when merge is set and kept otherwise, and holds it until its
// changes are settled. It returns the result, whether to merge (not when
// the journal refused the result) and what reports the settling.
func (f *fleetActor) pend(t *runningTask, res event.TaskResult, merge bool, m event.Merge) (event.TaskResult, bool, func(event.Merge)) {
	m.Status = event.MergeKept
	if merge {
		m.Status = event.MergePending
	}
	res.Merge = &m
	if res = f.journalResult(t.fleet, res); res.Status != event.TaskOK {
		merge = false // not journalled: it is not merged either
	}
	res.Changes = nil // the parent has no use for a worker's patch
	if f.settling == nil {
		f.settling = map[string]*settling{}
	}
	f.settling[res.TaskID] = &settling{t: t, res: res}
	sys, self, id := f.sys, f.self, res.TaskID
	return res, merge, func(m event.Merge) { sys.Send(self, &worktreeSettled{task: id, m: m}) }
}

// worktreeSettledDone delivers the result of a task whose changes are
// settled, the merge journalled first.
func (f *fleetActor) worktreeSettledDone(c actor.Context, m *worktreeSettled) {
	s := f.settling[m.task]
	if s == nil {
		return
	}
	delete(f.settling, m.task)
	_ = f.jot(s.t.fleet, journal.KindMerge, m.task, m.m) // a failure ends the fleet (endBroken)
	res := s.res
	res.Merge = &m.m
	res.Text += isolate.MergeNote(m.m)
	f.recordEnd(c, s.t, res)
	f.maybeReply(c, s.t.fleet)
}

// resettle finishes, for a fleet that goes on from its journal after its
// scheduler stopped, the worktree work the stop cut short: a result
// journalled with its merge pending is merged now, in its turn, and
// delivered once it is (worktreeSettledDone journals the merge); a task
// failed as interrupted keeps its changes on its branch.
func (f *fleetActor) resettle(rf *resume.Fleet) {
	fleetID := rf.Submit.FleetID
	for _, id := range rf.PendingMerges() {
		res := rf.Submit.Done[id]
		t := &runningTask{fleet: fleetID, meter: &team.TaskMeter{}}
		for _, spec := range rf.Submit.Tasks {
			if spec.ID == id {
				t.spec = spec
			}
		}
		if f.settling == nil {
			f.settling = map[string]*settling{}
		}
		held := res
		held.Changes = nil
		f.settling[id] = &settling{t: t, res: held}
		sys, self := f.sys, f.self
		done := func(m event.Merge) { sys.Send(self, &worktreeSettled{task: id, m: m}) }
		if f.spec.Isolator == nil {
			done(event.Merge{Status: event.MergeKept, Branch: res.Merge.Branch, Error: isolate.ErrNoRepo.Error()})
			continue
		}
		f.git().Resume(fleetID, res, done)
	}
	for _, id := range rf.Failed {
		var w isolate.Worktree
		if json.Unmarshal(rf.Replayed.Worktrees[id], &w) == nil && f.spec.Isolator != nil {
			f.git().Settle(w, false, func(event.Merge) {})
		}
	}
}
