package link

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/eventstream"
	actorremote "github.com/asynkron/protoactor-go/remote"

	"reasonix/actors/fleet/fleetmsg"
	"reasonix/actors/kernel"
	"reasonix/actors/remote"
)

// Worker states as FleetStatus shows them.
const (
	WorkerProbing = "probing"
	WorkerUp      = "up"
	WorkerLost    = "lost"
	Refused       = "refused"
)

// Link timing. A probe is our own gRPC dial (no protoactor endpoint, so a
// dead address leaks nothing); it is retried with a doubling backoff, and
// slowly once the worker has refused us, since a refusal (another
// protocol, another workspace, draining) changes only when someone acts.
const (
	// ProbeTimeout bounds one probe of a worker's address.
	ProbeTimeout       = 2 * time.Second
	linkBackoffMin     = 250 * time.Millisecond
	linkBackoffMax     = 10 * time.Second
	linkRefusedBackoff = 10 * time.Second
)

// WorkerSpec is one configured worker host.
type WorkerSpec struct {
	Name    string
	Address string // host:port of its `reasonix worker --listen`
	// Capacity is how many of this scheduler's tasks it runs at once.
	Capacity int
	// Workspace overrides FleetSpec.Workspace for this worker.
	Workspace string
	// Writes are the paths (relative to Root) writers may be placed
	// there for; empty: readers only; ".": any writer.
	Writes []string
}

// Spec configures the link to one worker.
type Spec struct {
	Worker WorkerSpec
	// Scheduler is this scheduler process's id (a worker keeps one lease
	// per scheduler), Session the parent session, for the worker's logs.
	Scheduler string
	Session   string
	// Heartbeat and MissLimit bound loss detection: the worker is lost
	// once MissLimit heartbeats in a row went unanswered.
	Heartbeat time.Duration
	MissLimit int
	// Probe checks that the worker's address answers with our credentials
	// before protoactor is allowed to dial it; nil skips the check.
	Probe func(ctx context.Context, address string) (time.Duration, error)
	// Target is the worker actor; nil means actor.NewPID(Address,
	// workerActorName).
	Target *actor.PID
}

// The link tells its parent (the scheduler) about the worker with these.

// Up says the link's worker accepted a new epoch and takes tasks.
type Up struct {
	Name     string
	Epoch    uint64
	Capacity int
	Target   *actor.PID
}

// Lost says the worker of that epoch is gone: every attempt placed
// there in that epoch is lost.
type Lost struct {
	Name  string
	Epoch uint64
	Why   string
}

// WorkerNote reports a change that is neither up nor lost: a failed probe,
// a refusal, or the worker's load from a heartbeat answer.
type WorkerNote struct {
	Name  string
	Epoch uint64
	State fleetmsg.WorkerState
	// Free is the worker's own count of free slots (from a heartbeat
	// answer); -1 when the note carries none.
	Free int
}

// Query asks a link for its state; the reply is a *workerNote, and
// the scheduler reconciles its view of the node with it.
type Query struct{}

// Forward asks the link to send msg to its worker with sender as the
// sender (so the answers go to sender, a task's proxy). The link drops it
// when the worker is not up in that epoch: nothing is ever sent to a
// worker believed lost, because protoactor would dial it again, leak a
// connection per failed dial and hold its endpoint for ten seconds.
type Forward struct {
	Epoch  uint64
	Msg    any
	Sender *actor.PID
}

// Posture sets the posture of every task of the scheduler on the
// worker, now and after each new epoch.
type Posture struct{ Posture string }

// Internal messages of the link.
type (
	linkProbed struct {
		gen int
		rtt time.Duration
		err error
	}
	linkTimer    struct{ gen int } // retry, hello timeout or heartbeat, by phase
	endpointDown struct{}
)

// Link phases; the state shown to users is derived (see view).
const (
	phaseWaiting = iota // a retry is scheduled
	phaseProbing
	phaseHello
	phaseUp
)

