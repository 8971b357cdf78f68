package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/fleet/isolate"
	"reasonix/actors/kernel"
	"reasonix/actors/remote"
	"reasonix/core/config"
	"reasonix/core/panics"
)

// HostSpec configures the worker actor of a `reasonix worker`
// process: the subagents it hosts for schedulers on other machines.
type HostSpec struct {
	// Name is the worker's name in welcomes and logs; empty means the
	// host name.
	Name string
	// Capacity is how many tasks run at once, 1–64.
	Capacity int
	// Workspaces maps a checkout's name to its absolute path: a task runs
	// only in a checkout the worker serves, named as the scheduler names
	// it.
	Workspaces map[string]string
	// Config is the worker's own config: its providers and keys, tools,
	// sandbox and permissions build every task's agent.
	Config *config.Config
	// Grace is how long a cancelled task may take to stop before it is
	// killed; zero means 10 s.
	Grace time.Duration
	// Logger receives the worker's logs; nil means the system's.
	Logger *slog.Logger
	// NewAgents makes the agent builder of one workspace from Config.
	NewAgents func(cfg *config.Config, workspace string, log *slog.Logger) (Agents, error)
}

// Agents builds the agents of one workspace's tasks.
type Agents interface {
	// AgentFor builds the agent of spec, run for owner.
	AgentFor(owner agent.TaskOwner, spec event.TaskSpec) (agent.AgentSpec, error)
}

// Host is a running worker actor.
type Host struct {
	sys  *kernel.System
	Pid  *actor.PID
	name string
	boot string
}

// StartHost spawns the worker actor under its well-known name, so a
// scheduler reaches it at actor.NewPID(address, workerActorName). Start the
// system's remote first for other machines to reach it. The spec is
// checked and a subagent factory opened for each workspace here, so a
// config that cannot build agents fails the start rather than every task.
func StartHost(sys *kernel.System, spec HostSpec) (*Host, error) {
	if spec.NewAgents == nil {
		return nil, errors.New("start worker: no agent builder")
	}
	if spec.Config == nil {
		return nil, errors.New("start worker: no config")
	}
	if spec.Capacity < 1 || spec.Capacity > 64 {
		return nil, fmt.Errorf("start worker: capacity %d: want 1–64", spec.Capacity)
	}
	if len(spec.Workspaces) == 0 {
		return nil, errors.New("start worker: no workspace to serve")
	}
	if spec.Name == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "worker"
		}
		spec.Name = host
	}
	if spec.Grace <= 0 {
		spec.Grace = 10 * time.Second
	}
	log := spec.Logger
	if log == nil {
		log = sys.Logger()
	}
	log = log.With("actor", "worker", "worker", spec.Name)
	agents := map[string]Agents{}
	for name, path := range spec.Workspaces {
		if name == "" {
			return nil, fmt.Errorf("start worker: workspace %s has no name", path)
		}
		if !filepath.IsAbs(path) {
			return nil, fmt.Errorf("start worker: workspace %s: %s is not an absolute path", name, path)
		}
		if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
			if err == nil {
				err = errors.New("not a directory")
			}
			return nil, fmt.Errorf("start worker: workspace %s: %w", name, err)
		}
		d, err := spec.NewAgents(spec.Config, filepath.Clean(path), log.With("workspace", name))
		if err != nil {
			return nil, fmt.Errorf("start worker: workspace %s: %w", name, err)
		}
		agents[name] = d
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("start worker: boot id: %w", err)
	}
	boot := hex.EncodeToString(b[:])
	props := kernel.Props("worker", log, func() actor.Actor {
		return &workerActor{sys: sys, spec: spec, agents: agents, boot: boot, log: log}
	}, actor.WithGuardian(kernel.StopOnFailure))
	pid, err := sys.Root().SpawnNamed(props, remote.HostActorName)
	if err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	return &Host{sys: sys, Pid: pid, name: spec.Name, boot: boot}, nil
}

// Name is the worker's name.
func (h *Host) Name() string { return h.name }

// Drain refuses new tasks and links, says bye to every scheduler holding a
// lease (each re-queues what it had here), cancels the tasks still running
// (killed after the grace) and waits until every one has stopped, or ctx
// ends.
func (h *Host) Drain(ctx context.Context) error {
	h.sys.Send(h.Pid, &drainWorker{})
	return h.WaitJobs(ctx, 0)
}

