package event

// Roles of a two-model run, carried in events (Meta.Role).
const (
	RolePlanner  = "planner"
	RoleExecutor = "executor"
)
