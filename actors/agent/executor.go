package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/actors/kernel"
	"reasonix/core/compact"
	"reasonix/core/permission"
	"reasonix/core/provider"
	"reasonix/core/session"
	"reasonix/core/tool"
	"reasonix/core/trust"
)

// Transcript receives every message a session appends, in order.
type Transcript interface {
	Append(m provider.Message) error
}

// AgentSpec configures one agent loop: the main executor or a subagent.
// It is spawn-time configuration, not a message, so it may hold the
// provider and registry.
type AgentSpec struct {
	// Session names the session in events and replies.
	Session string
	// Task is the subagent task ID; empty for the main executor.
	Task string
	// Role is RolePlanner or RoleExecutor in a two-model run, carried in
	// every event; empty otherwise.
	Role     string
	Provider provider.Provider
	// Model is sent with each request (empty: the provider's own).
	Model string
	Tools *tool.Registry
	// System is the system prompt, used when History is empty.
	System string
	// History seeds the conversation (a resumed session). When set it must
	// start with the system message.
	History []provider.Message
	// MaxSteps bounds model requests per turn; 0 means no bound.
	MaxSteps int
	// GuardSteps is the step guard (agent.max_steps): a turn that has
	// taken that many steps since it began, or since the user last let it
	// go on, ends with StatusMaxSteps, or asks the user whether to go on
	// where someone answers. 0 is no guard.
	GuardSteps int
	// LoopRepeats is the loop guard: the same call (tool and canonical
	// arguments) with the same result that many times in a row ends the
	// turn with StatusLoop, or asks whether to go on, as the step guard
	// does. 0 is no guard.
	LoopRepeats int
	// ToolTimeout caps one tool call; ToolTimeouts overrides it per tool.
	// Zero means no cap.
	ToolTimeout  time.Duration
	ToolTimeouts map[string]time.Duration
	Temperature  float64
	Effort       string
	Transcript   Transcript
	Bus          *event.Bus
	Logger       *slog.Logger
	// Permissions gates each call; the zero value allows everything.
	Permissions Permissions
	// Scheduler receives the task, fleet and parallel_tasks calls (the
	// session, which passes them to its scheduler); nil when the session
	// has no subagents.
	Scheduler *actor.PID
	// Mailer, set by the scheduler for a subagent, takes its send_message
	// calls (the scheduler itself).
	Mailer *actor.PID
	// NoWakeup keeps background results for the next turn instead of
	// asking the session for a turn of their own
	// (agent.background_wakeup = false).
	NoWakeup bool
	// FailOnCrash ends the turn as failed when a tool panics, instead of
	// letting the model carry on: subagents run unattended, so a crash
	// must surface as a failed task.
	FailOnCrash bool
	// ToolGrace is how long a tool runner waits, past its timeout or a
	// cancel, for a tool that ignores its context before it answers for
	// it; zero means DefaultToolGrace.
	ToolGrace time.Duration
	// ApprovalTimeout, when positive, denies a call nobody approved within
	// it.
	ApprovalTimeout time.Duration
	// PlanMode starts the session planning: it offers exit_plan_mode and
	// complete_step, and nothing may change until a plan is approved.
	// PlanApprove approves the first plan at once (run --approve-plan).
	PlanMode    bool
	PlanApprove bool
	// Compaction keeps the conversation inside the model's context
	// window; a zero Window turns it off.
	Compaction compact.Policy
	// MaxTokens is sent as each request's max_tokens; 0 sends none.
	MaxTokens int
	// ArchiveDir receives the originals a compaction replaces (they stay
	// in the transcript too); empty writes no archive.
	ArchiveDir string
	// gate, set by the scheduler for a subagent, drops the subagent's
	// events once its task_done is out.
	Meter *team.TaskMeter
	// saves, set by the session, hears what could not be written (a
	// compaction archive), so the turn does not end ok over it.
	Saves *SaveLog
	// budget, set for the executor a goal controller runs, holds its turns
	// to the goal's budgets and lease at every step, not only between
	// turns.
	Budget StepBudget
}

// DefaultToolGrace is how long a runner waits for a tool that ignores its
// cancelled context.
const DefaultToolGrace = 2 * time.Second

// executor runs the agent loop of one session: request → stream → tool
// calls → results → repeat. It owns the session's message list, which only
// grows between compactions, so every request's prefix is byte-identical to
// the previous one and the provider's prompt cache keeps hitting.
type executor struct {
	sys  *kernel.System
	spec AgentSpec
	log  *slog.Logger
	msgs []provider.Message
	turn *turn
	// epoch numbers streams; chunks from an older epoch are stale.
	epoch int
	// fleetSeq numbers this session's delegation calls.
	fleetSeq int
	total    provider.Usage
	// ledger holds the requests in flight: tool runners and fleets.
	ledger *kernel.Ledger
	// gauge estimates the next request's size for compaction.
	gauge compact.Gauge
	// planning says the session is in plan mode and no plan is approved.
	planning bool
	// guards numbers the guards' go-on questions, so an answer to an
	// earlier one never settles a later one.
	guards int
	// bg is the account of the background work and of what came back for
	// the conversation (background.go).
	bg *team.Book
}

// runnerRef links a running tool runner to its call.
type runnerRef struct {
	pid   *actor.PID
	index int
}

// journaled reports that the transcript holds everything appended before
// the step's tool calls.
type journaled struct{ epoch int }