// WaitJobs waits until at most n of the worker's jobs are left (stopped
// ones are not counted).
func (h *Host) WaitJobs(ctx context.Context, n int) error {
	done := make(chan struct{})
	h.sys.Send(h.Pid, &awaitIdle{atMost: n, done: done})
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("drain worker: tasks still running: %w", ctx.Err())
	}
}

// Stop stops the worker actor and its tasks (each still tells its
// scheduler how it ended), waiting at most timeout.
func (h *Host) Stop(timeout time.Duration) error {
	return h.sys.Stop(h.Pid, timeout)
}

// drainWorker puts the worker into draining (Host.Drain).
type drainWorker struct{}

// awaitIdle asks the worker to close done once at most atMost of its jobs
// are left.
type awaitIdle struct {
	atMost int
	done   chan struct{}
}

// leaseLapsed is a lease's timer firing; gen tells a renewed lease's old
// timer apart.
type leaseLapsed struct {
	key string
	gen int
}

// jobEnded is a job telling the worker it has sent its attempt's end, so
// the slot is free before the scheduler can place another task in it.
type jobEnded struct{ pid *actor.PID }

// lease is one scheduler's hold on the worker, kept alive by heartbeats.
type lease struct {
	key       string // scheduler id and session
	scheduler string
	session   string
	workspace string
	epoch     uint64
	link      *actor.PID
	ttl       time.Duration
	timer     *time.Timer
	gen       int
	// posture, once the scheduler set one, applies to its new tasks.
	posture string
}

// jobRef is the worker's record of one running attempt.
type jobRef struct {
	pid     *actor.PID
	lease   string // the lease key of its scheduler
	epoch   uint64
	task    string
	attempt int
	proxy   *actor.PID
	// ended says the job has sent its end: it no longer takes a slot.
	ended bool
	// silenced is shared with the job: set, it sends its proxy nothing.
	silenced *atomic.Bool
}

// workerActor is the `reasonix-worker` actor: it answers hellos, keeps a
// lease per scheduler, and runs each accepted attempt as a job child. It
// fences itself: a scheduler whose lease lapses, whose link dies or that
// says bye has its jobs cancelled and hears nothing more from them, since
// it has re-queued (or failed) them by then.
type workerActor struct {
	sys    *kernel.System
	spec   HostSpec
	agents map[string]Agents
	// preparing counts the starts whose worktree is being made: each holds
	// a slot.
	preparing int
	boot      string
	log       *slog.Logger

	self     *actor.PID
	leases   map[string]*lease
	jobs     map[string]*jobRef // by job PID id
	draining bool
	idle     []*awaitIdle
	// Answers records whether the message being handled has its answer,
	// for the repair of a crash in its handler.
	kernel.Answers
}

