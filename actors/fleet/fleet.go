package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/actors/fleet/isolate"
	"reasonix/actors/fleet/link"
	"reasonix/actors/fleet/resume"
	"reasonix/actors/kernel"
	"reasonix/actors/remote"
	"reasonix/core/journal"
	"reasonix/core/panics"
	"reasonix/core/permission"
	"reasonix/core/provider"
	"reasonix/core/text"
	"reasonix/scheduler"
)

// SubagentFactory builds the agent of one task: its own provider, tool
// registry, system prompt and transcript. It runs on the scheduler's
// mailbox, so it must be quick (no network). An error fails the task.
type SubagentFactory func(spec event.TaskSpec) (agent.AgentSpec, error)

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
	// Isolator makes the worktrees of worktree writers; nil where there
	// is no git repository (a worktree task then fails). WriterIsolation
	// is the isolation of a writer that names none: "claims" (the
	// default) or "worktree" (fleet_worktree.go).
	Isolator        isolate.Isolator
	WriterIsolation string
	// WarmWait bounds how long a fan-out's siblings wait for the first
	// one's first token (see warmup); zero means DefaultWarmWait, negative
	// starts every sibling at once.
	WarmWait time.Duration
	// MinWarmPrefix is the size, in estimated tokens, below which a
	// prefix is not worth waiting to warm (see MeteredProvider); zero
	// means DefaultMinWarmPrefix, negative waits whatever the size.
	MinWarmPrefix int
	// Journal receives the scheduler's inputs before they are applied;
	// when nil and JournalHome is set, the journal under that reasonix
	// home is opened on the first fleet. Neither: fleets are not durable.
	Journal     FleetJournal
	JournalHome string

	// Workers are the worker hosts tasks may also be placed on
	// ([[workers]]); none: every task runs in this process.
	Workers []WorkerSpec
	// Remote is this process's endpoint for the workers (they answer to
	// it); nil when the System already has one or tests run in process.
	Remote *remote.RemoteOptions
	// Workspace is the checkout name workers must serve: the basename of
	// Root unless configured.
	Workspace string
	// Heartbeat and MissLimit bound how long a silent worker counts as
	// up: it is lost once MissLimit heartbeats in a row go unanswered.
	// Zero means 1 s and 3.
	Heartbeat time.Duration
	MissLimit int
	// RunLocal says this process runs tasks itself (MaxRunning slots)
	// besides its workers; false leaves the local node with no slots.
	// It matters only when Workers is non-empty.
	RunLocal bool
	// LostPolicy is what happens to a task whose worker was lost while
	// it ran: "rerun" (the default) queues it again, up to the attempt
	// limit; "fail" fails it.
	LostPolicy string

	// interactive says the parent has a frontend that answers a remote
	// subagent's approval requests.
	Interactive bool
	// warning, when set, says why configured workers are not used; the
	// scheduler publishes it as a notice when it starts.
	Warning string
	// saves, set by the session, hears of journal records that could not
	// be written and of subagents' transcripts that were not saved.
	Saves *agent.SaveLog

	// probe and target replace the link's gRPC probe and the worker
	// actor's PID (tests point links at in-process workers).
	Probe  func(ctx context.Context, address string) (time.Duration, error)
	Target func(w WorkerSpec) *actor.PID
}

// WorkerSpec is one configured worker host (see link.WorkerSpec).
type WorkerSpec = link.WorkerSpec

// fleetActor is the scheduler actor: it owns every subagent task of a
// session. It feeds the pure scheduler.Queue with events and applies its
// decisions: spawning a subagent (an executor child) when a slot frees,
// turning a crash, panic or timeout into a failed TaskResult, and replying
// to each SubmitFleet once all its tasks have ended and every subagent it
// started has stopped. Subagents are never restarted. Each task ends
// exactly once: its task_done is the last event of the task on the bus.
type fleetActor struct {
	sys     *kernel.System
	spec    FleetSpec
	session string
	bus     *event.Bus
	log     *slog.Logger

	self   *actor.PID
	q      *scheduler.Queue
	fleets map[string]*fleetCall
	tasks  map[string]*runningTask
	byPID  map[string]string // subagent PID id → task id
	// ledger holds each subagent's (or remote proxy's) RunTurn: it ends
	// with the TurnFinished, or with the task failed when the subagent
	// stops without one.
	ledger *kernel.Ledger
	// stopping maps a finished task's subagent (PID id) to its fleet
	// until the subagent has stopped.
	stopping map[string]string
	timer    *time.Timer
	// ticking says a fleetTick is scheduled or queued.
	ticking bool
	// starting is the task whose subagent factory is running, and
	// submitting the SubmitFleet being accepted: a crash there is repaired
	// by failing what they left half done.
	starting   string
	submitting *fleetmsg.SubmitFleet
	// posture, once a SetPosture came, is every subagent's posture.
	posture string
	// Answers records whether the message being handled has its answer,
	// for the repair of a crash in its handler.
	kernel.Answers
	// ownJournal is the journal the scheduler opened and must close.
	ownJournal interface{ Close() error }
	// broken lists the fleets whose journal failed during the handler
	// running now; they are ended when it returns (endBroken).
	broken []string

	// nodes are the worker hosts by name (nodeOrder as configured) and
	// links maps each link's PID id to its worker; schedID names this
	// scheduler to the workers. stoppingAll is set once the scheduler
	// stops, so a stopping link is not replaced.
	nodes       map[string]*workerNode
	nodeOrder   []string
	links       map[string]string
	schedID     string
	stoppingAll bool
	// unsettled names the workers whose links have not yet reported a
	// first verdict (up, refused, unreachable); admission waits for them
	// until settleBy, so a fleet given right after the session starts
	// does not run everything locally while the links are still dialling.
	unsettled   map[string]bool
	settleBy    time.Time
	settleTimer *time.Timer

	// agents are the session's agents by task id, names their ids by name
	// (fleet_messages.go).
	agents map[string]*agentRec
	names  map[string]string
	// runOf maps a follow-up's task id to its agent's.
	runOf map[string]string
	// msgSeq numbers the messages sent (team.Deliver.ID); returned holds
	// "<id>@<run>" for each message a run gave back.
	msgSeq   int
	returned map[string]bool
	// gitQ runs the git work of worktree writers; settling holds the
	// ended worktree tasks whose results wait for it (fleet_worktree.go).
	gitQ     *isolate.Queue
	settling map[string]*settling
}