// approvalExpired ends an approval nobody answered in time.
type approvalExpired struct {
	requestID string
}

// turn is the state of the running turn.
type turn struct {
	replyTo *actor.PID
	// tools is the registry as it was at turn start: a registry change (an
	// MCP server relisting) never alters the prefix within a turn, nor
	// takes away a tool a pending call was approved for.
	tools *tool.Set
	step  int
	usage provider.Usage
	// schemaBytes is the size of the turn's tool schemas in a request;
	// reqMsgs how many messages the request in flight sent.
	schemaBytes int
	reqMsgs     int
	// manual marks a /compact turn; fold is the fold in flight.
	manual bool
	fold   *foldState
	// planWindow is open once a plan is approved in this turn;
	// endAfterTools ends the turn after the step's tools with lastPlan as
	// its answer (a plan nobody can approve).
	planWindow    bool
	endAfterTools bool
	lastPlan      string

	// streaming phase
	cancel    context.CancelFunc
	streaming bool
	text      strings.Builder
	reasoning strings.Builder
	calls     []provider.ToolCall
	lastText  string

	// tool phase
	results []*ToolResult
	groups  [][]int
	group   int
	runners map[string]runnerRef // by call ID
	// approvals maps a pending approval request to its call index;
	// approvalTimers are their deadlines; approvalOnce marks the requests
	// whose answer covers that call alone (once_only), as the gate decided
	// when it asked.
	approvals      map[string]int
	approvalTimers map[string]*time.Timer
	approvalOnce   map[string]bool
	// fleets maps a pending delegation (fleet id) to its call index;
	// fleetAt to when it was submitted, for its tool_finished duration.
	fleets  map[string]int
	fleetAt map[string]time.Time
	// waits are the task_wait calls waiting, by call id.
	waits    map[string]*bgWait
	pending  int
	canceled bool
	// journaling: the step's calls wait for the transcript (Barrier).
	journaling bool

	// metered is how many of the turn's tokens the step budget has been
	// told of.
	metered int
	// loop is the signature of the turn's last call (name, canonical
	// arguments, result) and repeats how many calls in a row had it;
	// guardFrom is the step the step guard counts from; guard is the
	// go-on question waiting for the user.
	loop      string
	repeats   int
	guardFrom int
	guard     *guardAsk
}

// ExecutorProps spawns an executor for spec, with the repair middleware;
// the executor stops (and its parent learns of it) when its repair fails.
func ExecutorProps(sys *kernel.System, spec AgentSpec) *actor.Props {
	log := spec.Logger
	if log == nil {
		log = sys.Logger()
	}
	return kernel.Props("executor", log, func() actor.Actor {
		return newExecutor(sys, spec)
	})
}

func newExecutor(sys *kernel.System, spec AgentSpec) *executor {
	log := spec.Logger
	if log == nil {
		log = sys.Logger()
	}
	e := &executor{sys: sys, spec: spec, log: log.With("session", spec.Session, "task", spec.Task), ledger: kernel.NewLedger(sys),
		planning: spec.PlanMode, bg: team.NewBook()}
	if len(spec.History) > 0 {
		e.msgs = slices.Clone(spec.History)
		// Fleet ids go on from the resumed conversation's, so a task id
		// (and its subagent's transcript name) is never used twice.
		for _, m := range e.msgs {
			for _, c := range m.ToolCalls {
				if c.Name == team.ToolTask || c.Name == team.ToolFleet || c.Name == team.ToolParallelTasks {
					e.fleetSeq++
				}
			}
		}
	} else {
		e.append(provider.Message{Role: provider.RoleSystem, Content: spec.System})
	}
	return e
}

