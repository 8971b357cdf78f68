package actors

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/core/provider"
	"reasonix/core/tool"
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
	Task     string
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
	// ToolTimeout caps one tool call; ToolTimeouts overrides it per tool.
	// Zero means no cap.
	ToolTimeout  time.Duration
	ToolTimeouts map[string]time.Duration
	Temperature  float64
	Effort       string
	Transcript   Transcript
	Bus          *Bus
	Logger       *slog.Logger
}

// executor runs the agent loop of one session: request → stream → tool
// calls → results → repeat. It owns the session's message list, which only
// grows between compactions, so every request's prefix is byte-identical to
// the previous one and the provider's prompt cache keeps hitting.
type executor struct {
	sys  *System
	spec AgentSpec
	log  *slog.Logger
	msgs []provider.Message
	turn *turn
	// epoch numbers streams; chunks from an older epoch are stale.
	epoch int
	total provider.Usage
}

// runnerRef links a running tool runner to its call.
type runnerRef struct {
	pid   *actor.PID
	index int
}

// turn is the state of the running turn.
type turn struct {
	replyTo *actor.PID
	step    int
	usage   provider.Usage

	// streaming phase
	cancel    context.CancelFunc
	streaming bool
	text      strings.Builder
	reasoning strings.Builder
	calls     []provider.ToolCall
	lastText  string

	// tool phase
	results  []*ToolResult
	groups   [][]int
	group    int
	runners  map[string]runnerRef // by runner PID id
	pending  int
	canceled bool
}

func executorProps(sys *System, spec AgentSpec) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return newExecutor(sys, spec)
	}, actor.WithSupervisor(stopOnFailure))
}

func newExecutor(sys *System, spec AgentSpec) *executor {
	log := spec.Logger
	if log == nil {
		log = sys.Logger()
	}
	e := &executor{sys: sys, spec: spec, log: log.With("session", spec.Session, "task", spec.Task)}
	if len(spec.History) > 0 {
		e.msgs = slices.Clone(spec.History)
	} else {
		e.append(provider.Message{Role: provider.RoleSystem, Content: spec.System})
	}
	return e
}

// Receive implements actor.Actor. A panic in a handler is a bug, but it is
// survived: the turn fails with the reason and the session stays usable,
// because the message list is consistent at message granularity.
func (e *executor) Receive(c actor.Context) {
	defer func() {
		if r := recover(); r != nil {
			e.log.Error("executor panic", "reason", fmt.Sprint(r), "stack", string(debug.Stack()))
			if e.turn != nil {
				e.abortWork(c)
				e.endTurn(c, StatusFailed, fmt.Sprintf("internal error: %v", r))
			}
		}
	}()
	switch m := c.Message().(type) {
	case *RunTurn:
		e.startTurn(c, m)
	case *CancelTurn:
		e.cancelTurn(c)
	case *streamChunk:
		e.onChunk(c, m)
	case *streamClosed:
		e.onStreamClosed(c, m)
	case *ToolResult:
		e.onToolResult(c, m)
	case *actor.Terminated:
		e.onChildStopped(c, m)
	case *actor.Stopping:
		if e.turn != nil {
			e.abortWork(c)
			e.endTurn(c, StatusCancelled, "session stopped")
		}
	}
}

func (e *executor) publish(ev Event) {
	if e.spec.Bus == nil {
		return
	}
	m := ev.meta()
	m.Session, m.Task = e.spec.Session, e.spec.Task
	e.spec.Bus.Publish(ev)
}

func (e *executor) append(m provider.Message) {
	e.msgs = append(e.msgs, m)
	if e.spec.Transcript != nil {
		if err := e.spec.Transcript.Append(m); err != nil {
			// The turn goes on (the conversation is still in memory) but
			// the user must know their transcript is incomplete.
			e.log.Error("transcript append failed", "err", err)
			e.publish(&Notice{Level: "warn", Message: "transcript not saved: " + err.Error()})
		}
	}
}

