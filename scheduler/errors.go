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
	// ErrNotRunning is wrapped by Finish for a task that is still queued:
	// only a task that was started can finish.
	ErrNotRunning = errors.New("task not running")
	// ErrStopping is wrapped by Cancel for a task that the caller was
	// already told to stop, so that one stop is issued per task.
	ErrStopping = errors.New("task already stopping")
	// ErrEnded is wrapped by Finish and Cancel for a task that has already
	// ended; it is what keeps every task ending exactly once.
	ErrEnded = errors.New("task already ended")
)
