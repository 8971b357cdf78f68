package actors

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/scheduler"
)

// SubagentFactory builds the agent of one task: its own provider, tool
// registry, system prompt and transcript. It runs on the scheduler's
// mailbox, so it must be quick (no network). An error fails the task.
type SubagentFactory func(spec TaskSpec) (AgentSpec, error)

// FleetSpec configures a session's scheduler.
type FleetSpec struct {
	// MaxRunning and MaxWriters are the run and writer slots.
	MaxRunning int
	MaxWriters int
	// Root is the workspace root write paths are claimed in.
	Root string
	// TaskTimeout bounds one task; zero means none.
	TaskTimeout time.Duration
	// Grace is how long a cancelled or expired subagent may take to stop
	// before it is killed; zero means 10 s.
	Grace time.Duration
	// NewAgent builds each task's agent.
	NewAgent SubagentFactory
}

// fleetActor owns every subagent task of a session. It feeds the pure
// scheduler.Queue with events and applies its decisions: spawning a
// subagent (an executor child) when a slot frees, turning a crash, panic or
// timeout into a failed TaskResult, and replying to each SubmitFleet once
// all its tasks have ended. Subagents are never restarted.
type fleetActor struct {
	sys     *System
	spec    FleetSpec
	session string
	bus     *Bus
	log     *slog.Logger

	self   *actor.PID
	q      *scheduler.Queue
	fleets map[string]*fleet
	tasks  map[string]*runningTask
	byPID  map[string]string // subagent PID id → task id
	timer  *time.Timer
	// ticking says a fleetTick is scheduled or queued.
	ticking bool
}

type fleet struct {
	replyTo *actor.PID
	ids     []string
	results map[string]TaskResult
}

type runningTask struct {
	spec    TaskSpec
	fleet   string
	pid     *actor.PID
	started time.Time
	// deadline is when the task expires; zero for none.
	deadline time.Time
	// stopping is set once the task was told to stop (cancel or expiry).
	stopping bool
	reaper   *time.Timer
}

func fleetProps(sys *System, session string, bus *Bus, spec FleetSpec) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &fleetActor{sys: sys, spec: spec, session: session, bus: bus, log: sys.Logger().With("session", session, "actor", "fleet")}
	}, actor.WithSupervisor(stopOnFailure))
}