// fleetCall is one SubmitFleet: its tasks, their results and its budget.
type fleetCall struct {
	replyTo *actor.PID
	ids     []string
	results map[string]event.TaskResult
	// live counts the fleet's subagents that have not stopped yet.
	live int
	// budget is the whole call's ceiling, shared out as tasks start;
	// created is when it was submitted, for its seconds.
	budget  event.Budget
	created time.Time
	// warm holds the fleet's shared prompt prefixes by prefixKey.
	warm map[string]*warmup
	// key names the fleet in the journal; empty when it is not journalled.
	key string
	// journalErr is the journal's failure once a record of the fleet could
	// not be written; ending says the fleet is being ended for it.
	journalErr error
	ending     bool
	// background says the submitter hears of each task as it ends
	// (TaskEnded).
	background bool
}

type runningTask struct {
	spec    event.TaskSpec
	fleet   string
	pid     *actor.PID
	started time.Time
	// deadline is when the task expires; zero for none.
	deadline time.Time
	// stopping is set once the task was told to stop (cancel or expiry).
	stopping bool
	reaper   *time.Timer
	// gate carries the subagent's events; closing it with task_done keeps
	// anything later off the bus.
	meter *team.TaskMeter
	// endpoint is the task's provider endpoint, empty when the provider
	// has no shared limiter.
	endpoint string
	// budget is the ceilings allotted when the task started, overAt when
	// its seconds run out (zero for none), and over the ceiling it
	// reached.
	budget event.Budget
	overAt time.Time
	over   string
	// held says the task has its slots but waits for its prefix to warm,
	// to start with heldDeadline; warmKey is set on a warmer.
	held         bool
	heldDeadline time.Time
	warmKey      string
	// prep is a held local task prepared while it waits (its agent built,
	// its budget allotted), so that its release costs only the journal
	// and the spawn.
	prep *prepared
	// node is the worker the current attempt is placed on ("" for this
	// process), epoch that worker's link epoch, attempt its number.
	node    string
	epoch   uint64
	attempt int
	// fence, while set, holds a lost writer's slots until its worker has
	// surely stopped it; fenceWhy is why the attempt was lost.
	fence    *time.Timer
	fenceWhy string
	// wt is a worktree writer's worktree, until its changes are settled;
	// making says it is being made (the task waits for it, with its slots,
	// to start with heldDeadline).
	wt     *isolate.Worktree
	making bool
}

// FleetProps spawns the scheduler of session, with the repair middleware.
func FleetProps(sys *kernel.System, session string, bus *event.Bus, spec FleetSpec) *actor.Props {
	log := sys.Logger().With("session", session, "actor", "scheduler")
	return kernel.Props("scheduler", log, func() actor.Actor {
		return &fleetActor{sys: sys, spec: spec, session: session, bus: bus, log: log, ledger: kernel.NewLedger(sys)}
	})
}

// Receive implements actor.Actor. A panic in a handler is repaired (see
// repair): the tasks the scheduler owns must still end exactly once.
func (f *fleetActor) Receive(c actor.Context) {
	if !f.ledger.Receive(c, c.Message()) {
		f.handle(c)
	}
	if len(f.broken) > 0 {
		f.endBroken(c)
	}
}

func (f *fleetActor) handle(c actor.Context) {
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
		f.fleets, f.tasks, f.byPID = map[string]*fleetCall{}, map[string]*runningTask{}, map[string]string{}
		f.stopping = map[string]string{}
		f.startWorkers(c)
	case *fleetmsg.SubmitFleet:
		f.submit(c, m)
	case *agent.TurnFinished:
		f.onFinished(c, m)
	case *actor.Terminated:
		if m.Who == nil || !f.onLinkStopped(c, m.Who) {
			f.onStopped(c, m)
		}
	case *link.Up:
		f.onWorkerUp(c, m)
	case *link.Lost:
		f.onWorkerLost(c, m)
	case *link.WorkerNote:
		f.onWorkerNote(c, m)
	case *requeueWriter:
		f.onRequeueWriter(c, m)
	case *workersSettled:
		f.unsettled = nil
		f.admit(c)
	case *fleetmsg.CancelFleet:
		f.cancelFleet(c, m.FleetID)
	case *fleetmsg.CancelTask:
		f.cancelTask(c, m.TaskID)
	case *fleetTick:
		f.ticking = false
		f.expire(c)
	case *worktreeMade:
		f.worktreeDone(c, m)
	case *worktreeSettled:
		f.worktreeSettledDone(c, m)
	case *prefixWarmed:
		f.warmed(c, m.fleet, m.key)
	case *TaskOverBudget:
		f.overBudget(c, m.TaskID, m.what)
	case *reapTask:
		if t, ok := f.tasks[m.taskID]; ok && t.pid != nil {
			f.log.Warn("subagent did not stop in time; killing it", "task", m.taskID)
			c.Stop(t.pid)
		}
	case *fleetmsg.QueryFleet:
		st := f.status()
		st.Ref = m.Ref
		c.Respond(st)
		f.Answer()
	case *fleetmsg.SendMessage:
		f.sendMessage(c, m)
	case *team.Undelivered:
		f.undelivered(c, m)
	case *agent.ApprovalResponse:
		f.routeApproval(c, m)
	case *agent.SetPosture:
		f.posture = m.Posture
		for _, t := range f.tasks {
			if t.pid != nil {
				c.Send(t.pid, m)
			}
		}
		for _, name := range f.nodeOrder {
			c.Send(f.nodes[name].link, &link.Posture{Posture: m.Posture})
		}
	case *kernel.Crashed:
		f.repair(c, m)
	case *actor.Stopping:
		f.onStopping()
	}
}

