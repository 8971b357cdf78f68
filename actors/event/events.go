package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"reasonix/core/provider"
)

// Event is one observation a frontend can render. Every event carries a
// Meta; its JSON form (see Encode) is the stream-json wire format, so field
// names are a documented, stable contract (docs/SPEC.md).
type Event interface {
	// Kind is the event's "type" on the wire.
	Kind() string
	// EventMeta is the event's Meta, for the publisher to stamp.
	EventMeta() *Meta
}

// Meta is common to every event.
type Meta struct {
	// Seq orders events across the whole bus, starting at 1.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	// Session is the session that produced the event.
	Session string `json:"session"`
	// Task is the subagent task, empty for the main session.
	Task string `json:"task,omitempty"`
	// Role is planner or executor in a two-model run; empty otherwise.
	Role string `json:"role,omitempty"`
}

// EventMeta makes every type that embeds Meta an Event.
func (m *Meta) EventMeta() *Meta { return m }

// MetaOf is a copy of the Meta e carries (zero for a nil e), for a
// frontend that routes events by session, task or seq without a type
// switch over every kind.
func MetaOf(e Event) Meta {
	if v := reflect.ValueOf(e); e == nil || v.Kind() == reflect.Pointer && v.IsNil() {
		return Meta{}
	}
	return *e.EventMeta()
}

// SessionStarted opens a session's stream.
type SessionStarted struct {
	Meta
	Model      string   `json:"model"`
	Cwd        string   `json:"cwd"`
	Transcript string   `json:"transcript,omitempty"`
	Tools      []string `json:"tools"`
}

// TextDelta is a piece of the assistant's answer as it streams.
type TextDelta struct {
	Meta
	Text string `json:"text"`
}

// ReasoningDelta is a piece of the model's visible reasoning.
type ReasoningDelta struct {
	Meta
	Text string `json:"text"`
}

// ToolStarted reports a tool call about to run.
type ToolStarted struct {
	Meta
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	Args   string `json:"args"`
}

// ToolFinished reports a tool call's outcome. Output is cut to
// MaxEventOutput bytes; OutputBytes is the full size.
type ToolFinished struct {
	Meta
	CallID      string `json:"call_id"`
	Tool        string `json:"tool"`
	IsError     bool   `json:"is_error"`
	DurationMS  int64  `json:"duration_ms"`
	Output      string `json:"output"`
	OutputBytes int    `json:"output_bytes"`
}

// MaxEventOutput caps the tool output copied into a ToolFinished event.
const MaxEventOutput = 4096

// UsageReported is the token usage of one model request, plus the session's
// running total.
type UsageReported struct {
	Meta
	Usage provider.Usage `json:"usage"`
	Total provider.Usage `json:"total"`
}

// Notice is an informational message for the user (retries, warnings).
type Notice struct {
	Meta
	Level   string `json:"level"`
	Message string `json:"message"`
}

// ErrorOccurred reports a failure the user should see. Message says it in
// words; Detail, when set, is what lies behind it for whoever asks (a
// provider's raw reply body).
type ErrorOccurred struct {
	Meta
	Message string `json:"message"`
	Detail  string `json:"detail,omitempty"`
}

// Retrying says a model request failed and is about to be sent again:
// attempt Attempt of at most MaxAttempts, after DelayMS, because of
// Reason ("429 Too Many Requests"). It is news until the answer starts.
type Retrying struct {
	Meta
	Attempt     int    `json:"attempt"`
	MaxAttempts int    `json:"max_attempts"`
	DelayMS     int64  `json:"delay_ms"`
	Reason      string `json:"reason"`
}

// Turn statuses, shared by TurnDone and TurnFinished.
const (
	StatusOK        = "ok"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
	StatusMaxSteps  = "max_steps"
)

// TurnDone ends a turn: exactly one per RunTurn.
type TurnDone struct {
	Meta
	Status string         `json:"status"`
	Text   string         `json:"text"`
	Error  string         `json:"error,omitempty"`
	Steps  int            `json:"steps"`
	Usage  provider.Usage `json:"usage"`
}

// ApprovalRequested asks an interactive frontend to approve a tool call;
// the frontend answers with an ApprovalResponse to the session. Suggestions
// are rule scopes from narrowest to broadest.
type ApprovalRequested struct {
	Meta
	RequestID   string   `json:"request_id"`
	CallID      string   `json:"call_id"`
	Tool        string   `json:"tool"`
	Args        string   `json:"args"`
	Reason      string   `json:"reason"`
	Suggestions []string `json:"suggestions"`
	// OnceOnly says the answer covers this call alone: "session" and
	// "always" are taken as "once", so a frontend offers allow or deny.
	OnceOnly bool `json:"once_only,omitempty"`
	// Preview shows what the call would change, when its tool can tell
	// (a unified diff for write_file, edit_file and multi_edit).
	Preview string `json:"preview,omitempty"`
}

