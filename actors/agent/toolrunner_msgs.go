package agent

import "time"

// RunTool asks a tool runner to execute one call. The reply, exactly one, is
// a *ToolResult.
type RunTool struct {
	CallID string
	Name   string
	Args   string
}

// CancelTool asks a tool runner to cancel its call; it still replies with a
// ToolResult (marked cancelled).
type CancelTool struct{}

// ToolResult is the outcome of one tool call. Output is what the model
// reads; for a failed call it explains the failure.
type ToolResult struct {
	CallID    string
	Name      string
	Output    string
	IsError   bool
	Cancelled bool
	// Crashed marks a tool that panicked: a bug, survived as an error.
	Crashed  bool
	Duration time.Duration
}

// toolOutcome carries a finished call from the tool goroutine to its runner.
type toolOutcome struct {
	output   string
	err      error
	timedOut bool
	crashed  bool
}