// onStopping lets go of what the scheduler holds as it stops.
func (f *fleetActor) onStopping() {
	f.broken = nil // the fleets end with the scheduler
	f.stoppingAll = true
	if f.gitQ != nil {
		f.gitQ.Close()
	}
	f.ledger.DropAll()
	if f.settleTimer != nil {
		f.settleTimer.Stop()
	}
	f.closeJournal()
	if f.timer != nil {
		f.timer.Stop()
	}
	for _, t := range f.tasks {
		if t.reaper != nil {
			t.reaper.Stop()
		}
		if t.fence != nil {
			t.fence.Stop()
		}
	}
}

func (f *fleetActor) publish(ev event.Event, task string) {
	if f.bus == nil {
		return
	}
	m := ev.EventMeta()
	m.Session, m.Task = f.session, task
	f.bus.Publish(ev)
}

func (f *fleetActor) submit(c actor.Context, m *fleetmsg.SubmitFleet) {
	f.submitFrom(c, m, c.Sender())
}

// submitFrom takes a fleet whose result goes to replyTo (the sender, or
// for a follow-up the agent's submitter).
func (f *fleetActor) submitFrom(c actor.Context, m *fleetmsg.SubmitFleet, replyTo *actor.PID) {
	// The submitter keeps its message: the writers' isolation is filled
	// in on a copy.
	cp := *m
	cp.Tasks = slices.Clone(m.Tasks)
	isolate.Default(cp.Tasks, f.spec.WriterIsolation, f.spec.Isolator)
	m = &cp
	f.submitting = m
	defer func() { f.submitting = nil }()
	fl := &fleetCall{replyTo: replyTo, results: map[string]event.TaskResult{}, background: m.Background}
	if _, dup := f.fleets[m.FleetID]; dup || m.FleetID == "" {
		if replyTo != nil {
			c.Send(replyTo, &fleetmsg.FleetResult{FleetID: m.FleetID, Results: []event.TaskResult{{Status: event.TaskFailed, Error: "duplicate or empty fleet id"}}})
		}
		return
	}
	f.fleets[m.FleetID] = fl
	now := time.Now()
	fl.created = now
	if len(m.Tasks) > 0 {
		fl.budget = m.Tasks[0].FleetBudget
	}
	var rf *resume.Fleet
	switch {
	case m.FromJournal:
		var err error
		switch rf, err = f.fromJournal(m); {
		case err != nil:
			// Nothing is known of what ran: none of it runs (endBroken).
			fl.key = m.Key
			_ = f.journalFailed(m.FleetID, fl, "read", err)
		case rf == nil:
			f.jotSubmit(m, fl)
		default:
			m, fl.key = rf.Submit, rf.Submit.Key
			f.resettle(rf)
		}
	case m.Key != "":
		fl.key = m.Key // re-attached: its submit is journalled already
	default:
		f.jotSubmit(m, fl)
	}
	for _, spec := range m.Tasks {
		fl.ids = append(fl.ids, spec.ID)
		f.register(m.FleetID, fl.key, spec, replyTo)
		if res, done := m.Done[spec.ID]; done {
			// Finished before the restart: its result stands as it was,
			// once its merge is done if it was still to do (resettle).
			if f.settling[spec.ID] == nil {
				fl.results[spec.ID] = res
			}
			continue
		}
		f.publish(&event.TaskQueued{Fleet: m.FleetID, Prompt: text.OneLine(spec.Prompt, 200), Profile: spec.Profile, Writer: spec.Writer,
			Background: m.Background, Name: spec.Name, Of: spec.Of}, spec.ID)
		err := f.q.Submit(f.queueTask(m.FleetID, spec), now)
		if err != nil {
			f.end(c, m.FleetID, event.TaskResult{TaskID: spec.ID, Status: event.TaskFailed, Error: "not scheduled: " + err.Error()})
			continue
		}
		f.tasks[spec.ID] = &runningTask{spec: spec, fleet: m.FleetID}
	}
	f.admit(c)
	f.maybeReply(c, m.FleetID)
}

// admit starts every task the policy admits now.
func (f *fleetActor) admit(c actor.Context) {
	if len(f.unsettled) > 0 && time.Now().Before(f.settleBy) {
		return // workersSettled, or the last link's first report, admits
	}
	var batch []toStart
	for _, s := range f.q.Next(time.Now()) {
		t := f.tasks[s.Task.ID]
		if t == nil {
			continue
		}
		t.node, t.attempt = s.Node, s.Attempt
		if !f.hold(c, t, s.Deadline) {
			batch = append(batch, toStart{t, s.Deadline})
		}
	}
	f.startAll(c, batch, nil)
	f.armTimer()
}

