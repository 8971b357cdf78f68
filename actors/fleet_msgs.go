package actors

import (
	"time"

	"reasonix/actors/event"
	"reasonix/core/provider"
)

// TaskSpec is one subagent task as the task, fleet and parallel_tasks tools
// describe it. It is plain data so it can cross a process boundary when
// subagents move to worker hosts.
type TaskSpec struct {
	ID     string
	Prompt string
	// Profile names a subagent profile; empty means the general one.
	Profile string
	// Writer marks a task that may modify files; WritePaths are its claims
	// (empty for a writer: the whole workspace).
	Writer     bool
	WritePaths []string
	// Model and Effort are this call's overrides; the profile rules decide
	// the effective values.
	Model  string
	Effort string
	// Budget is this task's explicit ceilings; a dimension it leaves zero
	// gets an even share of what is left of FleetBudget when it starts.
	Budget event.Budget
	// FleetBudget is the ceiling of the whole call the task belongs to,
	// the same on each of its tasks.
	FleetBudget event.Budget
}

// SubmitFleet asks the scheduler to run tasks. The reply, exactly one, is a
// *FleetResult listing every task in input order once all have ended.
type SubmitFleet struct {
	FleetID string
	Tasks   []TaskSpec
	// Key, when set, re-attaches a journalled fleet (see ResumeFleet):
	// its records go on under that key and Done holds the tasks that
	// finished before, which keep their results and do not run again.
	Key  string
	Done map[string]TaskResult
}

// CancelFleet stops a fleet: queued tasks end cancelled, running ones are
// cancelled and end as soon as they stop. Its FleetResult still arrives.
type CancelFleet struct {
	FleetID string
}

// CancelTask stops one task and leaves its siblings running.
type CancelTask struct {
	TaskID string
}

// TaskResult is how one task ended.
type TaskResult struct {
	TaskID string
	Status string
	// Text is the subagent's final answer (possibly partial when it did
	// not succeed).
	Text     string
	Error    string
	Steps    int
	Usage    provider.Usage
	Duration time.Duration
	// Turns counts the task's model requests and CacheHitPct the share of
	// its prompt tokens served from the provider's cache.
	Turns       int
	CacheHitPct float64
	// Cost is what the task's usage cost at its model's configured
	// price; zero when none is configured.
	Cost float64
	// Budget is the ceilings the task ran under (nil for none) and
	// OverBudget the one it reached: "tokens", "turns", "seconds" or
	// "cost".
	Budget     *event.Budget
	OverBudget string
}

// FleetResult is the terminal reply to SubmitFleet.
type FleetResult struct {
	FleetID string
	Results []TaskResult
}

// QueryFleet asks the scheduler for its state; the reply is a
// *FleetStatus.
type QueryFleet struct{}

// FleetStatus is the scheduler's state for status displays.
type FleetStatus struct {
	Queued, Running, Writers, Ended int
	Tasks                           []TaskState
	// Endpoints are the process's provider endpoints: each one's
	// concurrency window, requests in flight and waiting.
	Endpoints []provider.LimiterStats
	// Workers are the configured worker hosts, in config order.
	Workers []WorkerState
}

// WorkerState is one worker host as the scheduler sees it.
type WorkerState struct {
	Name    string
	Address string
	// State is "probing" (not reached yet), "up", "lost" (was up, is
	// being probed again) or "refused" (it answers but will not serve
	// us; Error says why).
	State    string
	Capacity int
	// Running counts this scheduler's tasks on the worker.
	Running int
	// Since is when the worker entered its state.
	Since time.Time
	// Error is the last probe error, refusal or loss reason.
	Error string
}

// TaskState is one live task in a FleetStatus.
type TaskState struct {
	TaskID string
	Fleet  string
	State  string
	Writer bool
	// Worker is the worker host running the task; empty for the local
	// process or a task not running.
	Worker string
}

// fleetTick asks the scheduler to look for tasks past their deadline.
type fleetTick struct{}

// taskOverBudget tells the scheduler a running task reached a ceiling.
type taskOverBudget struct {
	taskID string
	what   string
}

// reapTask stops a subagent that ignored its cancellation for too long.
type reapTask struct {
	taskID string
}