// Receive implements actor.Actor. A panic here is a bug, but the scheduler
// resumes with its state: the tasks it owns must still end exactly once.
func (f *fleetActor) Receive(c actor.Context) {
	defer func() {
		if r := recover(); r != nil {
			f.log.Error("fleet panic", "reason", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	switch m := c.Message().(type) {
	case *actor.Started:
		q, err := scheduler.New(scheduler.Config{MaxRunning: f.spec.MaxRunning, MaxWriters: f.spec.MaxWriters, Root: f.spec.Root})
		if err != nil {
			// Configuration was validated before; fall back to defaults so
			// tasks still get their terminal replies.
			f.log.Error("scheduler config", "err", err)
			q, _ = scheduler.New(scheduler.Config{Root: f.spec.Root})
		}
		f.self, f.q = c.Self(), q
		f.fleets, f.tasks, f.byPID = map[string]*fleet{}, map[string]*runningTask{}, map[string]string{}
	case *SubmitFleet:
		f.submit(c, m)
	case *TurnFinished:
		f.onFinished(c, m)
	case *actor.Terminated:
		f.onStopped(c, m)
	case *CancelFleet:
		f.cancelFleet(c, m.FleetID)
	case *CancelTask:
		f.cancelTask(c, m.TaskID)
	case *fleetTick:
		f.ticking = false
		f.expire(c)
	case *reapTask:
		if t, ok := f.tasks[m.taskID]; ok && t.pid != nil {
			f.log.Warn("subagent did not stop in time; killing it", "task", m.taskID)
			c.Stop(t.pid)
		}
	case *QueryFleet:
		c.Respond(f.status())
	case *actor.Stopping:
		if f.timer != nil {
			f.timer.Stop()
		}
		for _, t := range f.tasks {
			if t.reaper != nil {
				t.reaper.Stop()
			}
		}
	}
}

func (f *fleetActor) publish(ev Event, task string) {
	if f.bus == nil {
		return
	}
	m := ev.meta()
	m.Session, m.Task = f.session, task
	f.bus.Publish(ev)
}

func (f *fleetActor) submit(c actor.Context, m *SubmitFleet) {
	fl := &fleet{replyTo: c.Sender(), results: map[string]TaskResult{}}
	if _, dup := f.fleets[m.FleetID]; dup || m.FleetID == "" {
		if c.Sender() != nil {
			c.Respond(&FleetResult{FleetID: m.FleetID, Results: []TaskResult{{Status: TaskFailed, Error: "duplicate or empty fleet id"}}})
		}
		return
	}
	f.fleets[m.FleetID] = fl
	now := time.Now()
	for _, spec := range m.Tasks {
		fl.ids = append(fl.ids, spec.ID)
		f.publish(&TaskQueued{Fleet: m.FleetID, Prompt: excerpt(spec.Prompt, 200), Profile: spec.Profile, Writer: spec.Writer}, spec.ID)
		err := f.q.Submit(scheduler.Task{ID: spec.ID, Fleet: m.FleetID, Writer: spec.Writer, WritePaths: spec.WritePaths, Timeout: f.spec.TaskTimeout}, now)
		if err != nil {
			f.end(c, m.FleetID, TaskResult{TaskID: spec.ID, Status: TaskFailed, Error: "not scheduled: " + err.Error()})
			continue
		}
		f.tasks[spec.ID] = &runningTask{spec: spec, fleet: m.FleetID}
	}
	f.admit(c)
	f.maybeReply(c, m.FleetID)
}

// admit starts every task the policy admits now.
func (f *fleetActor) admit(c actor.Context) {
	for _, s := range f.q.Next(time.Now()) {
		t := f.tasks[s.Task.ID]
		if t == nil {
			continue
		}
		t.started, t.deadline = time.Now(), s.Deadline
		agent, err := f.spec.NewAgent(t.spec)
		if err != nil {
			f.finishTask(c, s.Task.ID, TaskResult{TaskID: s.Task.ID, Status: TaskFailed, Error: err.Error()})
			continue
		}
		agent.Session, agent.Task = f.session, s.Task.ID
		if agent.Bus == nil {
			agent.Bus = f.bus
		}
		// A subagent runs unattended: a crashing tool fails its task
		// instead of letting it carry on from a broken state.
		agent.FailOnCrash = true
		t.pid = c.Spawn(executorProps(f.sys, agent))
		f.byPID[t.pid.Id] = s.Task.ID
		c.Request(t.pid, &RunTurn{Input: t.spec.Prompt})
		f.publish(&TaskStarted{Fleet: t.fleet, Model: agent.Model}, s.Task.ID)
	}
	f.armTimer()
}

// armTimer schedules a deadline check at the earliest running deadline.
func (f *fleetActor) armTimer() {
	if f.ticking {
		return
	}
	var next time.Time
	for _, t := range f.tasks {
		if t.pid != nil && !t.stopping && !t.deadline.IsZero() && (next.IsZero() || t.deadline.Before(next)) {
			next = t.deadline
		}
	}
	if next.IsZero() {
		return
	}
	f.ticking = true
	sys, self := f.sys, f.self
	f.timer = time.AfterFunc(max(time.Until(next), 0), func() { sys.Send(self, &fleetTick{}) })
}

// expire cancels tasks past their deadline; each gets the grace period to
// stop before it is killed.
func (f *fleetActor) expire(c actor.Context) {
	for _, id := range f.q.Expired(time.Now()) {
		f.stopTask(c, id, "timed out")
	}
	f.armTimer()
}

// stopTask cancels a running task's subagent and arms its reaper.
func (f *fleetActor) stopTask(c actor.Context, id, why string) {
	t := f.tasks[id]
	if t == nil || t.pid == nil || t.stopping {
		return
	}
	t.stopping = true
	f.log.Info("stopping task", "task", id, "why", why)
	c.Send(t.pid, &CancelTurn{})
	grace := f.spec.Grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	sys, self := f.sys, f.self
	t.reaper = time.AfterFunc(grace, func() { sys.Send(self, &reapTask{taskID: id}) })
}

func (f *fleetActor) cancelFleet(c actor.Context, id string) {
	if _, ok := f.fleets[id]; !ok {
		return
	}
	res := f.q.CancelFleet(id, time.Now())
	for _, tid := range res.Dropped {
		f.end(c, id, TaskResult{TaskID: tid, Status: TaskCancelled, Error: "cancelled before it started"})
		delete(f.tasks, tid)
	}
	for _, tid := range res.Stopping {
		f.stopTask(c, tid, "fleet cancelled")
	}
	f.maybeReply(c, id)
}

func (f *fleetActor) cancelTask(c actor.Context, id string) {
	t := f.tasks[id]
	if t == nil {
		return
	}
	wasRunning, err := f.q.Cancel(id, time.Now())
	if err != nil {
		return // already stopping or ended
	}
	if !wasRunning {
		delete(f.tasks, id)
		f.end(c, t.fleet, TaskResult{TaskID: id, Status: TaskCancelled, Error: "cancelled before it started"})
		f.maybeReply(c, t.fleet)
		return
	}
	f.stopTask(c, id, "task cancelled")
}

// onFinished turns a subagent's TurnFinished into its task's result.
func (f *fleetActor) onFinished(c actor.Context, m *TurnFinished) {
	if c.Sender() == nil {
		return
	}
	id, ok := f.byPID[c.Sender().Id]
	if !ok {
		return
	}
	res := TaskResult{TaskID: id, Text: m.Text, Error: m.Error, Steps: m.Steps, Usage: m.Usage}
	switch m.Status {
	case StatusOK:
		res.Status = TaskOK
	case StatusCancelled:
		res.Status = TaskCancelled
		if res.Error == "" {
			res.Error = "cancelled"
		}
	default:
		res.Status = TaskFailed
	}
	f.finishTask(c, id, res)
}

// onStopped reports a subagent that died without finishing its turn.
func (f *fleetActor) onStopped(c actor.Context, m *actor.Terminated) {
	if m.Who == nil {
		return
	}
	id, ok := f.byPID[m.Who.Id]
	if !ok {
		return
	}
	delete(f.byPID, m.Who.Id)
	if _, live := f.tasks[id]; !live {
		return
	}
	f.finishTask(c, id, TaskResult{TaskID: id, Status: TaskFailed, Error: "subagent stopped before finishing its task"})
}

// finishTask releases the task's slots, records its result and admits
// what can start now.
func (f *fleetActor) finishTask(c actor.Context, id string, res TaskResult) {
	t := f.tasks[id]
	if t == nil {
		return
	}
	delete(f.tasks, id)
	if t.reaper != nil {
		t.reaper.Stop()
	}
	if t.pid != nil {
		delete(f.byPID, t.pid.Id)
		c.Stop(t.pid)
	}
	if !t.started.IsZero() {
		res.Duration = time.Since(t.started)
	}
	// A task that completed while being stopped keeps its answer; one
	// that ended because it was stopped reports why it was stopped.
	outcome, err := f.q.Finish(id, time.Now())
	if err == nil && res.Status != TaskOK {
		switch outcome {
		case scheduler.OutcomeExpired:
			res.Status = TaskTimedOut
			res.Error = fmt.Sprintf("timed out after %s", f.spec.TaskTimeout)
		case scheduler.OutcomeCancelled:
			res.Status = TaskCancelled
			res.Error = "cancelled"
		}
	}
	f.end(c, t.fleet, res)
	f.maybeReply(c, t.fleet)
	f.admit(c)
}

// end records a task's result and publishes task_done.
func (f *fleetActor) end(c actor.Context, fleetID string, res TaskResult) {
	fl := f.fleets[fleetID]
	if fl == nil {
		return
	}
	fl.results[res.TaskID] = res
	f.publish(&TaskDone{Fleet: fleetID, Status: res.Status, Error: res.Error, Steps: res.Steps,
		DurationMS: res.Duration.Milliseconds(), Usage: res.Usage}, res.TaskID)
}

// maybeReply sends the FleetResult once every task of the fleet has ended.
func (f *fleetActor) maybeReply(c actor.Context, fleetID string) {
	fl := f.fleets[fleetID]
	if fl == nil || len(fl.results) < len(fl.ids) {
		return
	}
	out := &FleetResult{FleetID: fleetID, Results: make([]TaskResult, 0, len(fl.ids))}
	for _, id := range fl.ids {
		out.Results = append(out.Results, fl.results[id])
	}
	delete(f.fleets, fleetID)
	if fl.replyTo != nil {
		c.Send(fl.replyTo, out)
	}
}

func (f *fleetActor) status() *FleetStatus {
	snap := f.q.Status()
	st := &FleetStatus{Queued: snap.Queued, Running: snap.Running, Writers: snap.Writers, Ended: snap.Ended}
	for _, t := range snap.Tasks {
		st.Tasks = append(st.Tasks, TaskState{TaskID: t.ID, Fleet: t.Fleet, State: t.State.String(), Writer: t.Writer})
	}
	return st
}

func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