// Receive implements actor.Actor. A bad message is logged and dropped; a
// panic in a handler is repaired (see repair).
func (w *workerActor) Receive(c actor.Context) {
	m, err := remote.FromWire(c.Message())
	if err != nil {
		w.log.Warn("undecodable message dropped", "err", err)
		return
	}
	switch m := m.(type) {
	case *actor.Started:
		w.self = c.Self()
		w.leases, w.jobs = map[string]*lease{}, map[string]*jobRef{}
	case *remote.Hello:
		w.hello(c, m)
	case *remote.Heartbeat:
		w.heartbeat(c, m)
	case *remote.Start:
		w.start(c, m)
	case *startPrepared:
		w.preparing--
		w.startFor(c, m.m, m.sender, m)
	case *remote.Cancel:
		if j := w.route(c, m.Task, m.Attempt); j != nil {
			c.Send(j.pid, &jobCancel{why: m.Why})
		}
	case *remote.Approval:
		if j := w.route(c, m.Task, m.Attempt); j != nil {
			c.Send(j.pid, &agent.ApprovalResponse{RequestID: m.RequestID, Choice: m.Choice, Rule: m.Rule})
		}
	case *remote.SlotGrant:
		if j := w.route(c, m.Task, m.Attempt); j != nil {
			c.Send(j.pid, m)
		}
	case *remote.Posture:
		w.posture(c, m)
	case *remote.Bye:
		if l := w.leaseFor(c.Sender(), m.Epoch); l != nil && m.Epoch >= l.epoch {
			w.log.Info("scheduler said bye", "scheduler", l.scheduler, "why", m.Why)
			// Not unwatched: the scheduler is on its way out, and an
			// unwatch sent now could dial its closing address and hold
			// this worker's shutdown for protoactor's retries.
			w.forget(c, l, "the scheduler said bye: "+m.Why, false)
		}
	case *leaseLapsed:
		if l := w.leases[m.key]; l != nil && l.gen == m.gen {
			w.log.Warn("lease lapsed; cancelling the scheduler's tasks", "scheduler", l.scheduler, "session", l.session)
			w.forget(c, l, "lease lapsed", false)
		}
	case *jobEnded:
		if j := w.jobs[m.pid.Id]; j != nil {
			j.ended = true
			w.checkIdle()
		}
	case *actor.Terminated:
		w.terminated(c, m)
	case *drainWorker:
		w.drain(c)
	case *awaitIdle:
		w.idle = append(w.idle, m)
		w.checkIdle()
	case *kernel.Crashed:
		w.repair(c, m)
	case *actor.Stopping:
		for _, l := range w.leases {
			if l.timer != nil {
				l.timer.Stop()
			}
		}
	case *actor.Stopped:
		// Nothing runs any more: a Drain still waiting returns.
		for _, a := range w.idle {
			close(a.done)
		}
		w.idle = nil
	case actor.SystemMessage, actor.AutoReceiveMessage:
	default:
		w.log.Warn("unexpected message dropped", "type", fmt.Sprintf("%T", m))
	}
}

// reply answers the message being handled.
func (w *workerActor) reply(c actor.Context, m any) {
	w.Answer()
	if c.Sender() == nil {
		w.log.Warn("request without a sender; no answer sent", "answer", fmt.Sprintf("%T", m))
		return
	}
	remote.SendWorker(w.sys, c, c.Sender(), m)
}

// running counts the jobs that hold a slot, and the starts whose
// worktree is being made.
func (w *workerActor) running() int {
	n := w.preparing
	for _, j := range w.jobs {
		if !j.ended {
			n++
		}
	}
	return n
}

