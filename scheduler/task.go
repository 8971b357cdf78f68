package scheduler

import (
	"slices"
	"time"
)

// Task is one unit of subagent work as the scheduler sees it: only what
// admission needs, so that the prompt and profile stay with the caller.
type Task struct {
	// ID names the task in every later call and must be unique for the
	// life of the Queue.
	ID string
	// Fleet groups the tasks of one fleet call so CancelFleet can stop
	// them together; empty for a task outside any fleet.
	Fleet string
	// Writer marks a task that may modify the workspace. It is explicit
	// rather than inferred from WritePaths so that "writes anywhere" (a
	// writer without paths) cannot be mistaken for "reads only".
	Writer bool
	// WritePaths are the files and directories a writer may modify,
	// relative to Config.Root or absolute under it. A directory covers
	// everything beneath it. Empty for a writer means the whole workspace;
	// a reader must leave it empty.
	WritePaths []string
	// Timeout bounds how long the task may run once started; zero means no
	// limit. Expired reports a task whose start plus Timeout has passed.
	Timeout time.Duration
	// Local keeps the task in this process (the local node): it needs
	// something only this process has, such as a transcript to continue.
	Local bool
	// Isolated marks a writer that works in a copy of the workspace of
	// its own (a git worktree): it takes a writer slot, so MaxWriters
	// still caps it, but its paths conflict with nobody's, so it neither
	// waits for overlapping writers nor holds them up.
	Isolated bool
}

// Start tells the caller to launch a task now. Next returns them in the
// order they should be launched.
type Start struct {
	// Task is the task as submitted.
	Task Task
	// Deadline is the start time plus Task.Timeout, so the caller can arm a
	// timer that calls Expired; zero when the task has no timeout.
	Deadline time.Time
	// Node is where the caller must run the task: "" for the local
	// process, else the name of a worker given to SetNode.
	Node string
	// Attempt numbers the starts of one task from 1; a start after
	// Requeue has the next number.
	Attempt int
}

// FleetCancel is what CancelFleet did, split by what the caller must do
// next for each task.
type FleetCancel struct {
	// Dropped lists queued tasks, in submission order, that have ended
	// cancelled; the caller reports them without starting them.
	Dropped []string
	// Stopping lists running tasks, in start order, that the caller must
	// stop and then Finish.
	Stopping []string
}

// State is where a task is in its life. A task moves Queued → Running →
// (Stopping →) Ended, or Queued → Ended when cancelled before it started.
type State int

const (
	// Queued tasks wait for admission and hold no slot.
	Queued State = iota + 1
	// Running tasks hold a run slot, and a writer slot when they write.
	Running
	// Stopping tasks were cancelled or expired while running; they keep
	// their slots until the caller reports with Finish that they stopped.
	Stopping
	// Ended tasks hold nothing and accept no further operation.
	Ended
)

// String returns the lower-case state name used in status output.
func (s State) String() string {
	switch s {
	case Queued:
		return "queued"
	case Running:
		return "running"
	case Stopping:
		return "stopping"
	case Ended:
		return "ended"
	}
	return "unknown"
}

// Outcome says why a task ended, so the caller can label its result.
type Outcome int

const (
	// OutcomeNone is the outcome of a task that has not been told to end.
	OutcomeNone Outcome = iota
	// OutcomeFinished is a task that ran until the caller called Finish.
	OutcomeFinished
	// OutcomeCancelled is a task ended by Cancel or CancelFleet.
	OutcomeCancelled
	// OutcomeExpired is a task stopped because its timeout passed.
	OutcomeExpired
)

// String returns the lower-case outcome name used in status output.
func (o Outcome) String() string {
	switch o {
	case OutcomeNone:
		return "none"
	case OutcomeFinished:
		return "finished"
	case OutcomeCancelled:
		return "cancelled"
	case OutcomeExpired:
		return "expired"
	}
	return "unknown"
}

// TaskStatus describes one task for status queries and logs.
type TaskStatus struct {
	// ID and Fleet are as submitted.
	ID    string
	Fleet string
	// Writer is as submitted.
	Writer bool
	// Claims are the normalised write paths: slash-separated, relative to
	// the root, none inside another; "." is the whole workspace. Nil for a
	// reader.
	Claims []string
	// State is the task's current state.
	State State
	// Outcome is how the task ended, or for a stopping task how it will
	// end; OutcomeNone otherwise.
	Outcome Outcome
	// Passes counts later conflicting writers that started before this
	// writer while it waited.
	Passes int
	// Reserved reports a waiting writer whose Passes reached MaxPasses, so
	// no later conflicting writer may start before it.
	Reserved bool
	// Submitted, Started and EndedAt are the times passed to the calls
	// that made those transitions; zero until they happen.
	Submitted time.Time
	Started   time.Time
	EndedAt   time.Time
	// Deadline is Started plus the timeout; zero without one.
	Deadline time.Time
	// Node is the node a running or stopping task is placed on, or an
	// ended one last ran on; "" is the local node, and also what a queued
	// task (never started, or requeued) reports.
	Node string
	// Attempt is the number of the task's current attempt, from 1: the
	// one running, or for a queued task the one its next start will be.
	Attempt int
	// Requeued is the time of the last Requeue; zero if there was none.
	Requeued time.Time
}

// Snapshot is the scheduler's state at one moment, for status queries.
type Snapshot struct {
	// Queued counts tasks waiting for admission.
	Queued int
	// Running counts tasks holding a run slot, stopping ones included.
	Running int
	// Writers counts running writers, stopping ones included.
	Writers int
	// Stopping counts running tasks the caller was told to stop.
	Stopping int
	// Ended counts every task that has ended so far.
	Ended int
	// Tasks lists the queued, running and stopping tasks in submission
	// order; ended tasks are left out so the list stays small in a long
	// session (Lookup still finds them).
	Tasks []TaskStatus
	// Nodes lists every node, the local one first, then workers in the
	// order they were added.
	Nodes []NodeStatus
}

// task is the Queue's record of one accepted task.
type task struct {
	Task
	claims   []string // nil for readers
	seq      uint64   // submission order
	state    State
	outcome  Outcome
	passes   int
	reserved bool
	node     *node // where it runs or last ran; nil while queued
	attempt  int   // current attempt, from 1

	requeued time.Time

	submitted, started, ended, deadline time.Time
}

// status copies the record into its public form.
func (t *task) status() TaskStatus {
	s := TaskStatus{
		ID:        t.ID,
		Fleet:     t.Fleet,
		Writer:    t.Writer,
		Claims:    slices.Clone(t.claims),
		State:     t.state,
		Outcome:   t.outcome,
		Passes:    t.passes,
		Reserved:  t.reserved,
		Submitted: t.submitted,
		Started:   t.started,
		EndedAt:   t.ended,
		Deadline:  t.deadline,
		Attempt:   t.attempt,
		Requeued:  t.requeued,
	}
	if t.node != nil {
		s.Node = t.node.Name
	}
	return s
}
