package event

// Task statuses in a TaskResult.
const (
	TaskOK        = "ok"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
	TaskTimedOut  = "timed_out"
	// TaskOverBudget is a task stopped at one of its ceilings; its Text is
	// the partial answer it had reached.
	TaskOverBudget = "over_budget"
)