func (w *workerActor) workspaces() []string {
	names := make([]string, 0, len(w.agents))
	for name := range w.agents {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// workspace resolves a requested checkout name; "" is the only one when
// the worker serves one.
func (w *workerActor) workspace(name string) (string, bool) {
	if name == "" && len(w.agents) == 1 {
		for n := range w.agents {
			return n, true
		}
	}
	_, ok := w.agents[name]
	return name, ok
}

func (w *workerActor) welcome(epoch uint64, refused string) *remote.Welcome {
	return &remote.Welcome{Protocol: remote.Protocol, Worker: w.spec.Name, Boot: w.boot, Epoch: epoch,
		Capacity: w.spec.Capacity, Running: w.running(), Workspaces: w.workspaces(), Refused: refused}
}

// hello answers a link's hello: a refusal, a status answer (no lease), or
// a lease for the scheduler. A newer epoch from a scheduler that holds a
// lease is a new up-period of its link: the jobs of the old one are
// cancelled, since the scheduler has given them up.
func (w *workerActor) hello(c actor.Context, m *remote.Hello) {
	ws, served := w.workspace(m.Workspace)
	switch {
	case m.Protocol != remote.Protocol:
		w.log.Warn("hello of another protocol refused", "protocol", m.Protocol, "scheduler", m.Scheduler)
		w.reply(c, w.welcome(m.Epoch, "protocol"))
		return
	case !served && (m.LeaseMS > 0 || m.Workspace != ""):
		w.log.Warn("hello for a workspace not served refused", "workspace", m.Workspace, "scheduler", m.Scheduler)
		w.reply(c, w.welcome(m.Epoch, "workspace"))
		return
	case w.draining:
		w.reply(c, w.welcome(m.Epoch, "draining"))
		return
	case m.LeaseMS <= 0:
		w.reply(c, w.welcome(m.Epoch, ""))
		return
	case c.Sender() == nil:
		w.log.Warn("hello without a sender dropped", "scheduler", m.Scheduler)
		return
	}
	key := m.Scheduler + "/" + m.Session
	l := w.leases[key]
	if l != nil && m.Epoch < l.epoch {
		w.reply(c, w.welcome(m.Epoch, "epoch"))
		return
	}
	if l == nil {
		l = &lease{key: key, scheduler: m.Scheduler, session: m.Session}
		w.leases[key] = l
		w.log.Info("scheduler linked", "scheduler", m.Scheduler, "session", m.Session, "epoch", m.Epoch)
	} else if m.Epoch > l.epoch {
		w.log.Info("scheduler linked again; cancelling its older tasks", "scheduler", m.Scheduler, "epoch", m.Epoch, "old", l.epoch)
		for _, j := range w.jobs {
			if j.lease == key && j.epoch < m.Epoch {
				w.giveUp(c, j, "the scheduler linked again")
			}
		}
	}
	if l.link != nil && !l.link.Equal(c.Sender()) && !w.linkInUse(l.link, key) {
		c.Unwatch(l.link)
	}
	l.epoch, l.workspace, l.link = m.Epoch, ws, c.Sender()
	l.ttl = time.Duration(m.LeaseMS) * time.Millisecond
	c.Watch(l.link)
	w.renew(l)
	w.reply(c, w.welcome(m.Epoch, ""))
}

// linkInUse reports whether a lease other than key is held through pid.
func (w *workerActor) linkInUse(pid *actor.PID, key string) bool {
	for k, l := range w.leases {
		if k != key && l.link != nil && l.link.Equal(pid) {
			return true
		}
	}
	return false
}

// renew restarts a lease's clock.
func (w *workerActor) renew(l *lease) {
	if l.timer != nil {
		l.timer.Stop()
	}
	l.gen++
	sys, self, key, gen := w.sys, w.self, l.key, l.gen
	l.timer = time.AfterFunc(l.ttl, func() { sys.Send(self, &leaseLapsed{key: key, gen: gen}) })
}

// leaseOf is the lease held through the link pid.
func (w *workerActor) leaseOf(pid *actor.PID) *lease {
	if pid == nil {
		return nil
	}
	for _, l := range w.leases {
		if l.link != nil && l.link.Equal(pid) {
			return l
		}
	}
	return nil
}

// schedulerOf is the lease a sender speaks for: its link, or the proxy of
// one of its jobs.
func (w *workerActor) schedulerOf(pid *actor.PID) *lease {
	if l := w.leaseOf(pid); l != nil || pid == nil {
		return l
	}
	for _, j := range w.jobs {
		if j.proxy != nil && j.proxy.Equal(pid) {
			return w.leases[j.lease]
		}
	}
	return nil
}

// leaseFor is the lease a link message is about: the sender's (its link
// or one of its proxies) or, for one sent without a sender, the only lease
// of that epoch. Epochs are chosen per scheduler, so two leases may share
// one: such a message is dropped rather than applied to the wrong
// scheduler.
func (w *workerActor) leaseFor(sender *actor.PID, epoch uint64) *lease {
	if sender != nil {
		return w.schedulerOf(sender)
	}
	var found *lease
	for _, l := range w.leases {
		if l.epoch == epoch {
			if found != nil {
				w.log.Warn("a message without a sender matches several schedulers; dropped", "epoch", epoch)
				return nil
			}
			found = l
		}
	}
	return found
}

func (w *workerActor) heartbeat(c actor.Context, m *remote.Heartbeat) {
	l := w.leaseOf(c.Sender())
	if l == nil || l.epoch != m.Epoch {
		// No lease (a worker restarted, or one forgotten): no ack, so the
		// link notices and says hello again.
		w.log.Debug("heartbeat without a lease dropped", "epoch", m.Epoch)
		return
	}
	w.renew(l)
	run := w.running()
	w.reply(c, &remote.HeartbeatAck{Epoch: m.Epoch, N: m.N, Running: run, Free: max(w.spec.Capacity-run, 0)})
}

// start runs one attempt, or refuses it.
func (w *workerActor) start(c actor.Context, m *remote.Start) { w.startFor(c, m, c.Sender(), nil) }

// startFor runs a start from sender: a first time (prep nil) or, for a
// worktree writer, again once its worktree is made (prep), when every
// check runs anew.
func (w *workerActor) startFor(c actor.Context, m *remote.Start, sender *actor.PID, prep *startPrepared) {
	task, attempt := m.Spec.ID, m.Attempt
	reply := func(msg any) {
		w.Answer()
		remote.SendWorker(w.sys, c, sender, msg)
	}
	refuse := func(reason string, fatal bool) {
		w.log.Info("task refused", "task", task, "attempt", attempt, "reason", reason, "fatal", fatal)
		prep.drop()
		reply(&remote.Refused{Task: task, Attempt: attempt, Reason: reason, Fatal: fatal})
	}
	if sender == nil {
		w.log.Warn("start without a sender dropped", "task", task)
		return
	}
	l, ws, why := w.admits(m)
	if why != "" {
		refuse(why, task == "")
		return
	}
	taskSpec, iso, wt := m.Spec, isolate.Isolator(nil), (*isolate.Worktree)(nil)
	switch {
	case prep != nil && prep.err != nil:
		// Not fatal: another node may make the worktree.
		refuse(prep.err.Error(), false)
		return
	case prep != nil:
		taskSpec.Workdir, iso, wt = prep.wt.Dir, prep.iso, prep.wt
	case taskSpec.Isolation == event.IsolationWorktree && taskSpec.Workdir == "":
		if err := w.prepare(ws, m, sender); err != nil {
			refuse(err.Error(), false)
		}
		return
	}
	agent, err := w.build(ws, agent.TaskOwner{Parent: m.Session, Attempt: attempt, Interactive: m.Interactive}, taskSpec, wt != nil)
	if err != nil {
		refuse(err.Error(), true)
		return
	}
	var price *event.Price
	if pp, ok := agent.Provider.(interface{ Price() event.Price }); ok {
		p := pp.Price()
		price = &p
	}
	posture := m.Posture
	if posture == "" {
		posture = l.posture
	}
	// Accepted goes out before the job exists, so it reaches the proxy
	// ahead of the job's first events.
	reply(&remote.Accepted{Task: task, Attempt: attempt, Model: agent.Model, Price: price})
	silenced := &atomic.Bool{}
	spec := jobSpec{task: m.Spec, attempt: attempt, session: m.Session, agent: agent, proxy: sender,
		posture: posture, grace: w.spec.Grace, price: price, silenced: silenced, lend: m.LendWindow, iso: iso, wt: wt}
	pid := c.SpawnPrefix(jobProps(w.sys, spec, w.log), "job/"+task+"#"+strconv.Itoa(attempt)+"/")
	w.jobs[pid.Id] = &jobRef{pid: pid, lease: l.key, epoch: m.Epoch, task: task, attempt: attempt, proxy: sender, silenced: silenced}
	w.log.Info("task started", "task", task, "attempt", attempt, "session", m.Session, "model", agent.Model)
}

// admits checks a start against the worker's state: its lease and
// workspace, or why it is refused ("" when it is not).
func (w *workerActor) admits(m *remote.Start) (*lease, string, string) {
	task, attempt := m.Spec.ID, m.Attempt
	if task == "" {
		return nil, "", "a start without a task id"
	}
	if w.draining {
		return nil, "", "draining"
	}
	var l *lease
	for _, cand := range w.leases {
		if cand.session == m.Session && (l == nil || cand.epoch == m.Epoch) {
			l = cand
		}
	}
	if l == nil || l.epoch != m.Epoch {
		return nil, "", "epoch"
	}
	wsName := m.Workspace
	if wsName == "" {
		wsName = l.workspace
	}
	ws, ok := w.workspace(wsName)
	if !ok {
		return nil, "", "workspace"
	}
	for _, j := range w.jobs {
		if j.lease == l.key && j.task == task && j.attempt == attempt && !j.ended {
			return nil, "", "duplicate attempt"
		}
	}
	if w.running() >= w.spec.Capacity {
		return nil, "", "full"
	}
	return l, ws, ""
}

// Isolating is an Agents that can give a worktree writer a git worktree
// of its own in the workspace.
type Isolating interface {
	Isolator(parent string) isolate.Isolator
}

// startPrepared brings a worktree writer's start back to the worker once
// its worktree is made (or why not).
type startPrepared struct {
	m      *remote.Start
	sender *actor.PID
	iso    isolate.Isolator
	wt     *isolate.Worktree
	err    error
}

// drop removes a made worktree whose start is refused after all.
func (p *startPrepared) drop() {
	if p != nil && p.wt != nil {
		p.iso.Drop(context.Background(), *p.wt)
	}
}

// prepare makes a worktree writer's worktree of ws off the worker's
// mailbox (a checkout of a large tree takes seconds); the start holds a
// slot meanwhile and goes on as a startPrepared. The worktree is this
// worker's: it sends the changes back as a patch when the task ends.
func (w *workerActor) prepare(ws string, m *remote.Start, sender *actor.PID) error {
	is, ok := w.agents[ws].(Isolating)
	if !ok {
		return errors.New("this worker cannot give a writer a worktree")
	}
	iso := is.Isolator(m.Session)
	if !iso.Available() {
		return fmt.Errorf("workspace %s is not in a git repository: a worktree writer cannot run here", ws)
	}
	w.preparing++
	sys, self := w.sys, w.self
	done := func(wt *isolate.Worktree, err error) {
		sys.Send(self, &startPrepared{m: m, sender: sender, iso: iso, wt: wt, err: err})
	}
	w.sys.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), isolate.Timeout)
		defer cancel()
		made, err := iso.Prepare(ctx, m.Fleet, m.Spec)
		if err != nil {
			done(nil, fmt.Errorf("worktree: %w", err))
			return
		}
		done(&made, nil)
	}, func(reason any, _ []byte) { done(nil, fmt.Errorf("worktree: panic: %v", reason)) })
	return nil
}