// workerLink is the actor that owns all traffic to one worker: it probes
// the address, opens a link epoch with a hello, keeps the worker's lease
// with heartbeats, and tells the scheduler when the worker is up or lost.
type workerLink struct {
	sys  *kernel.System
	spec Spec
	log  *slog.Logger

	self   *actor.PID
	target *actor.PID
	phase  int
	// gen tags the timer and probe in flight, so a stale one is ignored.
	gen    int
	timer  *time.Timer
	cancel context.CancelFunc
	sub    *eventstream.Subscription

	epoch    uint64
	beatN    uint64
	missed   int
	everUp   bool
	refused  string
	lastErr  string
	since    time.Time
	capacity int
	backoff  time.Duration
	posture  string
}

// Props spawns the link to one worker host.
func Props(sys *kernel.System, spec Spec) *actor.Props {
	log := sys.Logger().With("actor", "link", "worker", spec.Worker.Name)
	return kernel.Props("link", log, func() actor.Actor {
		return &workerLink{sys: sys, spec: spec, log: log}
	})
}

// Receive implements actor.Actor.
func (l *workerLink) Receive(c actor.Context) {
	m, err := remote.FromWire(c.Message())
	if err != nil {
		l.log.Warn("undecodable message from worker", "err", err)
		return
	}
	switch m := m.(type) {
	case *actor.Started:
		l.start(c)
	case *linkProbed:
		l.probed(c, m)
	case *linkTimer:
		l.onTimer(c, m)
	case *remote.Welcome:
		l.welcome(c, m)
	case *remote.HeartbeatAck:
		if l.phase == phaseUp && m.Epoch == l.epoch {
			l.missed = 0
			l.note(c, m.Free)
		}
	case *remote.Bye:
		if l.phase == phaseUp && m.Epoch == l.epoch {
			l.lose(c, "worker said goodbye: "+m.Why, false)
		}
	case *actor.Terminated:
		if l.phase == phaseUp && m.Who != nil && m.Who.Equal(l.target) {
			l.lose(c, "worker stopped ("+m.Why.String()+")", false)
		}
	case *endpointDown:
		if l.phase == phaseUp || l.phase == phaseHello {
			l.lose(c, "connection to the worker closed", false)
		}
	case *Forward:
		if l.phase != phaseUp || m.Epoch != l.epoch {
			l.log.Debug("dropped a message for a worker that is not up", "type", fmt.Sprintf("%T", m.Msg))
			return
		}
		w, err := remote.ToWire(m.Msg)
		if err != nil {
			l.log.Error("worker message not sent", "err", err)
			return
		}
		c.RequestWithCustomSender(l.target, w, m.Sender)
	case *Posture:
		l.posture = m.Posture
		if l.phase == phaseUp {
			remote.SendWorker(l.sys, c, l.target, &remote.Posture{Epoch: l.epoch, Posture: l.posture})
		}
	case *Query:
		c.Respond(l.report())
	case *kernel.Crashed:
		if l.sub == nil { // Started itself crashed
			l.start(c)
			return
		}
		// A handler panicked part way through a transition: start over
		// from a probe. An epoch that was up is reported lost first, so
		// the scheduler never keeps attempts on a link it cannot trust.
		l.log.Error("link repaired", "reason", m.Error())
		if l.phase == phaseUp {
			l.lose(c, "link repaired after a crash", false)
			return
		}
		l.retry(c, linkBackoffMin)
	case *actor.Stopping:
		l.stop(c)
	}
}

func (l *workerLink) start(c actor.Context) {
	l.self = c.Self()
	l.target = l.spec.Target
	if l.target == nil {
		l.target = actor.NewPID(l.spec.Worker.Address, remote.HostActorName)
	}
	l.capacity = l.spec.Worker.Capacity
	l.since = time.Now()
	sys, self, addr := l.sys, l.self, l.spec.Worker.Address
	// The event stream calls its handlers on the publisher's goroutine
	// (protoactor's endpoint manager): hand the event to the mailbox.
	l.sub = sys.ActorSystem().EventStream.Subscribe(func(evt any) {
		if e, ok := evt.(*actorremote.EndpointTerminatedEvent); ok && e.Address == addr {
			sys.Send(self, &endpointDown{})
		}
	})
	l.probe(c)
}

