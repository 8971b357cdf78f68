package scheduler

import "errors"

// The sentinel errors below are wrapped by every error a Queue returns, so
// that the actor can map a failure to a reply with errors.Is instead of
// matching message text.
var (
	// ErrConfig is wrapped by New when a cap is outside its range or the root is
	// not an absolute path, because a bad cap would silently serialise or
	// flood a fleet.
	ErrConfig = errors.New("invalid scheduler config")
	// ErrInvalidTask is wrapped by Submit for a task that could never be
	// scheduled sensibly: an empty id, a negative timeout, or a reader that
	// declares write paths.
	ErrInvalidTask = errors.New("invalid task")
	// ErrBadClaim is wrapped by Submit when a write path is empty, escapes
	// the workspace root, or is absolute while no root is configured; such a
	// claim cannot be compared with others, so it is refused up front.
	ErrBadClaim = errors.New("invalid write path")
	// ErrDuplicateID is wrapped by Submit when the id was accepted before,
	// even if that task has ended, because results are keyed by id.
	ErrDuplicateID = errors.New("duplicate task id")
	// ErrUnknownID is wrapped when an operation names an id that Submit
	// never accepted.
	ErrUnknownID = errors.New("unknown task id")
	// ErrNotRunning is wrapped by Finish and Requeue for a task that is
	// still queued: only a task that was started can finish or lose its
	// attempt.
	ErrNotRunning = errors.New("task not running")
	// ErrStopping is wrapped by Cancel for a task that the caller was
	// already told to stop, so that one stop is issued per task, and by
	// Requeue for such a task, whose stop already decides how it ends.
	ErrStopping = errors.New("task already stopping")
	// ErrEnded is wrapped by Finish, Cancel and Requeue for a task that has
	// already ended; it is what keeps every task ending exactly once.
	ErrEnded = errors.New("task already ended")
	// ErrNoNode is wrapped by Submit when no node known at the time, up or
	// down, could ever run the task, so that it is refused instead of
	// waiting for ever: a writer whose claims no worker's write paths
	// cover while the local node has no slots, or any task while no node
	// has a slot.
	ErrNoNode = errors.New("no node can run the task")
	// ErrAttempts is wrapped by Requeue for a task that has already had
	// MaxAttempts attempts; the caller ends it with Finish instead.
	ErrAttempts = errors.New("task attempts exhausted")
)