// Receive implements actor.Actor. A panic in a handler is repaired (see
// repair): the turn fails with the reason and the session stays usable.
func (e *executor) Receive(c actor.Context) {
	msg := c.Message()
	if e.ledger.Receive(c, msg) {
		return
	}
	switch m := msg.(type) {
	case *RunTurn:
		e.startTurn(c, m)
	case *CancelTurn:
		e.cancelTurn(c)
	case *StreamChunk:
		e.onChunk(c, m)
	case *streamClosed:
		e.onStreamClosed(c, m)
	case *ToolResult:
		if e.ledger.Settle(callKey(m.CallID)) {
			e.onToolResult(c, m)
		}
	case *ApprovalResponse:
		e.onApproval(c, m)
	case *SetPosture:
		e.spec.Permissions.Posture = permission.Posture(m.Posture)
	case *SetEffort:
		e.spec.Effort = m.Effort
	case *approvalExpired:
		e.onApprovalExpired(c, m)
	case *previewReady:
		e.onPreviewReady(m)
	case *retryNoted:
		if e.turn != nil && m.epoch == e.epoch && e.turn.streaming {
			e.publish(&event.Retrying{Attempt: m.n.Attempt, MaxAttempts: m.n.Of, DelayMS: m.n.Delay.Milliseconds(), Reason: m.n.Reason})
		}
	case *journaled:
		e.onJournaled(c, m)
	case *foldDone:
		e.onFoldDone(c, m)
	case *fleetmsg.FleetResult:
		if e.bg.IsFleet(m.FleetID) {
			e.onBackgroundFleet(c, m)
		} else if e.ledger.Settle(fleetKey(m.FleetID)) {
			e.onFleetResult(c, m)
		}
	case *fleetmsg.TaskEnded:
		if e.bg.Ended(m.Agent, m.Name, m.Result) {
			e.backgroundChanged(c)
		}
	case *fleetmsg.FollowupStarted:
		e.bg.Followup(m.Agent, m.Run)
	case *fleetmsg.MessageToParent:
		e.onMessage(c, m.ID, m.From, m.Name, team.MessageText(m.From, m.Name, m.Text), func() {})
	case *team.Deliver:
		sender := c.Sender()
		e.onMessage(c, m.ID, m.From, m.FromName, m.UserText(), func() {
			if sender != nil {
				c.Send(sender, &team.Undelivered{Task: e.spec.Task, Message: m})
			}
		})
	case *fleetmsg.MessageSent:
		if e.ledger.Settle(m.Ref) {
			e.onMessageSent(c, m)
		}
	case *fleetmsg.FleetStatus:
		if e.ledger.Settle(m.Ref) {
			e.onStatus(c, m, "")
		}
	case *waitExpired:
		e.onWaitExpired(c, m)
	case *team.QueryBackground:
		_, items := e.bg.Outstanding()
		c.Respond(&team.BackgroundStatus{Running: e.bg.Running(), Undelivered: items})
	case *team.CancelBackground:
		e.cancelAllBackground(c)
	case *kernel.Crashed:
		e.repair(c, m)
	case *actor.Stopping:
		if e.turn != nil {
			e.abortWork(c)
			e.closeOpenCalls("Error: the session stopped before this call returned")
			e.endTurn(c, event.StatusCancelled, "session stopped")
		}
		e.ledger.DropAll()
		// A subagent's transcript lives exactly as long as its executor.
		if cl, ok := e.spec.Transcript.(interface{ Close() error }); ok {
			if err := cl.Close(); err != nil {
				e.log.Warn("close transcript", "err", err)
			}
		}
	}
}

// callKey and fleetKey name the executor's ledger entries.
func callKey(callID string) string   { return "call/" + callID }
func fleetKey(fleetID string) string { return "fleet/" + fleetID }

// repair brings the executor back to a known-good state after a handler
// panicked: the running turn, if any, stops everything it started (stream,
// runners, fleets, approvals), every tool call of the last step gets a
// result (the one it produced, or a synthetic error), so the message list
// stays valid for the next request, and the turn ends as failed with the
// reason. A RunTurn whose handler crashed before the turn began is
// answered the same way. A result or message the crashed handler was
// given is kept (keepLost); a subagent's turn that ends gives its unread
// messages back (returnMessages).
func (e *executor) repair(c actor.Context, m *kernel.Crashed) {
	reason := m.Error()
	t := e.turn
	kept := e.keepLost(c, m.Lost, m.Sender)
	if t == nil {
		if kept {
			defer e.backgroundChanged(c)
		}
		if _, ok := m.Lost.(*RunTurn); ok && m.Sender != nil {
			c.Request(m.Sender, &TurnFinished{Session: e.spec.Session, Task: e.spec.Task, Status: event.StatusFailed, Error: reason})
		}
		e.ledger.Reconcile(c)
		return
	}
	if t.streaming {
		e.keepPartial()
	}
	e.abortWork(c)
	e.closeOpenCalls("Error: " + reason)
	e.publish(&event.ErrorOccurred{Message: reason})
	e.endTurn(c, event.StatusFailed, reason)
}

// closeOpenCalls appends a tool message for every call of the last step
// that has none: the result the call produced when there is one, else
// fallback. Tool calls and results then stay paired whatever ended the
// turn.
func (e *executor) closeOpenCalls(fallback string) {
	t := e.turn
	for _, call := range session.OpenCalls(e.msgs) {
		out := fallback
		if t != nil {
			for i, c := range t.calls {
				if c.ID == call.ID && i < len(t.results) && t.results[i] != nil {
					out = t.results[i].Output
				}
			}
		}
		e.append(provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: out})
	}
}

func (e *executor) publish(ev event.Event) {
	if e.spec.Bus == nil {
		return
	}
	m := ev.EventMeta()
	m.Session, m.Task, m.Role = e.spec.Session, e.spec.Task, e.spec.Role
	if e.spec.Meter != nil {
		e.spec.Meter.Publish(e.spec.Bus, ev)
		return
	}
	e.spec.Bus.Publish(ev)
}

func (e *executor) append(m provider.Message) {
	e.msgs = append(e.msgs, m)
	if e.spec.Transcript != nil {
		if err := e.spec.Transcript.Append(m); err != nil {
			// The turn goes on (the conversation is still in memory) but
			// the user must know their transcript is incomplete.
			e.log.Error("transcript append failed", "err", err)
			e.publish(&event.Notice{Level: "warn", Message: "transcript not saved: " + err.Error()})
		}
	}
}

