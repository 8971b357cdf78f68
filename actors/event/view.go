package event

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// View folds a session's events into the state a frontend shows: whether a
// turn runs, what waits behind it, what waits for the user, the subagent
// tasks, the MCP servers and the posture. It is a pure fold, so the state
// at seq N is whatever events 1..N make it, however they were delivered (a
// live subscription, a replay, both overlapping), and a frontend attaching
// late can be handed a Snapshot and the events after its Seq. A View is not
// safe for concurrent use; Viewer is the goroutine-safe form.
type View struct {
	// session limits the fold to one session's events; empty folds all.
	session string

	seq     int64
	dropped int64
	running bool
	prompt  string
	queued  []string
	// approvals and elicitations are kept in the order they were asked.
	approvals    []PendingApproval
	elicitations []PendingElicitation
	tasks        []TaskSnapshot
	taskIndex    map[string]int
	mcp          map[string]MCPServerState
	posture      string
	effort       string
}

// NewView returns an empty view of session's events; an empty session
// takes every event (one session per bus).
func NewView(session string) *View {
	return &View{session: session}
}

// Snapshot is a View's state at one seq, copied so it can be handed to
// another goroutine or encoded as JSON while the view moves on. Its JSON
// form is the snapshot a frontend gets when it attaches (docs/SPEC.md).
type Snapshot struct {
	// Session is the session folded, empty for a view of every session.
	Session string `json:"session,omitempty"`
	// Seq is the last event applied; replaying from after it continues the
	// snapshot without gap or overlap.
	Seq int64 `json:"seq"`
	// Dropped counts events the fold never saw (lagged): when it is not
	// zero the rest may be wrong, and the frontend should say so.
	Dropped int64 `json:"dropped,omitempty"`
	// Running says a turn of the session is in progress; Prompt is its
	// prompt as turn_started gave it.
	Running bool   `json:"running"`
	Prompt  string `json:"prompt,omitempty"`
	// Queued are the prompts waiting behind the running turn, in order.
	Queued []string `json:"queued"`
	// Approvals and Elicitations wait for the user's answer.
	Approvals    []PendingApproval    `json:"approvals"`
	Elicitations []PendingElicitation `json:"elicitations"`
	// Tasks are the session's subagent tasks, in the order queued,
	// finished ones included so a late frontend can show a fleet's results.
	Tasks []TaskSnapshot `json:"tasks"`
	// MCP is the latest state of each MCP server, by name.
	MCP []MCPServerState `json:"mcp"`
	// Posture is the approval posture a posture_changed last set; empty
	// when none has been seen (the configured posture is in force).
	Posture string `json:"posture,omitempty"`
	// Effort is the reasoning effort an effort_changed last set; empty
	// when none has been seen.
	Effort string `json:"effort,omitempty"`
}

// PendingApproval is an approval_requested not yet resolved.
type PendingApproval struct {
	Seq         int64    `json:"seq"`
	Task        string   `json:"task,omitempty"`
	RequestID   string   `json:"request_id"`
	CallID      string   `json:"call_id"`
	Tool        string   `json:"tool"`
	Args        string   `json:"args"`
	Reason      string   `json:"reason"`
	Suggestions []string `json:"suggestions"`
	// OnceOnly is the request's once_only: only allow once or deny apply.
	OnceOnly bool `json:"once_only,omitempty"`
}

// PendingElicitation is an elicitation_requested that may still be open.
type PendingElicitation struct {
	Seq       int64           `json:"seq"`
	RequestID string          `json:"request_id"`
	Server    string          `json:"server"`
	Message   string          `json:"message"`
	Mode      string          `json:"mode,omitempty"`
	Schema    json.RawMessage `json:"schema,omitempty"`
	URL       string          `json:"url,omitempty"`
}

// The states of a task in a snapshot.
const (
	taskQueued  = "queued"
	taskRunning = "running"
	taskDone    = "done"
)

