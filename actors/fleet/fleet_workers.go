package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/actors/fleet/link"
	"reasonix/actors/kernel"
	"reasonix/actors/remote"
	"reasonix/core/journal"
	"reasonix/scheduler"
)

// Defaults of the worker links.
const (
	defaultHeartbeat = time.Second
	defaultMissLimit = 3
	// fenceMargin is added to a worker's lease before a writer lost there
	// runs again: the time a cut-off worker needs, once its lease lapsed,
	// to cancel and kill the writer it may still run.
	fenceMargin = 500 * time.Millisecond
	// settleWait bounds how long a new scheduler holds its first tasks
	// for its links' first verdicts: a probe ends within link.ProbeTimeout
	// and a hello is answered in milliseconds.
	settleWait = link.ProbeTimeout + time.Second
)

// workersSettled ends the wait for the links' first verdicts.
type workersSettled struct{}

// workerNode is the scheduler's view of one worker host.
type workerNode struct {
	spec WorkerSpec
	link *actor.PID
	// up and epoch are the link's current up-period; target is the worker
	// actor.
	up     bool
	epoch  uint64
	target *actor.PID
	// full is set when the worker refused a task for want of slots; the
	// node takes nothing until a heartbeat answer shows a free slot.
	full bool
	// state is the worker as status shows it; its Capacity is the slots
	// the queue gives the node.
	state fleetmsg.WorkerState
}

// requeueWriter ends a lost writer's fence: its worker has had the time
// to kill it, so it may run elsewhere.
type requeueWriter struct {
	taskID  string
	attempt int
}

// heartbeat and missLimit are the link settings with their defaults.
func (f *fleetActor) heartbeat() time.Duration {
	if f.spec.Heartbeat > 0 {
		return f.spec.Heartbeat
	}
	return defaultHeartbeat
}

func (f *fleetActor) missLimit() int {
	if f.spec.MissLimit > 0 {
		return f.spec.MissLimit
	}
	return defaultMissLimit
}

// lease is how long a worker keeps running our tasks without hearing
// from us.
func (f *fleetActor) lease() time.Duration {
	return f.heartbeat() * time.Duration(f.missLimit())
}

// StartWorkersRemote starts the remote endpoint the workers of spec
// answer to, unless spec has no workers or sys has an endpoint already.
// Call it before anything runs on sys: starting an endpoint sets the
// system's address, which every spawn and request reads. On an error the
// workers are dropped from spec, so the fleet runs every task in this
// process, and the error says why.
func StartWorkersRemote(sys *kernel.System, spec *FleetSpec) error {
	if spec == nil || len(spec.Workers) == 0 || spec.Remote == nil || sys.Endpoint() != nil {
		return nil
	}
	if _, err := remote.StartRemote(sys, *spec.Remote); err != nil {
		spec.Workers = nil
		err = fmt.Errorf("workers not used, every task runs in this process: %w", err)
		spec.Warning = err.Error()
		return err
	}
	return nil
}