func (e *executor) startTurn(c actor.Context, m *RunTurn) {
	if e.turn != nil {
		if s := c.Sender(); s != nil {
			c.Respond(&TurnFinished{Session: e.spec.Session, Task: e.spec.Task, Status: event.StatusFailed, Error: "a turn is already running"})
		}
		return
	}
	if m.Wake {
		if _, items := e.bg.Outstanding(); items == 0 {
			// Delivered already (a turn ran since the wake was asked for).
			if c.Sender() != nil {
				c.Respond(&TurnFinished{Session: e.spec.Session, Task: e.spec.Task, Status: event.StatusOK, Idle: true})
			}
			return
		}
		e.publish(&event.TurnStarted{Wake: true})
	}
	e.turn = &turn{replyTo: c.Sender(), tools: e.spec.Tools.Snapshot()}
	e.turn.schemaBytes = compact.SchemaSize(e.turn.tools.Schemas())
	if m.Wake {
		e.startStep(c)
		return
	}
	if m.Compact {
		// A built-in action: it changes the session, never reaches the
		// model as a prompt.
		e.turn.manual = true
		e.compactNow(c)
		return
	}
	e.append(provider.Message{Role: provider.RoleUser, Content: e.planTurnInput(m.Input)})
	e.startStep(c)
}

func (e *executor) startStep(c actor.Context) {
	t := e.turn
	if why := e.overBudget(); why != "" {
		// The work so far stays in the conversation; the turn stops short
		// of a request its budget does not cover.
		e.endTurn(c, event.StatusLimit, why)
		return
	}
	t.step++
	t.text.Reset()
	t.reasoning.Reset()
	t.calls = nil
	// A step boundary: what came back from the background goes in now.
	e.deliverBackground()
	if !e.maintain(c) {
		return // a fold runs first, or the turn ended
	}
	e.request(c)
}

// request sends the step's model request.
func (e *executor) request(c actor.Context) {
	t := e.turn
	e.epoch++
	epoch := e.epoch
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel, t.streaming = cancel, true
	t.reqMsgs = len(e.msgs)
	req := provider.Request{
		Model:           e.spec.Model,
		Messages:        slices.Clone(e.msgs),
		Tools:           t.tools.Schemas(),
		Temperature:     e.spec.Temperature,
		MaxTokens:       e.spec.MaxTokens,
		ReasoningEffort: e.spec.Effort,
	}
	self, p := c.Self(), e.spec.Provider
	sys := e.sys
	ctx = provider.WithRetryNotice(ctx, func(n provider.RetryNotice) { sys.Send(self, &retryNoted{epoch: epoch, n: n}) })
	e.sys.Go(func() {
		defer e.sys.Send(self, &streamClosed{epoch: epoch})
		ch, err := p.Stream(ctx, req)
		if err != nil {
			e.sys.Send(self, &StreamChunk{epoch: epoch, chunk: provider.Chunk{Type: provider.ChunkError, Err: err}})
			return
		}
		for ch := range ch {
			e.sys.Send(self, &StreamChunk{epoch: epoch, chunk: ch})
		}
	}, func(reason any, _ []byte) {
		e.sys.Send(self, &StreamChunk{epoch: epoch, chunk: provider.Chunk{Type: provider.ChunkError, Err: fmt.Errorf("provider crashed: %v", reason)}})
	})
}

func (e *executor) onChunk(c actor.Context, m *StreamChunk) {
	t := e.turn
	if t == nil || m.epoch != e.epoch || !t.streaming {
		return
	}
	ch := m.chunk
	switch ch.Type {
	case provider.ChunkText:
		t.text.WriteString(ch.Text)
		e.publish(&event.TextDelta{Text: ch.Text})
	case provider.ChunkReasoning:
		t.reasoning.WriteString(ch.Text)
		e.publish(&event.ReasoningDelta{Text: ch.Text})
	case provider.ChunkToolCall:
		if ch.ToolCall != nil {
			t.calls = append(t.calls, *ch.ToolCall)
		}
	case provider.ChunkUsage:
		if ch.Usage != nil {
			e.gauge.Observe(ch.Usage.PromptTokens, e.msgs[:min(t.reqMsgs, len(e.msgs))], t.schemaBytes)
			t.usage.Add(*ch.Usage)
			e.total.Add(*ch.Usage)
			e.publish(&event.UsageReported{Usage: *ch.Usage, Total: e.total})
		}
	case provider.ChunkDone:
		t.streaming = false
		t.cancel()
		e.finishStep(c)
	case provider.ChunkError:
		t.streaming = false
		t.cancel()
		e.keepPartial()
		if t.canceled {
			e.endTurn(c, event.StatusCancelled, "")
			return
		}
		msg, detail := "model request failed", ""
		if ch.Err != nil {
			msg, detail = ch.Err.Error(), provider.DetailOf(ch.Err)
		}
		e.publish(&event.ErrorOccurred{Message: msg, Detail: detail})
		e.endTurn(c, event.StatusFailed, msg)
	}
}

// keepPartial records the text a broken or cancelled stream delivered, so
// nothing the user saw is missing from the transcript. Tool calls of an
// unfinished step are dropped: they never ran and would have no results.
func (e *executor) keepPartial() {
	t := e.turn
	if t.text.Len() == 0 && t.reasoning.Len() == 0 {
		return
	}
	t.lastText = t.text.String()
	e.append(provider.Message{Role: provider.RoleAssistant, Content: t.text.String(), ReasoningContent: t.reasoning.String()})
}

func (e *executor) onStreamClosed(c actor.Context, m *streamClosed) {
	t := e.turn
	if t == nil || m.epoch != e.epoch || !t.streaming {
		return
	}
	e.onChunk(c, &StreamChunk{epoch: m.epoch, chunk: provider.Chunk{
		Type: provider.ChunkError,
		Err:  fmt.Errorf("model stream ended without completing"),
	}})
}