// TaskSnapshot is one subagent task as its task_queued, task_started and
// task_done events left it.
type TaskSnapshot struct {
	ID      string `json:"id"`
	Fleet   string `json:"fleet"`
	Prompt  string `json:"prompt"`
	Profile string `json:"profile,omitempty"`
	Writer  bool   `json:"writer"`
	Model   string `json:"model,omitempty"`
	// Worker is the worker host running (or that ran) the task, empty for
	// the session's own process; Attempt counts from 1, shown from 2.
	Worker  string `json:"worker,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// State is queued, running or done; Status (ok, failed, cancelled,
	// timed_out) and Error say how a done task ended.
	State  string `json:"state"`
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// Background marks a task its parent does not wait for; Name is its
	// name, when it has one.
	Background bool   `json:"background,omitempty"`
	Name       string `json:"name,omitempty"`
}

// MCPServerState is an MCP server as its latest mcp_server event gave it.
type MCPServerState struct {
	Server    string `json:"server"`
	Source    string `json:"source"`
	State     string `json:"state"`
	Tools     int    `json:"tools"`
	Prompts   int    `json:"prompts"`
	Resources int    `json:"resources"`
	Error     string `json:"error,omitempty"`
	Failures  int    `json:"failures,omitempty"`
}

// Apply folds one event in. An event at or below the last seq applied is
// a duplicate (a replay overlapping the live stream) and is skipped, so
// applying is idempotent. Events of other sessions only move Seq.
func (v *View) Apply(e Event) {
	if e == nil {
		return
	}
	m := e.EventMeta()
	if m.Seq != 0 {
		if m.Seq <= v.seq {
			return
		}
		v.seq = m.Seq
	}
	if l, ok := e.(*Lagged); ok {
		v.dropped += l.Dropped
		return
	}
	if v.session != "" && m.Session != v.session {
		return
	}
	switch ev := e.(type) {
	case *TurnStarted:
		v.turnStarted(ev)
	case *TurnDone:
		v.turnDone(ev)
	case *PromptQueued:
		v.queued = append(v.queued, ev.Prompt)
	case *ApprovalRequested:
		v.approvals = append(v.approvals, PendingApproval{Seq: ev.Seq, Task: ev.Task, RequestID: ev.RequestID,
			CallID: ev.CallID, Tool: ev.Tool, Args: ev.Args, Reason: ev.Reason, Suggestions: slices.Clone(ev.Suggestions),
			OnceOnly: ev.OnceOnly})
	case *ApprovalResolved:
		v.approvals = slices.DeleteFunc(v.approvals, func(a PendingApproval) bool { return a.RequestID == ev.RequestID })
	case *ElicitationRequested:
		v.elicitations = append(v.elicitations, PendingElicitation{Seq: ev.Seq, RequestID: ev.RequestID, Server: ev.Server,
			Message: ev.Message, Mode: ev.Mode, Schema: slices.Clone(ev.Schema), URL: ev.URL})
	case *MCPServerUpdated:
		v.mcpServer(ev)
	case *TaskQueued:
		t := v.task(ev.Task)
		t.Fleet, t.Prompt, t.Profile, t.Writer, t.State = ev.Fleet, ev.Prompt, ev.Profile, ev.Writer, taskQueued
		t.Background, t.Name = ev.Background, ev.Name
	case *TaskStarted:
		t := v.task(ev.Task)
		t.Fleet, t.Model, t.State, t.Worker, t.Attempt = ev.Fleet, ev.Model, taskRunning, ev.Worker, ev.Attempt
	case *TaskRequeued:
		// The attempt was lost with its worker: the task waits again, and
		// nothing the lost attempt asked can be answered any more.
		t := v.task(ev.Task)
		t.Fleet, t.State = ev.Fleet, taskQueued
		v.approvals = slices.DeleteFunc(v.approvals, func(a PendingApproval) bool { return a.Task == ev.Task })
	case *TaskDone:
		t := v.task(ev.Task)
		t.Fleet, t.State, t.Status, t.Error = ev.Fleet, taskDone, ev.Status, ev.Error
		t.Worker, t.Attempt = ev.Worker, ev.Attempt
		// A task's task_done is its last event, so nothing it asked can
		// still be answered.
		v.approvals = slices.DeleteFunc(v.approvals, func(a PendingApproval) bool { return a.Task == ev.Task })
	case *PostureChanged:
		v.posture = ev.Posture
	case *EffortChanged:
		v.effort = ev.Effort
	}
}

// turnStarted: a queued prompt leaves the queue when its turn starts. The
// session starts queued prompts first in, first out, and starts a prompt
// directly only when nothing is queued, so the head is the one starting.
func (v *View) turnStarted(ev *TurnStarted) {
	if len(v.queued) > 0 {
		v.queued = v.queued[1:]
	}
	v.running, v.prompt = true, ev.Prompt
}

// turnDone ends the session's turn (a subagent's turn_done, with its task
// set, is not the session's). A turn_done with no turn running is a queued
// prompt the session failed without starting it (no executor), so it
// leaves the queue too. What the turn asked cannot outlive it: its
// approvals are resolved before turn_done, and an elicitation is a
// question of an MCP call the turn made, which has ended — there is no
// event for an elicitation's answer, so this is where the view lets one
// go.
func (v *View) turnDone(ev *TurnDone) {
	if ev.Task != "" {
		return
	}
	if !v.running && len(v.queued) > 0 {
		v.queued = v.queued[1:]
	}
	v.running, v.prompt = false, ""
	v.approvals = slices.DeleteFunc(v.approvals, func(a PendingApproval) bool { return a.Task == "" })
	v.elicitations = nil
}

// mcpServer records a server's state. A server that is no longer ready
// lost the connection its elicitations were asked on, which cancels them.
func (v *View) mcpServer(ev *MCPServerUpdated) {
	if v.mcp == nil {
		v.mcp = map[string]MCPServerState{}
	}
	v.mcp[ev.Server] = MCPServerState{Server: ev.Server, Source: ev.Source, State: ev.State, Tools: ev.Tools,
		Prompts: ev.Prompts, Resources: ev.Resources, Error: ev.Error, Failures: ev.Failures}
	if ev.State != MCPReady {
		v.elicitations = slices.DeleteFunc(v.elicitations, func(p PendingElicitation) bool { return p.Server == ev.Server })
	}
}

// task is the entry of task id, made on first sight: a view that starts
// mid-stream may see a task's later events first.
func (v *View) task(id string) *TaskSnapshot {
	if v.taskIndex == nil {
		v.taskIndex = map[string]int{}
	}
	i, ok := v.taskIndex[id]
	if !ok {
		i = len(v.tasks)
		v.taskIndex[id] = i
		v.tasks = append(v.tasks, TaskSnapshot{ID: id})
	}
	return &v.tasks[i]
}

// Snapshot copies the view's state. Its slices are never nil, so the JSON
// form always has every list.
func (v *View) Snapshot() Snapshot {
	s := Snapshot{
		Session:      v.session,
		Seq:          v.seq,
		Dropped:      v.dropped,
		Running:      v.running,
		Prompt:       v.prompt,
		Queued:       append([]string{}, v.queued...),
		Approvals:    make([]PendingApproval, len(v.approvals)),
		Elicitations: make([]PendingElicitation, len(v.elicitations)),
		Tasks:        append([]TaskSnapshot{}, v.tasks...),
		MCP:          make([]MCPServerState, 0, len(v.mcp)),
		Posture:      v.posture,
		Effort:       v.effort,
	}
	for i, a := range v.approvals {
		a.Suggestions = slices.Clone(a.Suggestions)
		s.Approvals[i] = a
	}
	for i, e := range v.elicitations {
		e.Schema = slices.Clone(e.Schema)
		s.Elicitations[i] = e
	}
	for _, m := range v.mcp {
		s.MCP = append(s.MCP, m)
	}
	slices.SortFunc(s.MCP, func(a, b MCPServerState) int { return strings.Compare(a.Server, b.Server) })
	return s
}

// Viewer keeps a View of one session up to date from its own lossless
// subscription, read by a goroutine it owns, so any goroutine can ask for
// a Snapshot at any time. It subscribes from the start of the bus's
// history, so a viewer made after events were published still sees them
// (or counts them as dropped when the bus no longer keeps them).
type Viewer struct {
	sub  *Subscription
	done chan struct{}

	mu   sync.Mutex
	view *View
	// changed is closed, and replaced, each time an event is applied, so
	// WaitSeq can wait without polling.
	changed chan struct{}
}

// NewViewer starts a viewer of session's events on bus. Close stops it.
func NewViewer(bus *Bus, session string) *Viewer {
	v := &Viewer{
		sub:     bus.SubscribeFrom(0, 0),
		done:    make(chan struct{}),
		view:    NewView(session),
		changed: make(chan struct{}),
	}
	go v.run()
	return v
}

func (v *Viewer) run() {
	defer close(v.done)
	for {
		// Next ends with ErrClosed once Close closes the subscription.
		e, err := v.sub.Next(context.Background())
		if err != nil {
			return
		}
		v.mu.Lock()
		v.view.Apply(e)
		close(v.changed)
		v.changed = make(chan struct{})
		v.mu.Unlock()
	}
}

// Snapshot is the view's current state.
func (v *Viewer) Snapshot() Snapshot {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.view.Snapshot()
}

// errViewerClosed is WaitSeq's error once the viewer is closed.
var errViewerClosed = errors.New("viewer closed")

// WaitSeq waits until the view has applied the event with seq (or a later
// one) and returns the snapshot then, so a frontend can take a snapshot
// consistent with Bus.LastSeq. It fails when ctx ends or the viewer is
// closed first.
func (v *Viewer) WaitSeq(ctx context.Context, seq int64) (Snapshot, error) {
	for {
		v.mu.Lock()
		if v.view.seq >= seq {
			s := v.view.Snapshot()
			v.mu.Unlock()
			return s, nil
		}
		changed := v.changed
		v.mu.Unlock()
		select {
		case <-changed:
		case <-v.done:
			return Snapshot{}, fmt.Errorf("wait for seq %d: %w", seq, errViewerClosed)
		case <-ctx.Done():
			return Snapshot{}, fmt.Errorf("wait for seq %d: %w", seq, ctx.Err())
		}
	}
}

// Close stops the viewer and waits for its goroutine. Closing twice is
// harmless.
func (v *Viewer) Close() {
	v.sub.Close()
	<-v.done
}
