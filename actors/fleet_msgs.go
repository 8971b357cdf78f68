package actors

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