// build calls the workspace's factory; a panic there is the task's
// refusal, not the worker's crash. ours says the spec's Workdir is a
// worktree this worker made.
func (w *workerActor) build(ws string, owner agent.TaskOwner, spec event.TaskSpec, ours bool) (agent agent.AgentSpec, err error) {
	defer panics.Catch(&err)
	if spec.Continue != "" {
		// The conversation a follow-up continues is a file of the parent's
		// host: a worker never opens a path a scheduler names.
		return agent, errors.New("a follow-up turn runs where its agent ran, not on a worker")
	}
	if spec.Workdir != "" && !ours {
		// Nor is a sandbox ever rooted where a scheduler says.
		return agent, errors.New("a task's worktree is made by the worker that runs it, not named by its scheduler")
	}
	return w.agents[ws].AgentFor(owner, spec)
}

// route finds the job of task#attempt a cancel or an approval is for:
// the sender's own job (a proxy) first, else one of the sender's
// scheduler, else the only one by that name.
func (w *workerActor) route(c actor.Context, task string, attempt int) *jobRef {
	var match []*jobRef
	for _, j := range w.jobs {
		if j.task == task && j.attempt == attempt {
			match = append(match, j)
		}
	}
	sender := c.Sender()
	for _, j := range match {
		if sender != nil && j.proxy != nil && j.proxy.Equal(sender) {
			return j
		}
	}
	if l := w.leaseOf(sender); l != nil {
		for _, j := range match {
			if j.lease == l.key {
				return j
			}
		}
	}
	if len(match) == 1 {
		return match[0]
	}
	w.log.Debug("message for an unknown attempt dropped", "task", task, "attempt", attempt)
	return nil
}

