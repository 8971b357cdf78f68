package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/actors/goalctl"
	"reasonix/actors/kernel"
	"reasonix/actors/mcpconn"
	"reasonix/core/goal"
	"reasonix/core/permission"
	"reasonix/core/prompt"
	"reasonix/core/ref"
	"reasonix/core/text"
)

// SessionSpec configures a session supervisor.
type SessionSpec struct {
	// Agent configures the executor. Its Session and Bus are the session's.
	Agent agent.AgentSpec
	// Cwd and Transcript are reported in SessionStarted.
	Cwd        string
	Transcript string
	// MCP lists the session's MCP servers; each gets a connection actor.
	MCP mcpconn.MCPSpec
	// Fleet, when set, gives the session a scheduler for subagent tasks
	// and the executor the task, fleet and parallel_tasks tools.
	Fleet *fleet.FleetSpec
	// Planner, when set, makes the session a two-model run: a coordinator
	// in place of the executor, with a planner beside it.
	Planner *PlannerSpec
	// Goal, when set, gives the session long autonomous goals: a goal
	// controller wraps whatever would have been the executor.
	Goal *GoalSpec
}

// GoalSpec gives a session long autonomous goals (see goalctl.Spec).
type GoalSpec = goalctl.Spec

// sessionActor supervises one chat or run session. It is the entry point
// frontends talk to: it forwards turns to its executor, guarantees each
// RunTurn exactly one TurnFinished (even if the executor dies) and
// publishes TurnDone for observers.
type sessionActor struct {
	sys      *kernel.System
	spec     SessionSpec
	executor *actor.PID
	// scheduler owns the session's subagent tasks; nil without a fleet.
	// fleetSpec is its spec, to start it again when it stops; schedulerSeq
	// numbers its incarnations and restarts dates the recent restarts.
	// fleets are the delegation calls passed on to it (session_fleet.go).
	scheduler    *actor.PID
	fleetSpec    *fleet.FleetSpec
	schedulerSeq int
	restarts     []time.Time
	fleets       map[string]*fleetWait
	// replyTo is the requester of the running turn; running says whether
	// one is in flight (a turn started with Send has no requester).
	replyTo *actor.PID
	running bool
	// current is the running turn's request, so a repair can tell a
	// prompt it already took from one it lost.
	current *agent.RunTurn
	// mcp is the MCP part (mcp_session.go); nil without MCP servers.
	mcp *mcpSession
	// ledger holds the running turn's request to the executor, the fleets
	// at the scheduler and the held turn's MCP fetches.
	ledger *kernel.Ledger
	// queue holds the prompts that arrived during a turn, in order.
	queue []queuedTurn
	// Answers records whether the message being handled has its answer,
	// for the repair of a crash in its handler.
	kernel.Answers
	// saves is the account of what the session could not write; a turn
	// that ends with something unsaved is StatusIncomplete.
	saves *agent.SaveLog
	// saving is the turn that ended at the executor and waits for its
	// records to be on disk (turnSaved) before it ends here; saveSeq
	// numbers those waits and saveTimer bounds the one in progress.
	saving    *agent.TurnFinished
	saveSeq   int
	saveTimer *time.Timer
	// stopping is set once the session stops: no queued prompt starts.
	stopping bool
	// delegator is the agent that sent the last fleet: background results
	// and messages for "parent" go to it. wake says it asked for a turn
	// for what came back (background_session.go).
	delegator *actor.PID
	wake      bool
	// checkedWake says the delegator, asked (wakeKey in the ledger)
	// whether a wake turn has something to deliver, said yes.
	checkedWake bool
}

// saveWait bounds how long a turn's end waits for its transcript to be
// written; a disk that slow counts as one that did not take it.
const saveWait = 10 * time.Second

// queuedTurn is a prompt waiting for the running turn to end.
type queuedTurn struct {
	turn    *agent.RunTurn
	replyTo *actor.PID
}

// turnKey is the session's ledger entry for the turn at its executor.
const turnKey = "turn"

func sessionProps(sys *kernel.System, spec SessionSpec) *actor.Props {
	log := spec.Agent.Logger
	if log == nil {
		log = sys.Logger()
	}
	saves := agent.NewSaveLog(spec.Agent.Bus, spec.Agent.Session, log)
	return kernel.Props("session", log, func() actor.Actor {
		return &sessionActor{sys: sys, spec: spec, ledger: kernel.NewLedger(sys), saves: saves}
	}, actor.WithGuardian(kernel.StopOnFailure))
}

