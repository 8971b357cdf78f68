package agent

import (
	"reasonix/actors/event"
	"reasonix/core/goal"
	"reasonix/core/provider"
)

// RunTurn asks an executor (or a session) to run one user turn. The reply,
// exactly one, is a *TurnFinished.
type RunTurn struct {
	Input string
	// Compact makes the turn the user's /compact: a fold of the older work
	// on demand, with no model turn. Session.Run sets it for a typed
	// /compact.
	Compact bool
	// Goal, when set, makes the turn a goal command for the session's goal
	// controller (start, clear or resume); GoalError, when set, is why a
	// typed /goal could not be read. Session.Run reads a typed /goal into
	// them once, and the goal command sets Goal directly; Input keeps the
	// text, for a session without a goal controller.
	Goal      *goal.Prompt
	GoalError string
	// Reject asks the session to refuse the prompt, rather than queue it,
	// when a turn is already running.
	Reject bool
	// Wake makes the turn one for background results alone: no prompt,
	// and no turn at all (TurnFinished with Idle) when nothing waits.
	Wake bool
}

// SetPosture switches the approval posture (ask, auto or yolo) of a
// session, its executor and its subagents, from the next call on. Deny
// rules and forced reviews apply in every posture.
type SetPosture struct {
	Posture string
}

// SetEffort sets the reasoning effort the session's model requests carry
// from the next request on (the executor's, and the planner's in a
// two-model run); subagents keep the effort their task resolved.
type SetEffort struct {
	Effort string
}

// CancelTurn asks for the running turn to stop: the in-flight model request
// and tool calls are cancelled, results recorded so far are kept, and the
// turn ends with StatusCancelled. With no turn running it does nothing.
type CancelTurn struct{}

// StatusLoop ends a turn whose model made the same call with the same
// result LoopRepeats times in a row, where nobody was asked to let it go
// on (or the user said no).
const StatusLoop = "loop"

// TurnFinished is the terminal reply to RunTurn.
type TurnFinished struct {
	Session string
	Task    string
	// Status is one of StatusOK, StatusFailed, StatusCancelled,
	// StatusMaxSteps (the --max-steps cap or the agent.max_steps guard),
	// StatusLoop, or StatusLimit (a goal's budget or lease ended the turn
	// from inside; a goal controller's own reply says how the goal ended).
	Status string
	// Text is the assistant's final answer (the last step's text).
	Text  string
	Error string
	Steps int
	Usage provider.Usage
	// Idle answers a Wake turn that found nothing to deliver: no turn ran.
	Idle bool
	// Changes are a worktree writer's changes, from a worker (a remote
	// task's proxy sets it).
	Changes *event.Changes
}

// StreamChunk carries one chunk of the current model stream from the
// stream goroutine to the executor. epoch ties it to the step that started
// the stream, so chunks of a cancelled stream are ignored.
type StreamChunk struct {
	epoch int
	chunk provider.Chunk
}

// streamClosed reports that the stream goroutine ended; an executor still
// waiting for a terminal chunk of that epoch treats it as a broken stream.
type streamClosed struct {
	epoch int
}

// retryNoted is the provider's word that the request of that epoch is
// about to be retried (provider.WithRetryNotice).
type retryNoted struct {
	epoch int
	n     provider.RetryNotice
}

// ApprovalResponse answers an ApprovalRequested event. Choice is one of
// the Approve constants; Rule is the scope granted for "session" and
// "always" (empty: the narrowest suggestion).
type ApprovalResponse struct {
	RequestID string
	Choice    string
	Rule      string
	// reason explains a denial the executor makes itself (a timeout).
	Reason string
}

// Summed is m as the reply of a run of several turns (a coordinator's
// rounds, a goal's turns) for session: their steps and usage, and
// cancelled when the run was cancelled and m says ok.
func (m *TurnFinished) Summed(session string, steps int, usage provider.Usage, canceled bool) *TurnFinished {
	out := *m
	out.Session, out.Task = session, ""
	out.Steps, out.Usage = steps, usage
	if canceled && out.Status == event.StatusOK {
		out.Status = event.StatusCancelled
	}
	return &out
}