func (e *executor) finishStep(c actor.Context) {
	t := e.turn
	t.lastText = t.text.String()
	e.append(provider.Message{
		Role:             provider.RoleAssistant,
		Content:          t.text.String(),
		ReasoningContent: t.reasoning.String(),
		ToolCalls:        t.calls,
	})
	if len(t.calls) == 0 {
		if _, items := e.bg.Outstanding(); items > 0 && !t.canceled {
			// Something came back while the model answered: it reads it
			// before the turn ends.
			e.startStep(c)
			return
		}
		e.endTurn(c, event.StatusOK, "")
		return
	}
	t.results = make([]*ToolResult, len(t.calls))
	t.groups = e.batch(t.calls)
	t.group = -1
	t.runners = map[string]runnerRef{}
	t.approvals = map[string]int{}
	t.approvalTimers = map[string]*time.Timer{}
	t.approvalOnce = map[string]bool{}
	t.fleets, t.fleetAt = map[string]int{}, map[string]time.Time{}
	// The calls may change the world: they start only once the message
	// that asks for them is in the transcript, so a session resumed after
	// a kill knows they may have run.
	if b, ok := e.spec.Transcript.(interface{ Barrier(func(error)) }); ok {
		t.journaling = true
		sys, self, epoch := e.sys, c.Self(), e.epoch
		b.Barrier(func(error) { sys.Send(self, &journaled{epoch: epoch}) })
		return
	}
	e.nextGroup(c)
}

// onJournaled starts the step's tool calls once the transcript holds the
// message that made them.
func (e *executor) onJournaled(c actor.Context, m *journaled) {
	t := e.turn
	if t == nil || m.epoch != e.epoch || !t.journaling {
		return
	}
	t.journaling = false
	e.nextGroup(c)
}

// batch splits a step's calls into groups run one after another: a run of
// consecutive read-only calls forms one parallel group, each writer runs
// alone, so writers keep the order the model gave them.
func (e *executor) batch(calls []provider.ToolCall) [][]int {
	var groups [][]int
	var readers []int
	for i, call := range calls {
		t, ok := e.turn.tools.Get(call.Name)
		if !ok || t.ReadOnly() {
			readers = append(readers, i)
			continue
		}
		if len(readers) > 0 {
			groups = append(groups, readers)
			readers = nil
		}
		groups = append(groups, []int{i})
	}
	if len(readers) > 0 {
		groups = append(groups, readers)
	}
	return groups
}

func (e *executor) nextGroup(c actor.Context) {
	t := e.turn
	for {
		t.group++
		if t.group >= len(t.groups) {
			e.finishTools(c)
			return
		}
		for _, i := range t.groups[t.group] {
			e.dispatch(c, i)
		}
		if t.pending > 0 {
			return
		}
	}
}

func (e *executor) dispatch(c actor.Context, i int) {
	t := e.turn
	call := t.calls[i]
	started := &event.ToolStarted{CallID: call.ID, Tool: call.Name, Args: call.Arguments}
	if t.canceled {
		e.publish(started)
		e.record(&ToolResult{CallID: call.ID, Name: call.Name, IsError: true, Cancelled: true, Output: "Error: cancelled by the user before it ran"}, i)
		return
	}
	tl, ok := t.tools.Get(call.Name)
	if !ok {
		e.publish(started)
		e.record(&ToolResult{CallID: call.ID, Name: call.Name, IsError: true,
			Output: fmt.Sprintf("Error: unknown tool %q; available tools: %s", call.Name, strings.Join(t.tools.Names(), ", "))}, i)
		return
	}
	if e.planDispatch(c, i, tl) {
		return
	}
	g := e.windowPermissions().CheckTool(tl, call.Arguments)
	switch g.Decision {
	case permission.Deny:
		e.publish(started)
		e.record(blocked(call, g.Reason), i)
		return
	case permission.Ask:
		// The call waits for the user; the rest of the group runs on.
		id := e.approvalID(call.ID)
		t.approvals[id] = i
		t.pending++
		e.publish(&event.ToolWaiting{CallID: call.ID, Tool: call.Name, Args: call.Arguments, RequestID: id})
		t.approvalOnce[id] = g.Once
		e.askApproval(c, &event.ApprovalRequested{RequestID: id, CallID: call.ID, Tool: call.Name, Args: call.Arguments,
			Reason: g.Reason, Suggestions: g.Suggest, OnceOnly: g.Once}, tl)
		if d := e.spec.ApprovalTimeout; d > 0 {
			sys, self := e.sys, c.Self()
			t.approvalTimers[id] = time.AfterFunc(d, func() { sys.Send(self, &approvalExpired{requestID: id}) })
		}
		return
	}
	t.pending++
	e.publish(started)
	e.run(c, i, tl)
}

// approvalID names an approval request uniquely in the tree:
// <session>/<call> for the main executor, <session>/<task>/<call> for a
// subagent, so a frontend's answer can be routed to whoever asked.
func (e *executor) approvalID(callID string) string {
	if e.spec.Task == "" {
		return e.spec.Session + "/" + callID
	}
	return e.spec.Session + "/" + e.spec.Task + "/" + callID
}

// run starts an allowed (or approved) call: a delegation goes to the
// scheduler, anything else to a tool runner. The caller has counted it in
// t.pending.
func (e *executor) run(c actor.Context, i int, tl tool.Tool) {
	if team.IsBackground(tl) {
		e.runBackgroundTool(c, i)
		return
	}
	if team.IsDelegation(tl) {
		e.delegate(c, i)
		return
	}
	e.spawnRunner(c, i, tl)
}