// Receive implements actor.Actor.
func (s *sessionActor) Receive(c actor.Context) {
	msg := c.Message()
	if s.ledger.Receive(c, msg) {
		return
	}
	switch m := msg.(type) {
	case *actor.Started:
		s.start(c)
	case *agent.RunTurn:
		s.runTurn(c, m)
	case *agent.CancelTurn:
		if s.cancelHeldTurn(c) {
			break
		}
		if s.executor != nil {
			c.Send(s.executor, m)
		}
	case *agent.ApprovalResponse:
		s.routeApproval(c, m)
	case *QueryBusy:
		c.Respond(&BusyStatus{Running: s.running, Queued: len(s.queue)})
		s.Answer()
	case *agent.SetPosture:
		s.setPosture(c, m)
	case *agent.SetEffort:
		if s.executor != nil {
			c.Send(s.executor, m)
		}
		s.spec.Agent.Effort = m.Effort
		s.publish(&event.EffortChanged{Effort: m.Effort})
	case mcpconn.McpMessage:
		s.receiveMCP(c, m)
	case *fleetmsg.SubmitFleet:
		s.submitFleet(c, m)
	case *fleetmsg.FleetResult:
		if s.ledger.Settle(fleetWaitKey(m.FleetID)) {
			s.endFleet(c, m.FleetID, m)
		}
	case *fleetmsg.CancelFleet:
		s.cancelFleet(c, m)
	case *fleetmsg.CancelTask:
		if s.scheduler != nil {
			c.Send(s.scheduler, m)
		}
	case *fleetmsg.QueryFleet:
		if s.scheduler == nil {
			c.Respond(&fleetmsg.FleetStatus{Ref: m.Ref})
		} else {
			c.Forward(s.scheduler)
		}
		s.Answer()
	case *fleetmsg.TaskEnded, *fleetmsg.MessageToParent, *fleetmsg.FollowupStarted, *fleetmsg.SendMessage,
		*team.BackgroundWake, *team.BackgroundStatus, *team.QueryBackground, *team.CancelBackground:
		s.background(c, m)
	case *agent.TurnFinished:
		if s.ledger.Settle(turnKey) {
			s.finish(c, m)
		}
	case *turnSaved:
		s.onSaved(c, m)
	case *kernel.Crashed:
		s.repair(c, m)
	case *actor.Terminated:
		if s.executor != nil && m.Who.Equal(s.executor) {
			s.executor = nil
		}
		if s.scheduler != nil && m.Who.Equal(s.scheduler) {
			s.restartScheduler(c) // nil, and status answered here, when it is not
		}
		s.mcpChildStopped(c, m.Who)
	case *actor.Stopping:
		s.stopping = true
		s.ledger.DropAll()
		if s.saving != nil {
			// The turn's reply must not be lost with the session: it ends
			// with what is known of its records now.
			s.onSaved(c, &turnSaved{seq: s.saveSeq})
		}
	}
}

// forward hands the turn to the executor. The ledger guarantees the turn
// ends once: with the executor's TurnFinished, or failed if the executor
// stops without one.
func (s *sessionActor) forward(c actor.Context, m *agent.RunTurn) {
	id := s.spec.Agent.Session
	s.ledger.Request(c, turnKey, s.executor, m, 0, func(c actor.Context, why string) {
		s.finish(c, &agent.TurnFinished{Session: id, Status: event.StatusFailed, Error: "executor " + why})
	})
}

