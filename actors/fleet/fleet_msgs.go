package fleet

// fleetTick asks the scheduler to look for tasks past their deadline.
type fleetTick struct{}

// TaskOverBudget tells the scheduler a running task reached a ceiling.
type TaskOverBudget struct {
	TaskID string
	what   string
}

// reapTask stops a subagent that ignored its cancellation for too long.
type reapTask struct {
	taskID string
}