// delegate sends a task, fleet or parallel_tasks call to the scheduler; the
// caller has counted it in t.pending. Its FleetResult becomes the result.
func (e *executor) delegate(c actor.Context, i int) {
	t := e.turn
	call := t.calls[i]
	fail := func(msg string) {
		t.pending--
		e.record(&ToolResult{CallID: call.ID, Name: call.Name, IsError: true, Output: "Error: " + msg}, i)
	}
	if e.spec.Scheduler == nil {
		fail("subagents are not available in this session")
		return
	}
	e.fleetSeq++
	id := fmt.Sprintf("f%d", e.fleetSeq)
	specs, err := team.ParseDelegation(call.Name, call.Arguments, id)
	if err == nil {
		err = e.bg.CheckNames(specs)
	}
	if err != nil {
		fail(err.Error())
		return
	}
	if team.InBackground(call.Arguments) {
		e.delegateBackground(c, i, id, specs)
		return
	}
	t.fleets[id], t.fleetAt[id] = i, time.Now()
	// A fleet may run for as long as its tasks do; the wait ends early only
	// if the scheduler stops, and then every task is reported failed.
	e.ledger.Request(c, fleetKey(id), e.spec.Scheduler, &fleetmsg.SubmitFleet{FleetID: id, Tasks: specs}, 0,
		func(c actor.Context, why string) {
			res := &fleetmsg.FleetResult{FleetID: id}
			for _, s := range specs {
				res.Results = append(res.Results, event.TaskResult{TaskID: s.ID, Status: event.TaskFailed, Error: "scheduler: " + why})
			}
			e.onFleetResult(c, res)
		})
}

// onFleetResult records a delegation call's outcome.
func (e *executor) onFleetResult(c actor.Context, m *fleetmsg.FleetResult) {
	t := e.turn
	if t == nil || t.fleets == nil {
		return
	}
	i, ok := t.fleets[m.FleetID]
	if !ok {
		return
	}
	delete(t.fleets, m.FleetID)
	took := time.Since(t.fleetAt[m.FleetID])
	delete(t.fleetAt, m.FleetID)
	call := t.calls[i]
	out, isErr := team.FormatFleet(call.Name, m)
	t.pending--
	e.record(&ToolResult{CallID: call.ID, Name: call.Name, Output: out, IsError: isErr, Duration: took}, i)
	if t.pending == 0 {
		e.nextGroup(c)
	}
}

// spawnRunner starts the tool runner of call i; the caller has counted it
// in t.pending. The runner answers on its own timer even when its tool
// ignores its context; the ledger backs that up should the runner itself
// die or fall silent.
func (e *executor) spawnRunner(c actor.Context, i int, tl tool.Tool) {
	t := e.turn
	call := t.calls[i]
	timeout := e.spec.ToolTimeout
	if d, ok := e.spec.ToolTimeouts[call.Name]; ok {
		timeout = d
	}
	// A tool with its own cap (an MCP tool's tool_timeout_seconds) reports
	// its timeout itself; the runner's cap only backs it up.
	if tt, ok := tl.(interface{ Timeout() time.Duration }); ok && timeout > 0 {
		if own := tt.Timeout(); own > 0 && own+5*time.Second > timeout {
			timeout = own + 5*time.Second
		}
	}
	grace := e.spec.ToolGrace
	if grace <= 0 {
		grace = DefaultToolGrace
	}
	props, err := toolRunnerProps(e.sys, tl, timeout, grace, e.log)
	if err != nil {
		t.pending--
		e.record(&ToolResult{CallID: call.ID, Name: call.Name, IsError: true, Output: "Error: " + err.Error()}, i)
		return
	}
	pid := c.Spawn(props)
	t.runners[call.ID] = runnerRef{pid: pid, index: i}
	backstop := time.Duration(0)
	if timeout > 0 {
		backstop = timeout + 3*grace
	}
	e.ledger.Request(c, callKey(call.ID), pid, &RunTool{CallID: call.ID, Name: call.Name, Args: call.Arguments}, backstop,
		func(c actor.Context, why string) {
			e.onToolResult(c, &ToolResult{CallID: call.ID, Name: call.Name, IsError: true,
				Output: fmt.Sprintf("Error: tool %s did not return a result: its runner %s", call.Name, why)})
		})
}

// blocked is the result of a call the permission policy or the user
// refused. It says "Blocked" so the model adapts instead of retrying.
func blocked(call provider.ToolCall, reason string) *ToolResult {
	return &ToolResult{CallID: call.ID, Name: call.Name, IsError: true,
		Output: fmt.Sprintf("Blocked: %s. The call was not run. Do not retry it as is; take another approach or ask the user.", reason)}
}