// repair brings the session back to a known state after a handler
// panicked: the MCP part is rebuilt from the connections (a held turn
// fails), waits on actors that are gone end, a running turn that no longer
// has a request at the executor fails with the reason, and the message
// whose handler crashed is answered or applied: a turn request fails (with
// turn_done, so frontends that sent it learn of it), the executor's reply
// ends the turn as failed, a cancel is passed on again.
func (s *sessionActor) repair(c actor.Context, m *kernel.Crashed) {
	reason := m.Error()
	id := s.spec.Agent.Session
	s.repairMCP(c, reason)
	s.ledger.Reconcile(c)
	s.repairFleets(c)
	switch lost := m.Lost.(type) {
	case *fleetmsg.SubmitFleet:
		if s.fleets[lost.FleetID] == nil && m.Sender != nil {
			c.Send(m.Sender, failedFleet(lost, "not scheduled: "+reason))
		}
	case *fleetmsg.FleetResult:
		// The scheduler's answer stands: the crash was the session's.
		if s.ledger.Settle(fleetWaitKey(lost.FleetID)) {
			s.endFleet(c, lost.FleetID, lost)
		}
	case *agent.RunTurn:
		if !s.running {
			s.running, s.replyTo = true, m.Sender
		} else if lost != s.current && !s.queued(lost) {
			// A prompt that came during a turn is kept, not lost.
			s.queue = append(s.queue, queuedTurn{turn: lost, replyTo: m.Sender})
		}
	case *agent.TurnFinished:
		if s.ledger.Settle(turnKey) {
			s.finish(c, &agent.TurnFinished{Session: id, Status: event.StatusFailed, Error: reason, Text: lost.Text, Steps: lost.Steps, Usage: lost.Usage})
		}
	case *turnSaved:
		if s.saving != nil && lost.seq == s.saveSeq {
			// Whether the records were written is not known any more.
			s.deliver(c, withUnsaved(s.saving, "incomplete: transcript not saved: not known whether it was written: "+reason))
		}
	case *agent.CancelTurn:
		if s.executor != nil {
			c.Send(s.executor, lost)
		}
	case *fleetmsg.QueryFleet:
		if m.Sender != nil && !s.Answered() {
			c.Respond(&fleetmsg.FleetStatus{})
		}
	case *mcpconn.QueryMCP:
		if m.Sender != nil && !s.Answered() {
			c.Respond(s.mcpStatus())
		}
	case *QueryBusy:
		if m.Sender != nil && !s.Answered() {
			c.Respond(&BusyStatus{Running: s.running, Queued: len(s.queue)})
		}
	}
	if s.running && s.saving == nil && !s.ledger.Pending(turnKey) && (s.mcp == nil || s.mcp.held == nil) {
		s.finish(c, &agent.TurnFinished{Session: id, Status: event.StatusFailed, Error: reason})
	}
}

func (s *sessionActor) start(c actor.Context) {
	a := s.spec.Agent
	a.Saves = s.saves
	s.saves.Watch(a.Transcript, "transcript", true)
	if s.spec.Fleet != nil {
		fs := *s.spec.Fleet
		fs.Saves = s.saves
		s.fleetSpec, s.fleets = &fs, map[string]*fleetWait{}
		if err := s.spawnScheduler(c); err != nil {
			panic(err) // a name clash is a bug; the repair reports it
		}
		// Delegation comes here: the session outlives a scheduler that stops.
		a.Scheduler = c.Self()
		for _, t := range team.DelegationTools() {
			if err := a.Tools.Replace(t); err != nil {
				s.sys.Logger().Error("register delegation tool", "tool", t.Name(), "err", err)
			}
		}
	}
	if a.PlanMode {
		for _, t := range agent.PlanModeTools() {
			if err := a.Tools.Replace(t); err != nil {
				s.sys.Logger().Error("register plan-mode tool", "tool", t.Name(), "err", err)
			}
		}
	}
	if g := s.spec.Goal; g != nil {
		// The executor under a goal answers to its budgets at every step.
		a.Budget = goalctl.NewMeter(g.Now)
	}
	var inner *actor.Props
	if p := s.spec.Planner; p != nil {
		reports := &planReports{}
		if err := a.Tools.Replace(&planReportTool{reports: reports}); err != nil {
			s.sys.Logger().Error("register plan_report", "err", err)
		}
		plan := *p
		plan.Agent.Session, plan.Agent.Bus, plan.Agent.Role = a.Session, a.Bus, event.RolePlanner
		plan.Agent.Saves = s.saves
		s.saves.Watch(plan.Agent.Transcript, "planner transcript", true)
		a.Role = event.RoleExecutor
		inner = coordinatorProps(s.sys, a, plan, reports)
	} else {
		inner = agent.ExecutorProps(s.sys, a)
	}
	if g := s.spec.Goal; g != nil {
		inner = goalctl.Props(s.sys, a, *g, inner)
	}
	s.executor = c.Spawn(inner)
	s.startMCP(c)
	if a.Bus != nil {
		a.Bus.Publish(&event.SessionStarted{
			Meta:       event.Meta{Session: a.Session},
			Model:      a.Model,
			Cwd:        s.spec.Cwd,
			Transcript: s.spec.Transcript,
			Tools:      a.Tools.Names(),
		})
	}
}

