package event

// Approval choices a frontend answers an ApprovalRequested with.
const (
	ApproveOnce    = "once"
	ApproveSession = "session"
	ApproveAlways  = "always"
	ApproveDeny    = "deny"
)