// toStart is an admitted task to start, with its deadline.
type toStart struct {
	t        *runningTask
	deadline time.Time
}

// start builds and spawns the subagent of an admitted task.
func (f *fleetActor) start(c actor.Context, t *runningTask, deadline time.Time) {
	f.startAll(c, []toStart{{t, deadline}}, nil)
}

// prepared is a local task between its preparation and its spawn: its
// agent built and its budget allotted, its start record not yet in the
// journal.
type prepared struct {
	t  *runningTask
	ag agent.AgentSpec
}

// startAll starts admitted tasks together: it builds each one's subagent
// (those in ready are built already), journals all their starts in one
// synced transaction (one sync for a wave of 64, not 64), and only then
// spawns them, so no subagent runs before its start is durable. A task
// whose start the journal refuses never starts.
func (f *fleetActor) startAll(c actor.Context, batch []toStart, ready []*prepared) {
	for _, b := range batch {
		if p := f.prepare(c, b.t, b.deadline); p != nil {
			ready = append(ready, p)
		}
	}
	if len(ready) == 0 {
		return
	}
	refused := f.jotStarts(ready)
	for _, p := range ready {
		if refused[p.t.fleet] {
			// A start the journal does not hold never happens.
			p.discard()
			f.finishTask(c, p.t.spec.ID, event.TaskResult{TaskID: p.t.spec.ID, Status: event.TaskFailed, Error: "not started"})
			continue
		}
		f.launch(c, p)
	}
}

// discard undoes a preparation whose task will not start: its transcript
// is closed and the task no longer counts as running.
func (p *prepared) discard() {
	if cl, ok := p.ag.Transcript.(interface{ Close() error }); ok {
		_ = cl.Close()
	}
	p.t.meter, p.t.prep = nil, nil
}

// prepare builds an admitted task's agent and allots its budget; nil when
// the task started remotely or ended already (its fleet's journal broken,
// its agent impossible to build).
func (f *fleetActor) prepare(c actor.Context, t *runningTask, deadline time.Time) *prepared {
	id := t.spec.ID
	if fl := f.fleets[t.fleet]; fl != nil && fl.journalErr != nil {
		// Its start could not be journalled: it never starts.
		f.finishTask(c, id, event.TaskResult{TaskID: id, Status: event.TaskFailed, Error: "not started"})
		return nil
	}
	if t.node != "" {
		f.startRemote(c, t, deadline)
		return nil
	}
	t.started, t.deadline = time.Now(), deadline
	if t.spec.Isolation == event.IsolationWorktree && t.wt == nil {
		if !t.making {
			f.makeWorktree(c, t, deadline)
		}
		return nil
	}
	f.starting = id
	ag, err := f.newAgent(t.spec)
	f.starting = ""
	if err != nil {
		f.dropWorktree(t)
		f.finishTask(c, id, event.TaskResult{TaskID: id, Status: event.TaskFailed, Error: err.Error()})
		return nil
	}
	ag.Session, ag.Task = f.session, id
	if ag.Bus == nil {
		ag.Bus = f.bus
	}
	// A subagent runs unattended: a crashing tool fails its task
	// instead of letting it carry on from a broken state.
	ag.FailOnCrash = true
	// Every subagent may write to its parent and its siblings.
	ag.Mailer = f.self
	if ag.Tools != nil {
		if err := ag.Tools.Replace(team.SubagentMessageTool()); err != nil {
			f.log.Warn("register send_message", "task", id, "err", err)
		}
	}
	if f.posture != "" {
		ag.Permissions.Posture = permission.Posture(f.posture)
	}
	if ep, ok := ag.Provider.(provider.Endpointer); ok {
		t.endpoint = ep.Endpoint()
	}
	var price *event.Price
	if pp, ok := ag.Provider.(interface{ Price() event.Price }); ok {
		p := pp.Price()
		price = &p
	}
	t.budget = f.allot(t)
	if t.budget.Seconds > 0 {
		t.overAt = t.started.Add(time.Duration(t.budget.Seconds) * time.Second)
	}
	// The meter marks the task running for the next one's allotment.
	sys, self := f.sys, f.self
	t.meter = &team.TaskMeter{Budget: t.budget, Price: price, Over: func(what string) { sys.Send(self, &TaskOverBudget{TaskID: id, what: what}) }}
	return &prepared{t: t, ag: ag}
}

// jotStarts journals the start records of ready in one transaction and
// returns the fleets whose journal refused them (each of those fleets
// ends, see jot). Fleets without a journal need no record.
func (f *fleetActor) jotStarts(ready []*prepared) map[string]bool {
	var recs []journal.Record
	fleets := map[string]bool{}
	refused := map[string]bool{}
	for _, p := range ready {
		t := p.t
		fl := f.fleets[t.fleet]
		if fl == nil || fl.key == "" {
			continue
		}
		if fl.journalErr != nil {
			refused[t.fleet] = true
			continue
		}
		data, err := json.Marshal(startRecord{Budget: budgetRef(t.budget), Endpoint: endpointStats(t.endpoint), Attempt: link.LaterAttempt(t.attempt)})
		if err != nil {
			refused[t.fleet] = true
			f.journalFailed(t.fleet, fl, journal.KindStart, fmt.Errorf("fleet journal record %s: %w", journal.KindStart, err))
			continue
		}
		recs = append(recs, journal.Record{Fleet: fl.key, Kind: journal.KindStart, Task: t.spec.ID, At: time.Now(), Data: data})
		fleets[t.fleet] = true
	}
	if len(recs) == 0 {
		return refused
	}
	if err := f.writeAll(recs); err != nil {
		for fleetID := range fleets {
			refused[fleetID] = true
			if fl := f.fleets[fleetID]; fl != nil && fl.journalErr == nil {
				f.journalFailed(fleetID, fl, journal.KindStart, err)
			}
		}
	}
	return refused
}