// runTurn starts a turn, or queues it behind the running one (prompt_queued)
// unless the caller asked to be refused instead (prompt_rejected). Every
// prompt taken gets exactly one turn_done; a refused one gets a failed
// TurnFinished when it was a request.
func (s *sessionActor) runTurn(c actor.Context, m *agent.RunTurn) {
	if s.executor == nil || (s.running && m.Reject) {
		reason := "a turn is already running"
		if s.executor == nil {
			reason = "the session has no executor"
		}
		s.publish(&event.PromptRejected{Prompt: text.OneLine(m.Input, 200), Reason: reason})
		if c.Sender() != nil {
			c.Respond(&agent.TurnFinished{Session: s.spec.Agent.Session, Status: event.StatusFailed, Error: reason})
		}
		return
	}
	if s.running {
		s.queue = append(s.queue, queuedTurn{turn: m, replyTo: c.Sender()})
		s.publish(&event.PromptQueued{Prompt: text.OneLine(m.Input, 200), Position: len(s.queue)})
		return
	}
	s.begin(c, m, c.Sender())
}

// queued reports whether m is already in the queue.
func (s *sessionActor) queued(m *agent.RunTurn) bool {
	for _, q := range s.queue {
		if q.turn == m {
			return true
		}
	}
	return false
}

// begin runs m now.
func (s *sessionActor) begin(c actor.Context, m *agent.RunTurn, replyTo *actor.PID) {
	s.running, s.replyTo, s.current = true, replyTo, m
	// A turn may deliver what a checked wake was for: ask again after it.
	s.checkedWake = false
	if m.Wake {
		// The executor says whether there is a turn (turn_started) or
		// nothing left to deliver (an Idle reply, no events).
		s.wake = false
		s.forward(c, m)
		return
	}
	started := &event.TurnStarted{Prompt: text.OneLine(m.Input, 200)}
	if typed, files := ref.Split(prompt.WithoutPlanNote(m.Input)); typed != m.Input {
		started.Typed, started.Attachments = text.OneLine(typed, 200), files
	}
	s.publish(started)
	if s.holdForMCP(c, m) {
		return
	}
	s.forward(c, m)
}

// next starts the first queued prompt, if any.
func (s *sessionActor) next(c actor.Context) {
	if s.running || s.stopping {
		return
	}
	if len(s.queue) == 0 {
		switch {
		case !s.wake || s.executor == nil || s.ledger.Pending(wakeKey):
		case s.checkedWake:
			s.checkedWake = false
			s.begin(c, &agent.RunTurn{Wake: true}, nil)
		default:
			s.askWake(c)
		}
		return
	}
	q := s.queue[0]
	s.queue = s.queue[1:]
	if s.executor == nil {
		s.running, s.replyTo = true, q.replyTo
		s.finish(c, &agent.TurnFinished{Session: s.spec.Agent.Session, Status: event.StatusFailed, Error: "the session has no executor"})
		return
	}
	s.begin(c, q.turn, q.replyTo)
}

func (s *sessionActor) publish(ev event.Event) {
	if bus := s.spec.Agent.Bus; bus != nil {
		ev.EventMeta().Session = s.spec.Agent.Session
		bus.Publish(ev)
	}
}

// routeApproval hands an answer to whoever asked: the executor for
// <session>/<call>, the scheduler (and so the subagent) for
// <session>/<task>/<call>.
func (s *sessionActor) routeApproval(c actor.Context, m *agent.ApprovalResponse) {
	rest, ok := strings.CutPrefix(m.RequestID, s.spec.Agent.Session+"/")
	if ok && strings.Contains(rest, "/") {
		if s.scheduler != nil {
			c.Send(s.scheduler, m)
		}
		return
	}
	if s.executor != nil {
		c.Send(s.executor, m)
	}
}