func (w *workerActor) posture(c actor.Context, m *remote.Posture) {
	l := w.leaseFor(c.Sender(), m.Epoch)
	if l == nil {
		w.log.Debug("posture from an unknown sender dropped")
		return
	}
	l.posture = m.Posture
	for _, j := range w.jobs {
		if j.lease == l.key {
			c.Send(j.pid, &agent.SetPosture{Posture: m.Posture})
		}
	}
}

// forget ends a scheduler's lease: its jobs are cancelled without a word
// to it (it has given them up). reachable says the scheduler is known to
// be there (it said bye), so its link can be unwatched; after a lapse or
// the link's end even an unwatch would dial a peer that may be gone, and
// the stale watch is harmless: a lease no longer held ignores it.
func (w *workerActor) forget(c actor.Context, l *lease, why string, reachable bool) {
	if l.timer != nil {
		l.timer.Stop()
	}
	delete(w.leases, l.key)
	if reachable && l.link != nil && !w.linkInUse(l.link, l.key) {
		c.Unwatch(l.link)
	}
	for _, j := range w.jobs {
		if j.lease == l.key {
			w.giveUp(c, j, why)
		}
	}
}

func (w *workerActor) terminated(c actor.Context, m *actor.Terminated) {
	if m.Who == nil {
		return
	}
	if j := w.jobs[m.Who.Id]; j != nil && j.pid.Equal(m.Who) {
		delete(w.jobs, m.Who.Id)
		w.checkIdle()
		return
	}
	// A watched link: its scheduler is gone (or unreachable).
	var gone []*lease
	for _, l := range w.leases {
		if l.link != nil && l.link.Equal(m.Who) {
			gone = append(gone, l)
		}
	}
	for _, l := range gone {
		w.log.Warn("scheduler link terminated; cancelling its tasks", "scheduler", l.scheduler, "why", m.Why.String())
		w.forget(c, l, "the scheduler's link terminated", false)
	}
}