// probe checks the address on a goroutine of its own, never on the
// mailbox: a dial to a cut network takes the whole probe timeout.
func (l *workerLink) probe(c actor.Context) {
	l.phase = phaseProbing
	l.gen++
	if l.spec.Probe == nil {
		l.probed(c, &linkProbed{gen: l.gen})
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ProbeTimeout)
	l.cancel = cancel
	sys, self, gen, addr, probe := l.sys, l.self, l.gen, l.spec.Worker.Address, l.spec.Probe
	sys.Go(func() {
		defer cancel()
		rtt, err := probe(ctx, addr)
		sys.Send(self, &linkProbed{gen: gen, rtt: rtt, err: err})
	}, func(reason any, _ []byte) {
		sys.Send(self, &linkProbed{gen: gen, err: fmt.Errorf("probe panicked: %v", reason)})
	})
}

func (l *workerLink) probed(c actor.Context, m *linkProbed) {
	if m.gen != l.gen || l.phase != phaseProbing {
		return
	}
	if l.cancel != nil {
		l.cancel()
		l.cancel = nil
	}
	if m.err != nil {
		l.lastErr = m.err.Error()
		l.note(c, -1)
		l.retry(c, l.nextBackoff())
		return
	}
	// A new epoch for every hello: the worker cancels whatever it still
	// runs of an older one, and drops its stale messages.
	l.epoch = max(l.epoch+1, uint64(time.Now().UnixNano()))
	l.phase = phaseHello
	l.gen++
	remote.RequestWorker(l.sys, c, l.target, &remote.Hello{Protocol: remote.Protocol, Scheduler: l.spec.Scheduler,
		Session: l.spec.Session, Workspace: l.spec.Worker.Workspace, Epoch: l.epoch, LeaseMS: l.lease().Milliseconds()})
	l.arm(l.lease())
}

func (l *workerLink) welcome(c actor.Context, m *remote.Welcome) {
	if l.phase != phaseHello || m.Epoch != l.epoch {
		return
	}
	l.gen++
	if m.Refused == "" && m.Protocol != remote.Protocol {
		// Nothing but a hello may go to a worker of another protocol: a
		// message type it does not know would crash its process.
		m.Refused = fmt.Sprintf("protocol %d (this scheduler speaks %d)", m.Protocol, remote.Protocol)
	}
	if m.Refused != "" {
		l.refused, l.lastErr = m.Refused, "refused: "+m.Refused
		l.note(c, -1)
		l.retry(c, linkRefusedBackoff)
		return
	}
	l.phase, l.refused, l.lastErr = phaseUp, "", ""
	l.everUp, l.since, l.backoff = true, time.Now(), 0
	l.missed = 0
	l.capacity = l.spec.Worker.Capacity
	if m.Capacity > 0 && m.Capacity < l.capacity {
		l.capacity = m.Capacity // the worker's own limit wins
	}
	c.Watch(l.target)
	l.log.Info("worker up", "epoch", l.epoch, "capacity", l.capacity, "boot", m.Boot)
	c.Send(c.Parent(), &Up{Name: l.spec.Worker.Name, Epoch: l.epoch, Capacity: l.capacity, Target: l.target})
	if l.posture != "" {
		remote.SendWorker(l.sys, c, l.target, &remote.Posture{Epoch: l.epoch, Posture: l.posture})
	}
	l.arm(l.spec.Heartbeat)
}

func (l *workerLink) onTimer(c actor.Context, m *linkTimer) {
	if m.gen != l.gen {
		return
	}
	switch l.phase {
	case phaseWaiting:
		l.probe(c)
	case phaseHello:
		// The worker's port answers our probe but its actor does not:
		// drop protoactor's endpoint so the next try dials afresh.
		l.lastErr = "no answer to hello within " + l.lease().String()
		l.forgetWatcher()
		l.dropEndpoint()
		l.note(c, -1)
		l.retry(c, l.nextBackoff())
	case phaseUp:
		if l.missed >= l.spec.MissLimit {
			l.lose(c, fmt.Sprintf("no heartbeat answer for %s", time.Duration(l.missed)*l.spec.Heartbeat), true)
			return
		}
		l.beatN++
		l.missed++
		remote.RequestWorker(l.sys, c, l.target, &remote.Heartbeat{Epoch: l.epoch, N: l.beatN})
		l.arm(l.spec.Heartbeat)
	}
}