// setPosture switches the posture of the executor and of every subagent.
func (s *sessionActor) setPosture(c actor.Context, m *agent.SetPosture) {
	if s.executor != nil {
		c.Send(s.executor, m)
	}
	if s.scheduler != nil {
		c.Send(s.scheduler, m)
	}
	s.spec.Agent.Permissions.Posture = permission.Posture(m.Posture)
	s.publish(&event.PostureChanged{Posture: m.Posture})
}

// finish ends the running turn once its records are safe: it waits for
// the transcript to hold everything appended so far (a barrier, bounded by
// saveWait), then ends the turn as onSaved decides. Every way a turn ends
// comes through here, so no turn reports ok over an unsaved transcript.
func (s *sessionActor) finish(c actor.Context, m *agent.TurnFinished) {
	if !s.running || s.saving != nil {
		return
	}
	s.saving = m
	s.saveSeq++
	seq := s.saveSeq
	b, ok := s.spec.Agent.Transcript.(interface{ Barrier(func(error)) })
	if !ok {
		s.onSaved(c, &turnSaved{seq: seq})
		return
	}
	sys, self := s.sys, c.Self()
	s.saveTimer = time.AfterFunc(saveWait, func() {
		sys.Send(self, &turnSaved{seq: seq, cause: fmt.Sprintf("not written within %s", saveWait)})
	})
	b.Barrier(func(err error) {
		saved := &turnSaved{seq: seq, written: err == nil}
		if err != nil {
			saved.cause = agent.SaveCause(err)
		}
		sys.Send(self, saved)
	})
}

// onSaved ends the turn that waited for its records: ok stays ok only when
// nothing of the session went unsaved; otherwise the turn is incomplete
// and says what was not saved and why. A late or repeated answer is
// ignored.
func (s *sessionActor) onSaved(c actor.Context, m *turnSaved) {
	if s.saving == nil || m.seq != s.saveSeq {
		return
	}
	if s.saveTimer != nil {
		s.saveTimer.Stop()
		s.saveTimer = nil
	}
	switch {
	case m.cause != "":
		s.saves.FailCause("transcript", m.cause, true)
	case m.written:
		// Everything appended so far is in the file, whatever the
		// transcript said of itself before.
		s.saves.Saved("transcript")
	}
	s.deliver(c, withUnsaved(s.saving, s.saves.Take()))
}

// withUnsaved is m as it ends when note (from saveLog.take) says something
// was not saved: an ok turn becomes StatusIncomplete with note as its
// error, any other keeps its status and gets note after its own error.
func withUnsaved(m *agent.TurnFinished, note string) *agent.TurnFinished {
	if note == "" {
		return m
	}
	out := *m
	switch {
	case out.Status == event.StatusOK:
		out.Status, out.Error = StatusIncomplete, note
	case out.Error == "":
		out.Error = note
	default:
		out.Error += "; " + note
	}
	return &out
}

// deliver ends the running turn with m: turn_done for observers, the reply
// for its requester, then the next queued prompt.
func (s *sessionActor) deliver(c actor.Context, m *agent.TurnFinished) {
	s.saving = nil
	if s.saveTimer != nil {
		s.saveTimer.Stop()
		s.saveTimer = nil
	}
	if !s.running {
		return
	}
	s.running = false
	if bus := s.spec.Agent.Bus; bus != nil && !m.Idle {
		bus.Publish(&event.TurnDone{
			Meta:   event.Meta{Session: m.Session},
			Status: m.Status,
			Text:   m.Text,
			Error:  m.Error,
			Steps:  m.Steps,
			Usage:  m.Usage,
		})
	}
	if s.replyTo != nil {
		c.Send(s.replyTo, m)
		s.replyTo = nil
	}
	s.next(c)
}

// Session is a running session supervisor, as seen from a frontend.
type Session struct {
	sys *kernel.System
	pid *actor.PID
	id  string
}

// StartSession spawns a session supervisor (and its executor) under the
// root of sys.
func StartSession(sys *kernel.System, spec SessionSpec) (*Session, error) {
	if spec.Agent.Provider == nil {
		return nil, errors.New("start session: no provider")
	}
	if spec.Agent.Tools == nil {
		return nil, errors.New("start session: no tool registry")
	}
	// The endpoint workers answer to must exist before any actor a worker
	// replies to is spawned: a PID made earlier carries no address.
	if err := fleet.StartWorkersRemote(sys, spec.Fleet); err != nil {
		sys.Logger().Warn("remote endpoint did not start; every task runs in this process", "err", err)
	}
	pid, err := sys.Root().SpawnNamed(sessionProps(sys, spec), "session/"+spec.Agent.Session)
	if err != nil {
		return nil, fmt.Errorf("start session: %w", err)
	}
	return &Session{sys: sys, pid: pid, id: spec.Agent.Session}, nil
}