// onApproval applies the user's answer to a pending approval.
func (e *executor) onApproval(c actor.Context, m *ApprovalResponse) {
	t := e.turn
	if t == nil || t.approvals == nil {
		return
	}
	i, ok := t.approvals[m.RequestID]
	if !ok {
		return
	}
	delete(t.approvals, m.RequestID)
	if tm := t.approvalTimers[m.RequestID]; tm != nil {
		tm.Stop()
		delete(t.approvalTimers, m.RequestID)
	}
	if i == guardCall {
		e.onGuardAnswer(c, m)
		return
	}
	call := t.calls[i]
	if m.Choice == event.ApproveDeny || t.canceled {
		t.pending--
		reason := m.Reason
		switch {
		case t.canceled:
			reason = "the turn was cancelled before the user approved it"
		case reason == "" && call.Name == ToolExitPlanMode:
			reason = "the user did not approve the plan; revise it, or ask what to change"
		case reason == "":
			reason = "denied by the user"
		}
		e.publish(&event.ApprovalResolved{RequestID: m.RequestID, CallID: call.ID, Decision: event.ApproveDeny, Reason: reason})
		e.publish(&event.ToolStarted{CallID: call.ID, Tool: call.Name, Args: call.Arguments})
		e.record(blocked(call, reason), i)
		if t.pending == 0 {
			e.nextGroup(c)
		}
		return
	}
	tl, _ := t.tools.Get(call.Name) // present: the turn's tools never change
	if call.Name == ToolExitPlanMode {
		e.publish(&event.ApprovalResolved{RequestID: m.RequestID, CallID: call.ID, Decision: m.Choice})
		e.publish(&event.ToolStarted{CallID: call.ID, Tool: call.Name, Args: call.Arguments})
		t.pending--
		e.approvePlan(i)
		if t.pending == 0 {
			e.nextGroup(c)
		}
		return
	}
	// A call that needs a person every time (a tool such as remember, a
	// write to a trust-bearing file) is approved for this call only,
	// whatever scope the answer named.
	once := t.approvalOnce[m.RequestID]
	delete(t.approvalOnce, m.RequestID)
	e.publish(&event.ApprovalResolved{RequestID: m.RequestID, CallID: call.ID, Decision: m.Choice})
	if (m.Choice == event.ApproveSession || m.Choice == event.ApproveAlways) && !once {
		e.grant(call, m)
	}
	e.publish(&event.ToolStarted{CallID: call.ID, Tool: call.Name, Args: call.Arguments})
	e.run(c, i, tl)
	if t.pending == 0 && t.results[i] != nil {
		// It ended at once (a background delegation, a refused one): the
		// step goes on as when a runner answers.
		e.nextGroup(c)
	}
}

// onApprovalExpired denies a call nobody approved in time.
func (e *executor) onApprovalExpired(c actor.Context, m *approvalExpired) {
	if e.turn == nil {
		return
	}
	e.onApproval(c, &ApprovalResponse{RequestID: m.requestID, Choice: event.ApproveDeny,
		Reason: fmt.Sprintf("nobody approved it within %s", e.spec.ApprovalTimeout)})
}

// grant records the approved scope for the session and, for "always",
// saves it to the project config in the background.
func (e *executor) grant(call provider.ToolCall, m *ApprovalResponse) {
	p := e.spec.Permissions
	rule := m.Rule
	if rule == "" && p.Policy != nil {
		if s := p.Policy.Suggest(call.Name, json.RawMessage(call.Arguments)); len(s) > 0 {
			rule = s[0]
		}
	}
	if rule == "" || p.Grants == nil {
		return
	}
	if err := p.Grants.Add(rule); err != nil {
		e.publish(&event.Notice{Level: "warn", Message: fmt.Sprintf("could not grant %s: %v", rule, err)})
		return
	}
	if m.Choice != event.ApproveAlways || p.ProjectFile == "" {
		return
	}
	file, home, bus, meta := p.ProjectFile, p.TrustHome, e.spec.Bus, event.Meta{Session: e.spec.Session, Task: e.spec.Task}
	e.sys.Go(func() {
		trusted, err := persistRule(home, file, rule)
		if err != nil && bus != nil {
			bus.Publish(&event.Notice{Meta: meta, Level: "warn", Message: fmt.Sprintf("could not save %s to %s: %v", rule, file, err)})
			return
		}
		if bus == nil {
			return
		}
		msg := fmt.Sprintf("saved %s to %s", rule, file)
		if !trusted {
			msg += `; later sessions honour it once you trust this workspace ("reasonix trust")`
		}
		bus.Publish(&event.Notice{Meta: meta, Level: "info", Message: msg})
	}, nil)
}

// persistRule saves an "always" rule to the project file. The edit is the
// user's own, so a workspace trusted before it stays trusted after it
// (trust.Keep); it reports whether the workspace is trusted, that is,
// whether later sessions will honour the rule. An empty home keeps no
// trust store.
func persistRule(home, file, rule string) (bool, error) {
	if home == "" {
		return true, permission.PersistRule(file, rule)
	}
	before, err := trust.Keep(home, filepath.Dir(file), func() error { return permission.PersistRule(file, rule) })
	return before == trust.Trusted, err
}

// record stores a call's result and publishes it.
func (e *executor) record(res *ToolResult, i int) {
	t := e.turn
	t.results[i] = res
	out := res.Output
	if len(out) > event.MaxEventOutput {
		out = out[:event.MaxEventOutput]
	}
	e.publish(&event.ToolFinished{CallID: res.CallID, Tool: res.Name, IsError: res.IsError,
		DurationMS: res.Duration.Milliseconds(), Output: out, OutputBytes: len(res.Output)})
}