// lose ends the epoch: nothing more is sent to the worker until a probe
// succeeds again, and the scheduler is told so it can rerun or fail what
// ran there.
func (l *workerLink) lose(c actor.Context, why string, dropEndpoint bool) {
	wasUp := l.phase == phaseUp
	l.gen++
	l.lastErr, l.since = why, time.Now()
	// No Unwatch: for a remote worker it is a message to the lost
	// address (a dial). The watch ends with the endpoint, and a late
	// Terminated is ignored while the link is not up.
	l.forgetWatcher()
	if dropEndpoint {
		l.dropEndpoint()
	}
	l.log.Warn("worker lost", "epoch", l.epoch, "why", why)
	if wasUp {
		c.Send(c.Parent(), &Lost{Name: l.spec.Worker.Name, Epoch: l.epoch, Why: why})
	}
	l.retry(c, l.nextBackoff())
}

// forgetWatcher drops the worker from the link's watchers. The worker
// watches its link; left in place, the link's own stop would send that
// watch a Terminated, which for a lost worker is a dial to a dead address
// (and ten seconds of retries holding up the remote's shutdown).
func (l *workerLink) forgetWatcher() {
	if p, ok := l.sys.ActorSystem().ProcessRegistry.GetLocal(l.self.Id); ok {
		p.SendSystemMessage(l.self, &actor.Unwatch{Watcher: l.target})
	}
}

// dropEndpoint makes protoactor give up its connection to the worker as
// if the stream had broken: watchers get AddressTerminated, the writer
// stops, and a later send after a successful probe reconnects cleanly.
func (l *workerLink) dropEndpoint() {
	l.sys.ActorSystem().EventStream.Publish(&actorremote.EndpointTerminatedEvent{Address: l.spec.Worker.Address})
}

func (l *workerLink) retry(c actor.Context, after time.Duration) {
	l.phase = phaseWaiting
	l.gen++
	l.arm(after)
}

func (l *workerLink) nextBackoff() time.Duration {
	switch {
	case l.backoff == 0:
		l.backoff = linkBackoffMin
	default:
		l.backoff = min(2*l.backoff, linkBackoffMax)
	}
	return l.backoff
}

// lease is how long the worker keeps our tasks without a heartbeat.
func (l *workerLink) lease() time.Duration {
	return l.spec.Heartbeat * time.Duration(l.spec.MissLimit)
}

func (l *workerLink) arm(after time.Duration) {
	if l.timer != nil {
		l.timer.Stop()
	}
	sys, self, gen := l.sys, l.self, l.gen
	l.timer = time.AfterFunc(after, func() { sys.Send(self, &linkTimer{gen: gen}) })
}

// view is the worker as FleetStatus shows it.
func (l *workerLink) view() fleetmsg.WorkerState {
	// Running is left to the scheduler, which counts its own tasks there.
	st := fleetmsg.WorkerState{Name: l.spec.Worker.Name, Address: l.spec.Worker.Address, Capacity: l.capacity,
		Since: l.since, Error: l.lastErr}
	switch {
	case l.phase == phaseUp:
		st.State = WorkerUp
	case l.refused != "":
		st.State = Refused
	case l.everUp:
		st.State = WorkerLost
	default:
		st.State = WorkerProbing
	}
	return st
}

func (l *workerLink) report() *WorkerNote {
	return &WorkerNote{Name: l.spec.Worker.Name, Epoch: l.epoch, State: l.view(), Free: -1}
}

func (l *workerLink) note(c actor.Context, free int) {
	n := l.report()
	n.Free = free
	c.Send(c.Parent(), n)
}

func (l *workerLink) stop(c actor.Context) {
	if l.phase == phaseUp {
		// Unwatch while the worker is reachable: left watched, its own
		// stop later would send our gone process a Terminated, a dial
		// to a dead address on the worker's side.
		c.Unwatch(l.target)
		remote.SendWorker(l.sys, c, l.target, &remote.Bye{Epoch: l.epoch, Why: "scheduler stopping"})
	}
	l.phase = phaseWaiting
	l.gen++
	if l.timer != nil {
		l.timer.Stop()
	}
	if l.cancel != nil {
		l.cancel()
	}
	if l.sub != nil {
		l.sys.ActorSystem().EventStream.Unsubscribe(l.sub)
		l.sub = nil
	}
}