func (e *executor) startTurn(c actor.Context, m *RunTurn) {
	if e.turn != nil {
		if s := c.Sender(); s != nil {
			c.Respond(&TurnFinished{Session: e.spec.Session, Task: e.spec.Task, Status: StatusFailed, Error: "a turn is already running"})
		}
		return
	}
	e.turn = &turn{replyTo: c.Sender()}
	e.append(provider.Message{Role: provider.RoleUser, Content: m.Input})
	e.startStep(c)
}

func (e *executor) startStep(c actor.Context) {
	t := e.turn
	t.step++
	t.text.Reset()
	t.reasoning.Reset()
	t.calls = nil
	e.epoch++
	epoch := e.epoch
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel, t.streaming = cancel, true
	req := provider.Request{
		Model:           e.spec.Model,
		Messages:        slices.Clone(e.msgs),
		Tools:           e.spec.Tools.Schemas(),
		Temperature:     e.spec.Temperature,
		ReasoningEffort: e.spec.Effort,
	}
	self, p := c.Self(), e.spec.Provider
	e.sys.Go(func() {
		defer e.sys.Send(self, &streamClosed{epoch: epoch})
		ch, err := p.Stream(ctx, req)
		if err != nil {
			e.sys.Send(self, &streamChunk{epoch: epoch, chunk: provider.Chunk{Type: provider.ChunkError, Err: err}})
			return
		}
		for ch := range ch {
			e.sys.Send(self, &streamChunk{epoch: epoch, chunk: ch})
		}
	}, func(reason any, _ []byte) {
		e.sys.Send(self, &streamChunk{epoch: epoch, chunk: provider.Chunk{Type: provider.ChunkError, Err: fmt.Errorf("provider crashed: %v", reason)}})
	})
}