// onToolResult records a call's result; the ledger has settled it, so
// each call is recorded once, whether its runner answered or the ledger
// made the answer.
func (e *executor) onToolResult(c actor.Context, m *ToolResult) {
	t := e.turn
	if t == nil {
		return
	}
	ref, ok := t.runners[m.CallID]
	if !ok || t.results[ref.index] != nil {
		return
	}
	delete(t.runners, m.CallID)
	c.Stop(ref.pid)
	t.pending--
	e.record(m, ref.index)
	if t.pending == 0 {
		e.nextGroup(c)
	}
}

func (e *executor) finishTools(c actor.Context) {
	t := e.turn
	for i, res := range t.results {
		e.append(provider.Message{Role: provider.RoleTool, ToolCallID: t.calls[i].ID, Name: res.Name, Content: res.Output})
	}
	// The round counts for the budget (the progress lease) whatever ends
	// the turn next.
	stop := ""
	if b := e.spec.Budget; b != nil && !t.canceled {
		stop = b.Round(t.calls, t.results)
	}
	crash := ""
	for _, res := range t.results {
		if res.Crashed && crash == "" {
			crash = strings.TrimPrefix(res.Output, "Error: ")
		}
	}
	switch {
	case t.canceled:
		e.endTurn(c, event.StatusCancelled, "")
	case t.endAfterTools:
		t.lastText = t.lastPlan
		e.endTurn(c, event.StatusOK, "")
	case e.spec.FailOnCrash && crash != "":
		e.publish(&event.ErrorOccurred{Message: crash})
		e.endTurn(c, event.StatusFailed, crash)
	case e.spec.MaxSteps > 0 && t.step >= e.spec.MaxSteps:
		e.endTurn(c, event.StatusMaxSteps, fmt.Sprintf("stopped after %d steps (max steps reached)", t.step))
	case stop != "":
		e.endTurn(c, event.StatusLimit, stop)
	case e.guarded(c):
		// The turn ended, or waits for the user's go-on.
	default:
		e.startStep(c)
	}
}

func (e *executor) cancelTurn(c actor.Context) {
	t := e.turn
	if t == nil || t.canceled {
		return
	}
	t.canceled = true
	if t.streaming || t.fold != nil {
		// The stream (or fold) goroutine sees the cancelled context and
		// reports back, which ends the turn as cancelled.
		t.cancel()
		return
	}
	e.cancelRunners(c)
	waited := len(t.waits) > 0
	e.cancelWaits(true)
	e.cancelApprovals(c)
	e.cancelFleets(c)
	if waited && e.turn == t && t.pending == 0 {
		e.nextGroup(c)
	}
}

// cancelFleets cancels the turn's fleets; their FleetResults (with every
// task cancelled or finished) still arrive and end the calls.
func (e *executor) cancelFleets(c actor.Context) {
	ids := make([]string, 0, len(e.turn.fleets))
	for id := range e.turn.fleets {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		c.Send(e.spec.Scheduler, &fleetmsg.CancelFleet{FleetID: id})
	}
}

// cancelApprovals ends the calls still waiting for the user.
func (e *executor) cancelApprovals(c actor.Context) {
	t := e.turn
	if t.approvals == nil {
		return
	}
	ids := make([]string, 0, len(t.approvals))
	for id := range t.approvals {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		e.onApproval(c, &ApprovalResponse{RequestID: id, Choice: event.ApproveDeny})
	}
}

func (e *executor) cancelRunners(c actor.Context) {
	for _, ref := range e.turn.runners {
		c.Send(ref.pid, &CancelTool{})
	}
}

// abortWork stops whatever the turn has in flight without waiting: the
// stream, the tool runners (stopped, which cancels their tools), the
// fleets (cancelled at the scheduler) and the approvals (resolved as
// denied). Their late answers find no turn and are dropped.
func (e *executor) abortWork(c actor.Context) {
	t := e.turn
	if t.cancel != nil {
		t.cancel()
	}
	t.streaming = false
	t.fold = nil
	t.canceled = true
	for _, ref := range t.runners {
		c.Stop(ref.pid)
	}
	t.runners = map[string]runnerRef{}
	if len(t.fleets) > 0 && e.spec.Scheduler != nil {
		e.cancelFleets(c)
	}
	t.fleets = nil
	for id, tm := range t.approvalTimers {
		tm.Stop()
		delete(t.approvalTimers, id)
	}
	ids := make([]string, 0, len(t.approvals))
	for id := range t.approvals {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		callID := ""
		if i := t.approvals[id]; i != guardCall {
			callID = t.calls[i].ID
		}
		e.publish(&event.ApprovalResolved{RequestID: id, CallID: callID, Decision: event.ApproveDeny, Reason: "the turn ended"})
	}
	t.approvals = nil
	e.cancelWaits(false)
	e.ledger.DropAll()
}

func (e *executor) endTurn(c actor.Context, status, errMsg string) {
	t := e.turn
	e.turn = nil
	for _, tm := range t.approvalTimers {
		tm.Stop()
	}
	e.epoch++ // late chunks of this turn's stream are stale
	if status == event.StatusOK {
		// What came back in the turn's last moments gets a turn of its own.
		defer e.backgroundChanged(c)
	}
	e.returnMessages(c)
	if t.replyTo != nil {
		c.Request(t.replyTo, &TurnFinished{ // Request: the scheduler tells its subagents apart by sender
			Session: e.spec.Session,
			Task:    e.spec.Task,
			Status:  status,
			Text:    t.lastText,
			Error:   errMsg,
			Steps:   t.step,
			Usage:   t.usage,
		})
	}
}