// launch spawns a prepared task's subagent, its start journalled, and
// asks it for the task's turn.
func (f *fleetActor) launch(c actor.Context, p *prepared) {
	t, ag, id := p.t, p.ag, p.t.spec.ID
	sys, self := f.sys, f.self
	// A held task was prepared earlier: it runs from now.
	t.started = time.Now()
	if t.budget.Seconds > 0 {
		t.overAt = t.started.Add(time.Duration(t.budget.Seconds) * time.Second)
	}
	f.spec.Saves.Watch(ag.Transcript, "transcript of task "+id, false)
	ag.Meter = t.meter
	if !t.budget.IsZero() || t.warmKey != "" {
		mp := &MeteredProvider{Provider: ag.Provider, Meter: t.meter}
		if key, fleetID := t.warmKey, t.fleet; key != "" {
			mp.onFirst = func() { sys.Send(self, &prefixWarmed{fleet: fleetID, key: key}) }
			mp.minPrefix = f.minWarmPrefix()
		}
		ag.Provider = mp
	}
	f.publish(&event.TaskStarted{Fleet: t.fleet, Model: ag.Model, Budget: budgetRef(t.budget), Endpoint: endpointStats(t.endpoint),
		Attempt: link.LaterAttempt(t.attempt)}, id)
	t.pid = c.Spawn(agent.ExecutorProps(f.sys, ag))
	f.byPID[t.pid.Id] = id
	if fl := f.fleets[t.fleet]; fl != nil {
		fl.live++
	}
	f.run(c, t)
	path := ""
	if p, ok := ag.Transcript.(interface{ Path() string }); ok {
		path = p.Path()
	}
	f.agentStarted(c, t, path)
}

// run asks the task's subagent, or the proxy of its remote attempt, for
// the task's one turn. The ledger ends the wait once: with the
// TurnFinished (onFinished settles it) or, when the subagent stops or is
// gone without one, with the task failed (subagentLost).
func (f *fleetActor) run(c actor.Context, t *runningTask) {
	id, pid := t.spec.ID, t.pid
	f.ledger.Request(c, runKey(pid), pid, &agent.RunTurn{Input: t.spec.Prompt}, 0, func(c actor.Context, _ string) {
		f.subagentLost(c, id, pid)
	})
}

// runKey is the ledger entry of a subagent's turn: one per spawned
// subagent, so a task's later attempt never meets its earlier one's.
func runKey(pid *actor.PID) string { return "run/" + pid.Id }

// subagentLost fails a task whose subagent stopped before it answered.
func (f *fleetActor) subagentLost(c actor.Context, id string, pid *actor.PID) {
	t := f.tasks[id]
	if t == nil || t.pid == nil || !t.pid.Equal(pid) {
		return
	}
	// The subagent is gone already: finishTask need not wait for it.
	delete(f.byPID, pid.Id)
	t.pid = nil
	if fl := f.fleets[t.fleet]; fl != nil {
		fl.live--
	}
	f.finishTask(c, id, event.TaskResult{TaskID: id, Status: event.TaskFailed, Error: "subagent stopped before finishing its task"})
}

// routeApproval passes an answer for <session>/<task>/<call> to the task's
// subagent; an answer for a task that has ended is dropped (its approval
// was resolved when the task stopped).
func (f *fleetActor) routeApproval(c actor.Context, m *agent.ApprovalResponse) {
	rest, ok := strings.CutPrefix(m.RequestID, f.session+"/")
	if !ok {
		return
	}
	task, _, ok := strings.Cut(rest, "/")
	if t := f.tasks[task]; ok && t != nil && t.pid != nil {
		c.Send(t.pid, m)
	}
}

// newAgent calls the subagent factory. A panic there is that task's
// failure, not the scheduler's: the factory runs per task (a broken
// profile would otherwise take down every task sharing it, and a repair
// that admits the next task would panic again).
func (f *fleetActor) newAgent(spec event.TaskSpec) (agent agent.AgentSpec, err error) {
	defer panics.Catch(&err)
	return f.spec.NewAgent(spec)
}