// ID is the session ID.
func (s *Session) ID() string { return s.id }

// Run starts a turn, or queues it behind the running one (a prompt_queued
// event says so). Its end is published as a TurnDone event.
func (s *Session) Run(input string) {
	s.sys.Send(s.pid, turnOf(input, false))
}

// turnOf is the turn a typed input asks for. A typed /compact or /goal
// becomes the typed command here, at the door, so no actor behind the
// session has to read the text.
func turnOf(input string, reject bool) *agent.RunTurn {
	t := &agent.RunTurn{Input: input, Reject: reject, Compact: strings.TrimSpace(input) == "/compact"}
	if p, isGoal, err := goal.ParsePrompt(input); err != nil {
		t.GoalError = err.Error()
	} else if isGoal {
		t.Goal = &p
	}
	return t
}

// Submit is Run with a choice: reject refuses the prompt, with a
// prompt_rejected event, when a turn is already running.
func (s *Session) Submit(input string, reject bool) {
	s.sys.Send(s.pid, turnOf(input, reject))
}

// Compact queues a /compact turn: a fold of the older work now.
func (s *Session) Compact() {
	s.sys.Send(s.pid, &agent.RunTurn{Input: "/compact", Compact: true})
}

// Busy reports whether the session is running a turn or has prompts queued,
// counting every prompt sent from this goroutine before the call.
func (s *Session) Busy(timeout time.Duration) (bool, error) {
	st, err := ask[BusyStatus](s, &QueryBusy{}, timeout, "session status")
	if err != nil {
		return false, err
	}
	return st.Running || st.Queued > 0, nil
}

// SetEffort sets the reasoning effort of the session's next requests:
// low, medium, high or max.
func (s *Session) SetEffort(effort string) error {
	if !slices.Contains(event.Efforts, effort) {
		return fmt.Errorf("set effort: %q: want %s", effort, event.OrList(event.Efforts))
	}
	s.sys.Send(s.pid, &agent.SetEffort{Effort: effort})
	return nil
}

// SetPosture switches the approval posture: ask, auto or yolo.
func (s *Session) SetPosture(posture string) error {
	p, err := permission.ParsePosture(posture)
	if err != nil {
		return fmt.Errorf("set posture: %w", err)
	}
	s.sys.Send(s.pid, &agent.SetPosture{Posture: string(p)})
	return nil
}

// Cancel asks the running turn to stop; it ends with StatusCancelled.
func (s *Session) Cancel() {
	s.sys.Send(s.pid, &agent.CancelTurn{})
}

// CancelTask stops one subagent task; its siblings keep running and its
// fleet's result reports it cancelled.
func (s *Session) CancelTask(taskID string) {
	s.sys.Send(s.pid, &fleetmsg.CancelTask{TaskID: taskID})
}

// FleetStatus asks the session's scheduler for its state.
func (s *Session) FleetStatus(timeout time.Duration) (*fleetmsg.FleetStatus, error) {
	return ask[fleetmsg.FleetStatus](s, &fleetmsg.QueryFleet{}, timeout, "fleet status")
}

// Approve answers an ApprovalRequested event.
func (s *Session) Approve(r *agent.ApprovalResponse) {
	s.sys.Send(s.pid, r)
}

// Close stops the session and its children, waiting at most timeout. A
// running turn is cancelled first.
func (s *Session) Close(timeout time.Duration) error {
	s.sys.Send(s.pid, &agent.CancelTurn{})
	return s.sys.Stop(s.pid, timeout)
}

// WaitTurn reads sub until this session's TurnDone and returns it, handing
// every other event to each (which may be nil).
func WaitTurn(ctx context.Context, sub *event.Subscription, session string, each func(event.Event)) (*event.TurnDone, error) {
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			return nil, err
		}
		if each != nil {
			each(ev)
		}
		if td, ok := ev.(*event.TurnDone); ok && td.Session == session && td.Task == "" {
			return td, nil
		}
	}
}