func (e *executor) onChunk(c actor.Context, m *streamChunk) {
	t := e.turn
	if t == nil || m.epoch != e.epoch || !t.streaming {
		return
	}
	ch := m.chunk
	switch ch.Type {
	case provider.ChunkText:
		t.text.WriteString(ch.Text)
		e.publish(&TextDelta{Text: ch.Text})
	case provider.ChunkReasoning:
		t.reasoning.WriteString(ch.Text)
		e.publish(&ReasoningDelta{Text: ch.Text})
	case provider.ChunkToolCall:
		if ch.ToolCall != nil {
			t.calls = append(t.calls, *ch.ToolCall)
		}
	case provider.ChunkUsage:
		if ch.Usage != nil {
			t.usage.Add(*ch.Usage)
			e.total.Add(*ch.Usage)
			e.publish(&UsageReported{Usage: *ch.Usage, Total: e.total})
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
			e.endTurn(c, StatusCancelled, "")
			return
		}
		msg := "model request failed"
		if ch.Err != nil {
			msg = ch.Err.Error()
		}
		e.publish(&ErrorOccurred{Message: msg})
		e.endTurn(c, StatusFailed, msg)
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
	e.onChunk(c, &streamChunk{epoch: m.epoch, chunk: provider.Chunk{
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
		e.endTurn(c, StatusOK, "")
		return
	}
	t.results = make([]*ToolResult, len(t.calls))
	t.groups = e.batch(t.calls)
	t.group = -1
	t.runners = map[string]runnerRef{}
	e.nextGroup(c)
}

// batch splits a step's calls into groups run one after another: a run of
// consecutive read-only calls forms one parallel group, each writer runs
// alone, so writers keep the order the model gave them.
func (e *executor) batch(calls []provider.ToolCall) [][]int {
	var groups [][]int
	var readers []int
	for i, call := range calls {
		t, ok := e.spec.Tools.Get(call.Name)
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
	e.publish(&ToolStarted{CallID: call.ID, Tool: call.Name, Args: call.Arguments})
	if t.canceled {
		e.record(&ToolResult{CallID: call.ID, Name: call.Name, IsError: true, Cancelled: true, Output: "Error: cancelled by the user before it ran"}, i)
		return
	}
	tl, ok := e.spec.Tools.Get(call.Name)
	if !ok {
		e.record(&ToolResult{CallID: call.ID, Name: call.Name, IsError: true,
			Output: fmt.Sprintf("Error: unknown tool %q; available tools: %s", call.Name, strings.Join(e.spec.Tools.Names(), ", "))}, i)
		return
	}
	timeout := e.spec.ToolTimeout
	if d, ok := e.spec.ToolTimeouts[call.Name]; ok {
		timeout = d
	}
	pid := c.Spawn(toolRunnerProps(e.sys, tl, timeout))
	t.runners[pid.Id] = runnerRef{pid: pid, index: i}
	t.pending++
	c.Request(pid, &RunTool{CallID: call.ID, Name: call.Name, Args: call.Arguments})
}

// record stores a call's result and publishes it.
func (e *executor) record(res *ToolResult, i int) {
	t := e.turn
	t.results[i] = res
	out := res.Output
	if len(out) > MaxEventOutput {
		out = out[:MaxEventOutput]
	}
	e.publish(&ToolFinished{CallID: res.CallID, Tool: res.Name, IsError: res.IsError,
		DurationMS: res.Duration.Milliseconds(), Output: out, OutputBytes: len(res.Output)})
}

func (e *executor) onToolResult(c actor.Context, m *ToolResult) {
	t := e.turn
	if t == nil || c.Sender() == nil {
		return
	}
	ref, ok := t.runners[c.Sender().Id]
	if !ok || t.results[ref.index] != nil {
		return
	}
	i := ref.index
	delete(t.runners, c.Sender().Id)
	c.Stop(ref.pid)
	t.pending--
	e.record(m, i)
	if t.pending == 0 {
		e.nextGroup(c)
	}
}

// onChildStopped turns a tool runner that died without replying into an
// error result, so the step still completes.
func (e *executor) onChildStopped(c actor.Context, m *actor.Terminated) {
	t := e.turn
	if t == nil || m.Who == nil {
		return
	}
	ref, ok := t.runners[m.Who.Id]
	if !ok {
		return
	}
	i := ref.index
	delete(t.runners, m.Who.Id)
	if t.results[i] != nil {
		return
	}
	t.pending--
	call := t.calls[i]
	e.record(&ToolResult{CallID: call.ID, Name: call.Name, IsError: true,
		Output: fmt.Sprintf("Error: tool %s stopped before returning a result", call.Name)}, i)
	if t.pending == 0 {
		e.nextGroup(c)
	}
}

func (e *executor) finishTools(c actor.Context) {
	t := e.turn
	for i, res := range t.results {
		e.append(provider.Message{Role: provider.RoleTool, ToolCallID: t.calls[i].ID, Name: res.Name, Content: res.Output})
	}
	switch {
	case t.canceled:
		e.endTurn(c, StatusCancelled, "")
	case e.spec.MaxSteps > 0 && t.step >= e.spec.MaxSteps:
		e.endTurn(c, StatusMaxSteps, fmt.Sprintf("stopped after %d steps (max steps reached)", t.step))
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
	if t.streaming {
		// The stream goroutine sees the cancelled context and delivers a
		// terminal error chunk, which ends the turn as cancelled.
		t.cancel()
		return
	}
	e.cancelRunners(c)
}

func (e *executor) cancelRunners(c actor.Context) {
	for _, ref := range e.turn.runners {
		c.Send(ref.pid, &CancelTool{})
	}
}

// abortWork cancels whatever the turn has in flight without waiting.
func (e *executor) abortWork(c actor.Context) {
	t := e.turn
	if t.cancel != nil {
		t.cancel()
	}
	t.streaming = false
	if t.runners != nil {
		e.cancelRunners(c)
		t.runners = map[string]runnerRef{}
	}
}

func (e *executor) endTurn(c actor.Context, status, errMsg string) {
	t := e.turn
	e.turn = nil
	e.epoch++ // late chunks of this turn's stream are stale
	if t.replyTo != nil {
		c.Send(t.replyTo, &TurnFinished{
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