// ApprovalResolved closes an ApprovalRequested, whichever way it ended: the
// user's answer, a cancelled turn, a timeout. Decision is one of the
// Approve constants; Reason says why a call was denied.
type ApprovalResolved struct {
	Meta
	RequestID string `json:"request_id"`
	CallID    string `json:"call_id"`
	Decision  string `json:"decision"`
	Reason    string `json:"reason,omitempty"`
}

// ToolWaiting reports a call held at the permission gate until someone
// answers its approval_requested; tool_started follows if it is allowed.
type ToolWaiting struct {
	Meta
	CallID    string `json:"call_id"`
	Tool      string `json:"tool"`
	Args      string `json:"args"`
	RequestID string `json:"request_id"`
}

// TurnStarted reports that a turn began: the prompt the model now works on.
type TurnStarted struct {
	Meta
	Prompt string `json:"prompt"`
	// Typed is the prompt as the user typed it (first 200 characters),
	// set only when it differs from Prompt: the blocks of its @references
	// and plan mode's note taken off. Attachments are those references.
	Typed       string   `json:"typed,omitempty"`
	Attachments []string `json:"attachments,omitempty"`
	// Wake marks a turn the session started for background results, with
	// no prompt.
	Wake bool `json:"wake,omitempty"`
}

// PromptQueued reports a prompt that arrived while a turn was running; it
// runs, in order, after the turns ahead of it. Position counts from 1.
type PromptQueued struct {
	Meta
	Prompt   string `json:"prompt"`
	Position int    `json:"position"`
}

// PromptRejected reports a prompt that was not taken (the caller asked
// not to queue it, or the session cannot run turns).
type PromptRejected struct {
	Meta
	Prompt string `json:"prompt"`
	Reason string `json:"reason"`
}

// PostureChanged reports the session's new approval posture.
type PostureChanged struct {
	Meta
	Posture string `json:"posture"`
}

// EffortChanged reports the reasoning effort the session's requests carry
// from now on.
type EffortChanged struct {
	Meta
	Effort string `json:"effort"`
}

// CompactionStarted reports a fold that has begun: it waits for the model
// to write the digest, so a frontend can show the pause for what it is.
type CompactionStarted struct {
	Meta
	Tier    string `json:"tier"`
	Trigger string `json:"trigger"`
	// Tokens is the estimated request size the fold starts from.
	Tokens int `json:"tokens"`
	// Messages is how many messages it will fold into the digest.
	Messages int `json:"messages"`
}

// Compacted reports one compaction: the tier (snip, prune, fold), what
// started it (auto, manual, fallback), the estimated request size before
// and after, the message counts, and the archive holding the originals.
type Compacted struct {
	Meta
	Tier           string `json:"tier"`
	Trigger        string `json:"trigger"`
	TokensBefore   int    `json:"tokens_before"`
	TokensAfter    int    `json:"tokens_after"`
	Window         int    `json:"window"`
	MessagesBefore int    `json:"messages_before"`
	MessagesAfter  int    `json:"messages_after"`
	Archive        string `json:"archive,omitempty"`
}

// PlanReady reports the plan a planner wrote, before it is handed to the
// executor; Round counts from 1 and grows with each re-plan.
type PlanReady struct {
	Meta
	Round int    `json:"round"`
	Plan  string `json:"plan"`
}

// PlanProposed reports the plan a session in plan mode presents with
// exit_plan_mode. Where a frontend answers, an approval_requested for the
// call follows.
type PlanProposed struct {
	Meta
	Plan string `json:"plan"`
}

// PlanStep reports a step of an approved plan done (complete_step).
type PlanStep struct {
	Meta
	Step    string `json:"step"`
	Summary string `json:"summary,omitempty"`
}

// Kind implementations: the wire names.
func (*SessionStarted) Kind() string { return "session_started" }
func (*CompactionStarted) Kind() string {
	return "compaction_started"
}
func (*Compacted) Kind() string      { return "compaction" }
func (*PlanReady) Kind() string      { return "plan_ready" }
func (*PlanProposed) Kind() string   { return "plan_proposed" }
func (*PlanStep) Kind() string       { return "plan_step" }
func (*TextDelta) Kind() string      { return "text_delta" }
func (*ReasoningDelta) Kind() string { return "reasoning_delta" }
func (*ToolStarted) Kind() string    { return "tool_started" }
func (*ToolFinished) Kind() string   { return "tool_finished" }
func (*UsageReported) Kind() string  { return "usage" }
func (*Notice) Kind() string         { return "notice" }
func (*ErrorOccurred) Kind() string  { return "error" }
func (*Retrying) Kind() string       { return "retrying" }
func (*TurnDone) Kind() string       { return "turn_done" }
func (*ApprovalRequested) Kind() string {
	return "approval_requested"
}
func (*ApprovalResolved) Kind() string { return "approval_resolved" }
func (*ToolWaiting) Kind() string      { return "tool_waiting" }
func (*TurnStarted) Kind() string      { return "turn_started" }
func (*PromptQueued) Kind() string     { return "prompt_queued" }
func (*PromptRejected) Kind() string   { return "prompt_rejected" }
func (*PostureChanged) Kind() string   { return "posture_changed" }
func (*EffortChanged) Kind() string    { return "effort_changed" }