// startWorkers spawns one link per worker. When nobody started the
// remote endpoint before the session (StartWorkersRemote), it is started
// here, late: that still works, but races with whatever else the system
// runs at that moment.
func (f *fleetActor) startWorkers(c actor.Context) {
	if f.spec.Warning != "" {
		// The user configured workers that cannot be used: say so where
		// they look, not only in the log.
		f.publish(&event.Notice{Level: "warn", Message: f.spec.Warning}, "")
	}
	if len(f.spec.Workers) == 0 {
		return
	}
	if f.spec.Remote != nil && f.sys.Endpoint() == nil {
		if err := StartWorkersRemote(f.sys, &f.spec); err != nil {
			f.log.Warn("remote endpoint did not start; every task runs in this process", "err", err)
			f.publish(&event.Notice{Level: "warn", Message: err.Error()}, "")
			return
		}
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	f.schedID = f.session + "-" + hex.EncodeToString(id[:])
	f.nodes = map[string]*workerNode{}
	f.links = map[string]string{}
	f.unsettled = map[string]bool{}
	added := 0
	for _, w := range f.spec.Workers {
		if _, dup := f.nodes[w.Name]; dup {
			f.log.Warn("worker listed twice; the first entry is used", "worker", w.Name)
			continue
		}
		if err := f.q.SetNode(scheduler.Node{Name: w.Name, Slots: w.Capacity, Writes: w.Writes}); err != nil {
			f.log.Warn("worker skipped", "worker", w.Name, "err", err)
			continue
		}
		n := &workerNode{spec: w,
			state: fleetmsg.WorkerState{Name: w.Name, Address: w.Address, State: link.WorkerProbing, Capacity: w.Capacity, Since: time.Now()}}
		f.nodes[w.Name] = n
		f.nodeOrder = append(f.nodeOrder, w.Name)
		f.spawnLink(c, n)
		f.unsettled[w.Name] = true
		added++
	}
	if added > 0 {
		sys, self := f.sys, f.self
		f.settleBy = time.Now().Add(settleWait)
		f.settleTimer = time.AfterFunc(settleWait, func() { sys.Send(self, &workersSettled{}) })
	}
	if added > 0 && !f.spec.RunLocal {
		if err := f.q.SetNode(scheduler.Node{Name: "", Slots: 0}); err != nil {
			f.log.Warn("local node", "err", err)
		}
	}
}

func (f *fleetActor) spawnLink(c actor.Context, n *workerNode) {
	w := n.spec
	if w.Workspace == "" {
		w.Workspace = f.workspace()
	}
	spec := link.Spec{Worker: w, Scheduler: f.schedID, Session: f.session, Heartbeat: f.heartbeat(), MissLimit: f.missLimit(),
		Probe: f.spec.Probe}
	if f.spec.Target != nil {
		spec.Target = f.spec.Target(n.spec)
	}
	if spec.Probe == nil && f.spec.Remote != nil {
		o := *f.spec.Remote
		spec.Probe = func(ctx context.Context, address string) (time.Duration, error) {
			return remote.ProbeRemote(ctx, address, o)
		}
	}
	pid, err := c.SpawnNamed(link.Props(f.sys, spec), "link/"+w.Name)
	if err != nil {
		pid = c.SpawnPrefix(link.Props(f.sys, spec), "link/"+w.Name+"-")
	}
	n.link = pid
	f.links[pid.Id] = w.Name
	if f.posture != "" {
		c.Send(pid, &link.Posture{Posture: f.posture})
	}
}

// workspace is the checkout name workers must serve by default.
func (f *fleetActor) workspace() string {
	if f.spec.Workspace != "" {
		return f.spec.Workspace
	}
	if f.spec.Root != "" {
		return filepath.Base(f.spec.Root)
	}
	return ""
}

// onWorkerUp puts a worker's slots in the queue and admits what fits.
func (f *fleetActor) onWorkerUp(c actor.Context, m *link.Up) {
	n := f.nodes[m.Name]
	if n == nil {
		return
	}
	delete(f.unsettled, m.Name)
	if n.up && n.epoch != m.Epoch {
		// A new epoch without the loss of the old one (a lost message):
		// the old epoch's attempts are lost.
		f.onWorkerLost(c, &link.Lost{Name: m.Name, Epoch: n.epoch, Why: "the link opened a new epoch"})
	}
	n.up, n.epoch, n.target, n.full = true, m.Epoch, m.Target, false
	n.state.State, n.state.Since, n.state.Error, n.state.Capacity = link.WorkerUp, time.Now(), "", m.Capacity
	f.setNode(n)
	f.admit(c)
}

// setNode tells the queue the node's slots and whether it takes tasks.
func (f *fleetActor) setNode(n *workerNode) {
	slots := max(1, n.state.Capacity)
	if err := f.q.SetNode(scheduler.Node{Name: n.spec.Name, Slots: slots, Up: n.up && !n.full, Writes: n.spec.Writes}); err != nil {
		f.log.Warn("worker node", "worker", n.spec.Name, "err", err)
	}
}

// onWorkerLost takes a worker out of placement; every attempt there of
// that epoch is lost, and its proxy answers for it.
func (f *fleetActor) onWorkerLost(c actor.Context, m *link.Lost) {
	n := f.nodes[m.Name]
	if n == nil || !n.up || n.epoch != m.Epoch {
		return
	}
	n.up = false
	n.state.State, n.state.Since, n.state.Error = link.WorkerLost, time.Now(), m.Why
	f.setNode(n)
	why := fmt.Sprintf("worker %s lost: %s", m.Name, m.Why)
	for id, t := range f.tasks {
		if t.node != m.Name {
			continue
		}
		switch {
		case t.pid != nil && t.epoch == m.Epoch:
			c.Send(t.pid, &link.AttemptLost{Why: why})
		case t.held:
			// Placed there but held behind a warming prefix: it never
			// started, so it goes back to the queue at once.
			t.held = false
			f.requeue(c, id, why)
		}
	}
	f.admit(c)
}

// onWorkerNote keeps the worker's state for status and clears a full
// mark once the worker reports a free slot.
func (f *fleetActor) onWorkerNote(c actor.Context, m *link.WorkerNote) {
	n := f.nodes[m.Name]
	if n == nil {
		return
	}
	if f.unsettled[m.Name] && (m.State.State != link.WorkerProbing || m.State.Error != "") {
		// The link's first verdict: it will not be up soon.
		delete(f.unsettled, m.Name)
		if len(f.unsettled) == 0 {
			defer f.admit(c)
		}
	}
	switch {
	case m.State.State == link.WorkerUp && (!n.up || n.epoch != m.Epoch):
		// A report after a repair: the link is up in an epoch the
		// scheduler missed.
		target := n.target
		if target == nil {
			target = actor.NewPID(n.spec.Address, remote.HostActorName)
			if f.spec.Target != nil {
				target = f.spec.Target(n.spec)
			}
		}
		f.onWorkerUp(c, &link.Up{Name: m.Name, Epoch: m.Epoch, Capacity: m.State.Capacity, Target: target})
		return
	case m.State.State != link.WorkerUp && n.up:
		f.onWorkerLost(c, &link.Lost{Name: m.Name, Epoch: n.epoch, Why: "its link reports it " + m.State.State})
	}
	if !n.up {
		n.state.State, n.state.Error, n.state.Since = m.State.State, m.State.Error, m.State.Since
		return
	}
	if n.full && m.Epoch == n.epoch && m.Free > 0 {
		n.full = false
		f.setNode(n)
		f.admit(c)
	}
}

// onLinkStopped respawns a link that stopped on its own (it failed past
// repair); its worker is lost until the new link says otherwise.
func (f *fleetActor) onLinkStopped(c actor.Context, pid *actor.PID) bool {
	name, ok := f.links[pid.Id]
	if !ok {
		return false
	}
	delete(f.links, pid.Id)
	if f.stoppingAll {
		return true
	}
	n := f.nodes[name]
	if n == nil {
		return true
	}
	f.log.Warn("worker link stopped; starting a new one", "worker", name)
	if n.up {
		f.onWorkerLost(c, &link.Lost{Name: name, Epoch: n.epoch, Why: "its link stopped"})
	}
	f.spawnLink(c, n)
	return true
}

// startRemote starts an admitted task placed on a worker: a proxy child
// stands in for the executor, and the worker builds the agent.
func (f *fleetActor) startRemote(c actor.Context, t *runningTask, deadline time.Time) {
	id := t.spec.ID
	n := f.nodes[t.node]
	t.started, t.deadline = time.Now(), deadline
	if n == nil || !n.up {
		f.requeue(c, id, fmt.Sprintf("worker %s went down before the task started", t.node))
		return
	}
	t.epoch = n.epoch
	t.budget = f.allot(t)
	if t.budget.Seconds > 0 {
		t.overAt = t.started.Add(time.Duration(t.budget.Seconds) * time.Second)
	}
	sys, self := f.sys, f.self
	f.jot(t.fleet, journal.KindStart, id, startRecord{Budget: budgetRef(t.budget), Worker: t.node, Attempt: link.LaterAttempt(t.attempt)})
	t.meter = &team.TaskMeter{Budget: t.budget, Over: func(what string) { sys.Send(self, &TaskOverBudget{TaskID: id, what: what}) }}
	spec := t.spec
	spec.Budget, spec.FleetBudget = t.budget, event.Budget{}
	ws := n.spec.Workspace
	if ws == "" {
		ws = f.workspace()
	}
	rs := link.TaskSpec{Worker: t.node, Link: n.link, Meter: t.meter, Bus: f.bus, Budget: budgetRef(t.budget),
		Start: remote.Start{Epoch: n.epoch, Attempt: t.attempt, Session: f.session, Fleet: t.fleet, Workspace: ws, Spec: spec,
			Posture: f.posture, Interactive: f.spec.Interactive, LendWindow: true}}
	if f.spec.TaskTimeout > 0 {
		rs.Backstop = f.spec.TaskTimeout + 2*f.grace() + f.lease() + f.heartbeat()
	}
	if key, fleetID := t.warmKey, t.fleet; key != "" {
		rs.OnFirst = func() { sys.Send(self, &prefixWarmed{fleet: fleetID, key: key}) }
	}
	name := fmt.Sprintf("remote/%s#%d", id, t.attempt)
	pid, err := c.SpawnNamed(link.TaskProps(f.sys, rs), name)
	if err != nil {
		pid = c.SpawnPrefix(link.TaskProps(f.sys, rs), name+"-")
	}
	t.pid = pid
	f.byPID[t.pid.Id] = id
	if fl := f.fleets[t.fleet]; fl != nil {
		fl.live++
	}
	f.run(c, t)
}

// attemptEnded handles a proxy's answer that is not the task's end: its
// worker was lost or refused the attempt. It reports whether it did.
func (f *fleetActor) attemptEnded(c actor.Context, id string, m *agent.TurnFinished) bool {
	t := f.tasks[id]
	if t == nil || (m.Status != link.StatusWorkerLost && m.Status != link.StatusWorkerRefused) {
		return false
	}
	if m.Status == link.StatusWorkerRefused {
		if n := f.nodes[t.node]; n != nil && n.up && !n.full && n.epoch == t.epoch {
			// The worker's count wins over ours: no more tasks there
			// until it reports a free slot.
			n.full = true
			f.setNode(n)
		}
		f.retire(c, t)
		f.requeue(c, id, fmt.Sprintf("worker %s refused the task: %s", t.node, m.Error))
		return true
	}
	why := m.Error
	switch {
	case t.stopping:
		// Being cancelled or expired anyway: the stop decides how it
		// ends.
		f.finishTask(c, id, event.TaskResult{TaskID: id, Status: event.TaskFailed, Error: why})
	case t.spec.Writer:
		// The worker may still run the writer until its lease lapses:
		// keep the writer's slots and claims until it has certainly
		// fenced itself, so no overlapping writer starts meanwhile.
		f.retire(c, t)
		sys, self, attempt := f.sys, f.self, t.attempt
		t.fence = time.AfterFunc(f.lease()+f.heartbeat()+fenceMargin, func() { sys.Send(self, &requeueWriter{taskID: id, attempt: attempt}) })
		t.fenceWhy = why
	default:
		f.retire(c, t)
		f.lostAttempt(c, id, why)
	}
	return true
}

// lostAttempt reruns or fails a task whose attempt was lost, per the lost
// policy.
func (f *fleetActor) lostAttempt(c actor.Context, id, why string) {
	if f.spec.LostPolicy == "fail" {
		f.finishTask(c, id, event.TaskResult{TaskID: id, Status: event.TaskFailed, Error: why + " (agent.resume_running = \"fail\")"})
		return
	}
	f.requeue(c, id, why)
}

// retire stops an attempt's proxy without ending the task; the fleet's
// result still waits for it to stop.
func (f *fleetActor) retire(c actor.Context, t *runningTask) {
	if t.pid == nil {
		return
	}
	delete(f.byPID, t.pid.Id)
	f.stopping[t.pid.Id] = t.fleet
	c.Stop(t.pid)
	t.pid = nil
}

// onRequeueWriter ends a lost writer's fence.
func (f *fleetActor) onRequeueWriter(c actor.Context, m *requeueWriter) {
	t := f.tasks[m.taskID]
	if t == nil || t.fence == nil || t.attempt != m.attempt {
		return
	}
	t.fence = nil
	f.lostAttempt(c, m.taskID, t.fenceWhy)
}

// requeue puts a task whose attempt was lost back in the queue, or fails
// it when it has used its attempts. Its old attempt's gate closes with
// task_requeued, so nothing of that attempt follows on the bus.
func (f *fleetActor) requeue(c actor.Context, id, why string) {
	t := f.tasks[id]
	if t == nil {
		return
	}
	if t.fence != nil {
		t.fence.Stop()
		t.fence = nil
	}
	if t.reaper != nil {
		t.reaper.Stop()
		t.reaper = nil
	}
	worker := t.node
	f.jot(t.fleet, journal.KindRequeue, id, requeueRecord{Worker: worker, Attempt: t.attempt, Why: why})
	attempt, err := f.q.Requeue(id, time.Now())
	if err != nil {
		if errors.Is(err, scheduler.ErrAttempts) {
			why = fmt.Sprintf("%s (gave up after %d attempts)", why, t.attempt)
		}
		f.finishTask(c, id, event.TaskResult{TaskID: id, Status: event.TaskFailed, Error: why})
		return
	}
	f.log.Info("task requeued", "task", id, "worker", worker, "attempt", attempt, "why", why)
	ev := &event.TaskRequeued{Meta: event.Meta{Session: f.session, Task: id}, Fleet: t.fleet, Worker: worker, Attempt: attempt, Reason: why}
	if t.meter != nil {
		t.meter.Close(f.bus, ev)
	} else {
		f.publish(ev, id)
	}
	if t.warmKey != "" {
		f.warmed(c, t.fleet, t.warmKey)
	}
	t.meter, t.node, t.epoch, t.attempt, t.warmKey = nil, "", 0, attempt, ""
	t.started, t.deadline, t.overAt, t.over, t.budget, t.stopping = time.Time{}, time.Time{}, time.Time{}, "", event.Budget{}, false
	f.admit(c)
}

// requeueRecord is the payload of a requeue journal record.
type requeueRecord struct {
	Worker  string `json:"worker,omitempty"`
	Attempt int    `json:"attempt"`
	Why     string `json:"why"`
}

// workersStatus lists the workers for FleetStatus, with this scheduler's
// running count on each.
func (f *fleetActor) workersStatus(snap scheduler.Snapshot) []fleetmsg.WorkerState {
	running := map[string]int{}
	for _, ns := range snap.Nodes {
		running[ns.Node.Name] = ns.Running
	}
	out := make([]fleetmsg.WorkerState, 0, len(f.nodeOrder))
	for _, name := range f.nodeOrder {
		n := f.nodes[name]
		st := n.state
		st.Running = running[name]
		out = append(out, st)
	}
	return out
}

// askLinks makes every link report its state again, after a repair that
// may have lost an up or lost message.
func (f *fleetActor) askLinks(c actor.Context) {
	for _, name := range f.nodeOrder {
		if n := f.nodes[name]; n != nil && n.link != nil {
			c.Request(n.link, &link.Query{})
		}
	}
}