// repair returns the scheduler to a consistent state after a handler
// panicked. The task whose subagent factory panicked fails; a fleet whose
// submission was cut short gets a failed result for every task it did not
// accept; a task the queue counts as running but that has no subagent (its
// start was lost) fails; a status query is answered. Then fleets that are
// complete get their results, the deadline timer is re-armed and waiting
// tasks are admitted.
func (f *fleetActor) repair(c actor.Context, m *kernel.Crashed) {
	reason := m.Error()
	if f.q == nil { // Started itself crashed: build the queue so tasks still end
		q, _ := scheduler.New(scheduler.Config{MaxRunning: f.spec.MaxRunning, MaxWriters: f.spec.MaxWriters, Root: f.spec.Root})
		if q == nil {
			q, _ = scheduler.New(scheduler.Config{Root: f.spec.Root})
		}
		f.self, f.q = c.Self(), q
		f.fleets, f.tasks, f.byPID = map[string]*fleetCall{}, map[string]*runningTask{}, map[string]string{}
		f.stopping = map[string]string{}
	}
	if id := f.starting; id != "" {
		f.starting = ""
		f.finishTask(c, id, event.TaskResult{TaskID: id, Status: event.TaskFailed, Error: "subagent could not start: " + reason})
	}
	submitRepaired := false
	if sub := f.submitting; sub != nil {
		f.submitting = nil
		f.repairSubmit(c, sub, m.Sender, reason)
		submitRepaired = true
	}
	for _, st := range f.q.Status().Tasks {
		if st.State != scheduler.Running && st.State != scheduler.Stopping {
			continue
		}
		t := f.tasks[st.ID]
		switch {
		case t == nil:
			// The queue holds slots for a task the actor no longer
			// knows: release them.
			_, _ = f.q.Finish(st.ID, time.Now())
		case t.pid == nil && !t.held && t.fence == nil && !t.making:
			f.finishTask(c, st.ID, event.TaskResult{TaskID: st.ID, Status: event.TaskFailed, Error: "subagent was lost: " + reason})
		}
	}
	// Subagents that stopped without the scheduler hearing of it (the lost
	// message may have been their Terminated) are handled as stopped now:
	// the ledger fails the tasks of those that had not answered, and
	// those that had are counted as stopped.
	f.ledger.Reconcile(c)
	for pidID := range f.stopping {
		if !f.sys.Alive(pidID) {
			f.onStopped(c, &actor.Terminated{Who: actor.NewPID(c.Self().Address, pidID)})
		}
	}
	switch lost := m.Lost.(type) {
	case *fleetmsg.SubmitFleet:
		if !submitRepaired { // crashed before the handler began
			f.repairSubmit(c, lost, m.Sender, reason)
		}
	case *agent.TurnFinished:
		// A subagent's answer was lost: its task fails with the reason.
		if m.Sender != nil {
			if id, ok := f.byPID[m.Sender.Id]; ok {
				f.ledger.Settle(runKey(m.Sender))
				f.finishTask(c, id, event.TaskResult{TaskID: id, Status: event.TaskFailed, Error: reason, Text: lost.Text, Steps: lost.Steps, Usage: lost.Usage})
			}
		}
	case *fleetmsg.CancelTask:
		f.cancelTask(c, lost.TaskID)
	case *requeueWriter:
		f.onRequeueWriter(c, lost)
	case *workersSettled:
		f.unsettled = nil // the admit below runs what waited for it
	case *fleetmsg.CancelFleet:
		f.cancelFleet(c, lost.FleetID)
	case *fleetmsg.QueryFleet, *fleetmsg.SendMessage:
		f.answerLost(c, m)
	}
	// A lost reaper tick must not leave a stopping subagent running.
	for id, t := range f.tasks {
		if t.stopping && t.pid != nil {
			if t.reaper != nil {
				t.reaper.Stop()
			}
			sys, self, id := f.sys, f.self, id
			t.reaper = time.AfterFunc(f.grace(), func() { sys.Send(self, &reapTask{taskID: id}) })
		}
	}
	ids := make([]string, 0, len(f.fleets))
	for id := range f.fleets {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		f.maybeReply(c, id)
	}
	f.ticking = false
	f.releaseAll(c)
	if f.nodes == nil {
		f.startWorkers(c) // Started crashed before the links were spawned
	}
	// A lost linkUp or linkLost would leave the queue's nodes out of
	// step with the links: each link reports again.
	f.askLinks(c)
	f.admit(c)
}

// answerLost answers a query whose handler crashed before it answered.
func (f *fleetActor) answerLost(c actor.Context, m *kernel.Crashed) {
	if m.Sender == nil || f.Answered() {
		return
	}
	switch lost := m.Lost.(type) {
	case *fleetmsg.QueryFleet:
		st := f.status()
		st.Ref = lost.Ref
		c.Respond(st)
	case *fleetmsg.SendMessage:
		c.Respond(&fleetmsg.MessageSent{Ref: lost.Ref, Error: "not delivered: " + m.Error()})
	}
}

// repairSubmit finishes a SubmitFleet whose handling crashed part way:
// every task it lists that the scheduler did not take ends failed, and a
// fleet that never got registered is answered at once.
func (f *fleetActor) repairSubmit(c actor.Context, m *fleetmsg.SubmitFleet, sender *actor.PID, reason string) {
	fl := f.fleets[m.FleetID]
	if fl == nil {
		if sender == nil {
			return
		}
		res := &fleetmsg.FleetResult{FleetID: m.FleetID}
		for _, spec := range m.Tasks {
			res.Results = append(res.Results, event.TaskResult{TaskID: spec.ID, Status: event.TaskFailed, Error: "not scheduled: " + reason})
		}
		c.Send(sender, res)
		return
	}
	known := map[string]bool{}
	for _, id := range fl.ids {
		known[id] = true
	}
	for _, spec := range m.Tasks {
		if known[spec.ID] {
			continue
		}
		fl.ids = append(fl.ids, spec.ID)
		f.end(c, m.FleetID, event.TaskResult{TaskID: spec.ID, Status: event.TaskFailed, Error: "not scheduled: " + reason})
	}
}

