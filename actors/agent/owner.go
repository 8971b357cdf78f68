package agent

// TaskOwner is whom a subagent works for: the session that delegated the
// task, the attempt it is (a task placed on a worker may be tried again)
// and whether that session has a frontend to ask for approvals.
type TaskOwner struct {
	Parent      string
	Attempt     int
	Interactive bool
}