// drain refuses new work, says bye to every scheduler and cancels its
// jobs.
func (w *workerActor) drain(c actor.Context) {
	if w.draining {
		return
	}
	w.draining = true
	w.log.Info("draining", "running", w.running(), "schedulers", len(w.leases))
	keys := make([]string, 0, len(w.leases))
	for k := range w.leases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		l := w.leases[k]
		if l.link != nil {
			remote.SendWorker(w.sys, c, l.link, &remote.Bye{Epoch: l.epoch, Why: "worker draining"})
		}
		w.forget(c, l, "worker draining", true)
	}
	// Jobs of no lease (their scheduler's lease just ended) stop too.
	for _, j := range w.jobs {
		w.giveUp(c, j, "worker draining")
	}
}

// giveUp cancels a job whose scheduler has given it up. The job is
// silenced at once, not only when the cancel reaches it: what it still
// has queued (a batch of events, its end) must not go to a scheduler that
// may be gone, since a send there dials it again.
func (w *workerActor) giveUp(c actor.Context, j *jobRef, why string) {
	j.silenced.Store(true)
	c.Send(j.pid, &jobCancel{why: why, quiet: true})
}

// checkIdle wakes the waiters whose count of jobs is reached.
func (w *workerActor) checkIdle() {
	keep := w.idle[:0]
	for _, a := range w.idle {
		if len(w.jobs) <= a.atMost {
			close(a.done)
		} else {
			keep = append(keep, a)
		}
	}
	w.idle = keep
}

// repair brings the worker back to a consistent state after a handler
// panicked: a start or hello that was not answered gets a refusal naming
// the crash (the scheduler may try again), jobs that stopped unseen are
// dropped, and idle waiters are checked.
func (w *workerActor) repair(c actor.Context, m *kernel.Crashed) {
	reason := m.Error()
	if w.leases == nil {
		w.self = c.Self()
		w.leases, w.jobs = map[string]*lease{}, map[string]*jobRef{}
	}
	for id, j := range w.jobs {
		if !w.sys.Alive(id) || j.pid == nil {
			delete(w.jobs, id)
		}
	}
	// A job spawned by a start that crashed before recording it would hold
	// a slot nobody counts: it is stopped, and tells its proxy so.
	for _, child := range c.Children() {
		if j := w.jobs[child.Id]; j == nil {
			w.log.Warn("stopping a job the worker lost track of", "job", child.Id)
			c.Stop(child)
		}
	}
	if p, ok := m.Lost.(*startPrepared); ok && !w.Answered() {
		// A start that crashed once its worktree was made: refused, and
		// the worktree goes.
		p.drop()
		remote.SendWorker(w.sys, c, p.sender, &remote.Refused{Task: p.m.Spec.ID, Attempt: p.m.Attempt, Reason: reason})
	}
	if !w.Answered() && m.Sender != nil {
		lost, _ := remote.FromWire(m.Lost)
		switch lost := lost.(type) {
		case *remote.Start:
			remote.SendWorker(w.sys, c, m.Sender, &remote.Refused{Task: lost.Spec.ID, Attempt: lost.Attempt, Reason: reason})
		case *remote.Hello:
			remote.SendWorker(w.sys, c, m.Sender, w.welcome(lost.Epoch, reason))
		}
	}
	w.checkIdle()
}