// armTimer schedules a deadline check at the earliest running deadline.
func (f *fleetActor) armTimer() {
	if f.ticking {
		return
	}
	var next time.Time
	for _, t := range f.tasks {
		for _, d := range []time.Time{t.deadline, t.overAt} {
			if t.pid != nil && !t.stopping && !d.IsZero() && (next.IsZero() || d.Before(next)) {
				next = d
			}
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
	now := time.Now()
	for _, id := range f.q.Expired(now) {
		if t := f.tasks[id]; t != nil {
			f.jot(t.fleet, journal.KindExpire, id, nil)
		}
		f.stopTask(c, id, "timed out")
	}
	for id, t := range f.tasks {
		if !t.overAt.IsZero() && !now.Before(t.overAt) {
			f.overBudget(c, id, "seconds")
		}
	}
	f.armTimer()
}

// stopTask cancels a running task's subagent and arms its reaper.
func (f *fleetActor) stopTask(c actor.Context, id, why string) {
	t := f.tasks[id]
	if t != nil && t.held {
		// Held behind a warming prefix: it never started, so it ends now.
		t.held = false
		if t.prep != nil {
			t.prep.discard()
		}
		f.finishTask(c, id, event.TaskResult{TaskID: id, Status: event.TaskCancelled, Error: why})
		return
	}
	if t != nil && t.making {
		// Its worktree is being made: it never started, so it ends now
		// (worktreeDone removes the worktree when it comes).
		t.making = false
		f.finishTask(c, id, event.TaskResult{TaskID: id, Status: event.TaskCancelled, Error: why})
		return
	}
	if t != nil && t.fence != nil {
		// A lost writer waiting out its fence: it is not running here,
		// so it ends now (its slots were held only as a precaution).
		t.fence.Stop()
		t.fence = nil
		f.finishTask(c, id, event.TaskResult{TaskID: id, Status: event.TaskCancelled, Error: why + " (" + t.fenceWhy + ")"})
		return
	}
	if t == nil || t.pid == nil || t.stopping {
		return
	}
	t.stopping = true
	f.log.Info("stopping task", "task", id, "why", why)
	c.Send(t.pid, &agent.CancelTurn{})
	sys, self := f.sys, f.self
	t.reaper = time.AfterFunc(f.grace(), func() { sys.Send(self, &reapTask{taskID: id}) })
}

// grace is how long a stopped subagent may take before it is killed.
func (f *fleetActor) grace() time.Duration {
	if f.spec.Grace > 0 {
		return f.spec.Grace
	}
	return 10 * time.Second
}

func (f *fleetActor) cancelFleet(c actor.Context, id string) {
	if _, ok := f.fleets[id]; !ok {
		return
	}
	f.jot(id, journal.KindCancel, "", nil)
	res := f.q.CancelFleet(id, time.Now())
	for _, tid := range res.Dropped {
		f.end(c, id, event.TaskResult{TaskID: tid, Status: event.TaskCancelled, Error: "cancelled before it started"})
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
	f.jot(t.fleet, journal.KindCancel, id, nil)
	wasRunning, err := f.q.Cancel(id, time.Now())
	if err != nil {
		return // already stopping or ended
	}
	if !wasRunning {
		delete(f.tasks, id)
		f.end(c, t.fleet, event.TaskResult{TaskID: id, Status: event.TaskCancelled, Error: "cancelled before it started"})
		f.maybeReply(c, t.fleet)
		return
	}
	f.stopTask(c, id, "task cancelled")
}

// onFinished turns a subagent's TurnFinished into its task's result.
func (f *fleetActor) onFinished(c actor.Context, m *agent.TurnFinished) {
	if c.Sender() == nil {
		return
	}
	id, ok := f.byPID[c.Sender().Id]
	if !ok || !f.ledger.Settle(runKey(c.Sender())) {
		return
	}
	if f.attemptEnded(c, id, m) {
		return
	}
	res := event.TaskResult{TaskID: id, Text: m.Text, Error: m.Error, Steps: m.Steps, Usage: m.Usage, Changes: m.Changes}
	switch m.Status {
	case event.StatusOK:
		res.Status = event.TaskOK
	case event.StatusCancelled:
		res.Status = event.TaskCancelled
		if res.Error == "" {
			res.Error = "cancelled"
		}
	default:
		res.Status = event.TaskFailed
	}
	f.finishTask(c, id, res)
}

// onStopped counts a finished task's subagent as stopped; the fleet's
// reply waits for it. One that stopped before answering is the ledger's
// (subagentLost).
func (f *fleetActor) onStopped(c actor.Context, m *actor.Terminated) {
	if m.Who == nil {
		return
	}
	if fleetID, ok := f.stopping[m.Who.Id]; ok {
		delete(f.stopping, m.Who.Id)
		if fl := f.fleets[fleetID]; fl != nil {
			fl.live--
			f.maybeReply(c, fleetID)
		}
		f.agentStopped(c, m.Who.Id)
	}
}

// finishTask releases the task's slots, records its result and admits
// what can start now.
func (f *fleetActor) finishTask(c actor.Context, id string, res event.TaskResult) {
	t := f.tasks[id]
	if t == nil {
		return
	}
	delete(f.tasks, id)
	if t.reaper != nil {
		t.reaper.Stop()
	}
	if t.fence != nil {
		t.fence.Stop()
	}
	if t.warmKey != "" {
		// A warmer that ended before its first token frees its siblings.
		defer f.warmed(c, t.fleet, t.warmKey)
	}
	if t.pid != nil {
		// The fleet's result waits until this subagent has stopped. It
		// is poisoned, not stopped: a stop overtakes the messages already
		// in its mailbox, which would go to dead letters, while a poison
		// pill comes after them, so a message sent while its turn ended is
		// still given back (Undelivered) and reaches it in a follow-up.
		delete(f.byPID, t.pid.Id)
		f.stopping[t.pid.Id] = t.fleet
		c.Poison(t.pid)
	}
	if !t.started.IsZero() {
		res.Duration = time.Since(t.started)
	}
	if t.meter != nil {
		turns, u, cost := t.meter.Spent()
		res.Turns, res.CacheHitPct, res.Cost = turns, cacheHitPct(u), cost
	}
	res.Budget = budgetRef(t.budget)
	if t.over != "" && res.Status != event.TaskOK {
		// Stopped at a ceiling: the answer so far is the result, marked
		// as partial; the queue's outcome below cannot override it.
		res.Status, res.OverBudget = event.TaskOverBudget, t.over
		res.Error = fmt.Sprintf("stopped at its %s budget; the answer is partial", t.over)
	}
	// A task that completed while being stopped keeps its answer; one
	// that ended because it was stopped reports why it was stopped.
	outcome, err := f.q.Finish(id, time.Now())
	if err == nil && res.Status != event.TaskOK && res.Status != event.TaskOverBudget {
		switch outcome {
		case scheduler.OutcomeExpired:
			res.Status = event.TaskTimedOut
			res.Error = fmt.Sprintf("timed out after %s", f.spec.TaskTimeout)
		case scheduler.OutcomeCancelled:
			res.Status = event.TaskCancelled
			res.Error = "cancelled"
		}
	}
	f.endTask(c, t, res)
	f.maybeReply(c, t.fleet)
	f.admit(c)
	f.pendingFollowUps(c, id)
}

// endTask records a started task's result; its task_done closes the
// subagent's gate, so it is the task's last event.
func (f *fleetActor) endTask(c actor.Context, t *runningTask, res event.TaskResult) {
	if t.meter == nil {
		f.end(c, t.fleet, res)
		return
	}
	fl := f.fleets[t.fleet]
	if fl == nil {
		return
	}
	switch {
	case t.wt != nil:
		f.settleWorktree(t, res)
		return
	case res.Changes != nil && t.spec.Isolation == event.IsolationWorktree && f.spec.Isolator != nil:
		f.settleImported(t, res)
		return
	}
	res.Changes = nil
	f.recordEnd(c, t, f.journalResult(t.fleet, res))
}

// recordEnd delivers a started task's journalled result.
func (f *fleetActor) recordEnd(c actor.Context, t *runningTask, res event.TaskResult) {
	fl := f.fleets[t.fleet]
	if fl == nil {
		return
	}
	fl.results[res.TaskID] = res
	f.agentEnded(c, t.fleet, res)
	ev := f.taskDone(t.fleet, res)
	ev.Endpoint = endpointStats(t.endpoint)
	ev.Worker, ev.Attempt = t.node, link.LaterAttempt(t.attempt)
	t.meter.Close(f.bus, ev)
}

// end records a task's result and publishes task_done.
func (f *fleetActor) end(c actor.Context, fleetID string, res event.TaskResult) {
	fl := f.fleets[fleetID]
	if fl == nil {
		return
	}
	res = f.journalResult(fleetID, res)
	fl.results[res.TaskID] = res
	f.agentEnded(c, fleetID, res)
	f.publish(f.taskDone(fleetID, res), res.TaskID)
}

func (f *fleetActor) taskDone(fleetID string, res event.TaskResult) *event.TaskDone {
	return &event.TaskDone{Meta: event.Meta{Session: f.session, Task: res.TaskID}, Fleet: fleetID, Status: res.Status, Error: res.Error,
		Steps: res.Steps, DurationMS: res.Duration.Milliseconds(), Usage: res.Usage,
		Turns: res.Turns, CacheHitPct: res.CacheHitPct, Cost: res.Cost, Budget: res.Budget, OverBudget: res.OverBudget, Merge: res.Merge}
}

// maybeReply sends the FleetResult once every task of the fleet has ended.
func (f *fleetActor) maybeReply(c actor.Context, fleetID string) {
	fl := f.fleets[fleetID]
	if fl == nil || len(fl.results) < len(fl.ids) || fl.live > 0 {
		return
	}
	out := &fleetmsg.FleetResult{FleetID: fleetID, Results: make([]event.TaskResult, 0, len(fl.ids))}
	for _, id := range fl.ids {
		out.Results = append(out.Results, fl.results[id])
	}
	// Every result it carries is journalled (or held back): a reply the
	// journal misses only leaves the fleet listed as interrupted.
	_ = f.jot(fleetID, journal.KindReply, "", nil)
	delete(f.fleets, fleetID)
	if fl.replyTo != nil {
		c.Send(fl.replyTo, out)
	}
	// What the fleet taught the endpoint limiters (a limit it ran into,
	// or that it ran wide without one) is where the next fleet starts.
	if err := provider.SaveLearned(); err != nil {
		f.log.Warn("endpoint limits not saved", "err", err)
	}
}

func (f *fleetActor) status() *fleetmsg.FleetStatus {
	snap := f.q.Status()
	st := &fleetmsg.FleetStatus{Queued: snap.Queued, Running: snap.Running, Writers: snap.Writers, Ended: snap.Ended,
		Endpoints: provider.EndpointStats()}
	for _, t := range snap.Tasks {
		ts := fleetmsg.TaskState{TaskID: t.ID, Fleet: t.Fleet, State: t.State.String(), Writer: t.Writer, Worker: t.Node}
		if rt := f.tasks[t.ID]; rt != nil && rt.meter != nil {
			ts.Tool, ts.Tokens, ts.Lines = rt.meter.Live()
		}
		st.Tasks = append(st.Tasks, ts)
	}
	if len(f.nodeOrder) > 0 {
		st.Workers = f.workersStatus(snap)
	}
	return st
}