// Encode renders e as one JSON object with "type" first, the stream-json
// line format.
func Encode(e Event) ([]byte, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode %s event: %w", e.Kind(), err)
	}
	var b bytes.Buffer
	b.Grow(len(body) + 24)
	b.WriteString(`{"type":`)
	kind, _ := json.Marshal(e.Kind())
	b.Write(kind)
	if len(body) > 2 {
		b.WriteByte(',')
		b.Write(body[1:])
	} else {
		b.WriteByte('}')
	}
	return b.Bytes(), nil
}

// TaskQueued reports a subagent task accepted by the scheduler.
type TaskQueued struct {
	Meta
	Fleet   string `json:"fleet"`
	Prompt  string `json:"prompt"`
	Profile string `json:"profile,omitempty"`
	Writer  bool   `json:"writer"`
	// Background marks a task whose parent goes on while it runs; Name is
	// its name, and Of, for a follow-up turn (a message to an agent that
	// had ended), the task whose conversation it continues.
	Background bool   `json:"background,omitempty"`
	Name       string `json:"name,omitempty"`
	Of         string `json:"of,omitempty"`
}

// BackgroundResult reports what the parent's conversation was given
// without waiting for it: a background task's result (Status is its task
// status) or a message from a subagent (Status "message"), appended as a
// user message at a step boundary. Text is what was appended, cut to
// MaxEventOutput.
type BackgroundResult struct {
	Meta
	Agent  string `json:"agent"`
	Name   string `json:"name,omitempty"`
	Status string `json:"status"`
	Text   string `json:"text"`
}

// TaskStarted reports a task that got its slots and is running.
type TaskStarted struct {
	Meta
	Fleet string `json:"fleet"`
	Model string `json:"model"`
	// Budget is the task's ceilings, when it has any.
	Budget *Budget `json:"budget,omitempty"`
	// Endpoint is the task's provider endpoint as the task starts: its
	// concurrency window and the requests waiting for it.
	Endpoint *provider.LimiterStats `json:"endpoint,omitempty"`
	// Worker is the worker host the task runs on, empty for this
	// process; Attempt counts its placements, left out for the first.
	Worker  string `json:"worker,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
}

// TaskDone reports how a task ended: status ok, failed, cancelled,
// timed_out or over_budget (stopped at a ceiling, with a partial answer).
type TaskDone struct {
	Meta
	Fleet      string         `json:"fleet"`
	Status     string         `json:"status"`
	Error      string         `json:"error,omitempty"`
	Steps      int            `json:"steps"`
	DurationMS int64          `json:"duration_ms"`
	Usage      provider.Usage `json:"usage"`
	// Turns counts the task's model requests; CacheHitPct is the share of
	// its prompt tokens the provider's cache served.
	Turns       int     `json:"turns,omitempty"`
	CacheHitPct float64 `json:"cache_hit_pct,omitempty"`
	// Cost is what the task's usage cost at its model's configured price.
	Cost float64 `json:"cost,omitempty"`
	// Budget is the task's ceilings and OverBudget the one it reached.
	Budget     *Budget `json:"budget,omitempty"`
	OverBudget string  `json:"over_budget,omitempty"`
	// Endpoint is the task's provider endpoint as the task ends.
	Endpoint *provider.LimiterStats `json:"endpoint,omitempty"`
	// Worker and Attempt are those of the attempt that ended the task
	// (see TaskStarted).
	Worker  string `json:"worker,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// Merge is what became of a worktree task's changes.
	Merge *Merge `json:"merge,omitempty"`
}

// TaskRequeued reports a task put back in the queue because the attempt
// running on Worker was lost (the worker disappeared) or refused there;
// Attempt is the number the next placement will have. Nothing of the old
// attempt follows it on the bus.
type TaskRequeued struct {
	Meta
	Fleet   string `json:"fleet"`
	Worker  string `json:"worker"`
	Attempt int    `json:"attempt"`
	Reason  string `json:"reason"`
}

func (*TaskQueued) Kind() string { return "task_queued" }

// Kind implements Event.
func (*BackgroundResult) Kind() string { return "background_result" }
func (*TaskStarted) Kind() string      { return "task_started" }
func (*TaskDone) Kind() string         { return "task_done" }
func (*TaskRequeued) Kind() string     { return "task_requeued" }

// A scheduler-side event (never relayed by a worker), registered with the
// codec here so the codec's table and the event stay side by side.
// Lagged tells one subscriber that events it has not read are gone: it
// fell more than its bound behind (Bus.SubscribeBounded), or it asked to
// replay from further back than the bus keeps (Bus.SubscribeFrom). Dropped
// events are always consecutive, from SinceSeq to UntilSeq; the reader
// should rebuild from a snapshot, or replay from SinceSeq-1 if the bus
// still has it. A Lagged is made for its one reader and never published;
// its Seq is UntilSeq and its Session is empty.
type Lagged struct {
	Meta
	Dropped  int64 `json:"dropped"`
	SinceSeq int64 `json:"since_seq"`
	UntilSeq int64 `json:"until_seq"`
}

func (*Lagged) Kind() string { return "lagged" }
