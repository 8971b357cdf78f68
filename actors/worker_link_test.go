package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	actorremote "github.com/asynkron/protoactor-go/remote"

	"reasonix/actors/fleet"
	"reasonix/actors/fleet/link"
	"reasonix/actors/kernel"
	"reasonix/actors/remote"
)

// scriptWorker is an in-process stand-in for a worker host's actor: it
// answers hellos and heartbeats as told, and hands task messages to a
// script. Everything it receives is counted, so a test can tell that
// nothing was sent to it while it was believed lost.
type scriptWorker struct {
	sys  *kernel.System
	name string

	mu       sync.Mutex
	refuse   string
	mute     bool // a cut network: hellos and heartbeats go unanswered
	protocol int  // the protocol its welcome names; 0: ours
	capacity int
	free     int // reported free slots; -1: capacity
	received int
	hellos   []*remote.Hello
	byes     []*remote.Bye
	postures []string
	// onTask handles workerStart, workerCancel and workerApproval.
	onTask func(c actor.Context, m any)
	// tick is signalled after each message.
	tick chan struct{}
}

func (w *scriptWorker) Receive(c actor.Context) {
	m, err := remote.FromWire(c.Message())
	if err != nil {
		panic(err)
	}
	switch m.(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
		return
	}
	w.mu.Lock()
	w.received++
	mute, refuse, capacity, free, onTask, protocol := w.mute, w.refuse, w.capacity, w.free, w.onTask, w.protocol
	w.mu.Unlock()
	defer func() {
		select {
		case w.tick <- struct{}{}:
		default:
		}
	}()
	switch m := m.(type) {
	case *remote.Hello:
		w.mu.Lock()
		w.hellos = append(w.hellos, m)
		w.mu.Unlock()
		if mute {
			return
		}
		if protocol == 0 {
			protocol = remote.Protocol
		}
		remote.SendWorker(w.sys, c, c.Sender(), &remote.Welcome{Protocol: protocol, Worker: w.name, Boot: "b1", Epoch: m.Epoch,
			Capacity: capacity, Workspaces: []string{"ws"}, Refused: refuse})
	case *remote.Heartbeat:
		if mute {
			return
		}
		if free < 0 {
			free = capacity
		}
		remote.SendWorker(w.sys, c, c.Sender(), &remote.HeartbeatAck{Epoch: m.Epoch, N: m.N, Free: free})
	case *remote.Bye:
		w.mu.Lock()
		w.byes = append(w.byes, m)
		w.mu.Unlock()
	case *remote.Posture:
		w.mu.Lock()
		w.postures = append(w.postures, m.Posture)
		w.mu.Unlock()
	default:
		if onTask != nil {
			onTask(c, m)
		}
	}
}

func (w *scriptWorker) set(f func(w *scriptWorker)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(w)
}

func (w *scriptWorker) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.received
}

// linkParent stands in for the scheduler: it spawns the link and passes
// what the link tells it to a channel.
type linkParent struct {
	spec link.Spec
	sys  *kernel.System
	out  chan any
	link *actor.PID
}

func (p *linkParent) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		p.link = c.Spawn(link.Props(p.sys, p.spec))
		p.out <- p.link
	case *link.Up, *link.Lost, *link.WorkerNote:
		p.out <- m
	case *link.Query, *link.Posture, *actor.PoisonPill:
		c.Forward(p.link)
	}
}

type linkRig struct {
	t      *testing.T
	sys    *kernel.System
	w      *scriptWorker
	wpid   *actor.PID
	parent *actor.PID
	link   *actor.PID
	out    chan any
	// reachable makes the probe succeed; probes counts probe calls.
	reachable atomic.Bool
	probes    atomic.Int32
	probed    chan struct{}
	spec      link.Spec
}

func newLinkRig(t *testing.T, hb time.Duration, miss int, tune func(w *scriptWorker)) *linkRig {
	t.Helper()
	sys := kernel.NewSystem(nil)
	r := &linkRig{t: t, sys: sys, out: make(chan any, 1024), probed: make(chan struct{}, 1)}
	r.w = &scriptWorker{sys: sys, name: "w1", capacity: 4, free: -1, tick: make(chan struct{}, 1)}
	if tune != nil {
		tune(r.w)
	}
	r.reachable.Store(true)
	wpid, err := sys.Root().SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return r.w }), "script-worker")
	must(t, err)
	r.wpid = wpid
	r.spec = link.Spec{Worker: fleet.WorkerSpec{Name: "w1", Address: "w1.test:7420", Capacity: 8, Workspace: "ws"},
		Scheduler: "sched-1", Session: "s1", Heartbeat: hb, MissLimit: miss, Target: wpid,
		Probe: func(ctx context.Context, address string) (time.Duration, error) {
			r.probes.Add(1)
			select {
			case r.probed <- struct{}{}:
			default:
			}
			if address != "w1.test:7420" {
				return 0, fmt.Errorf("probe of %q", address)
			}
			if !r.reachable.Load() {
				return 0, errors.New("unreachable")
			}
			return time.Millisecond, nil
		}}
	lp := &linkParent{spec: r.spec, sys: sys, out: r.out}
	r.parent = sys.Root().Spawn(actor.PropsFromProducer(func() actor.Actor { return lp }))
	r.link = r.next(func(m any) bool { _, ok := m.(*actor.PID); return ok }).(*actor.PID)
	t.Cleanup(r.close)
	return r
}

func (r *linkRig) close() {
	if err := r.sys.Stop(r.parent, 5*time.Second); err != nil {
		r.t.Errorf("stop: %v", err)
	}
	_ = r.sys.Stop(r.wpid, 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.sys.Shutdown(ctx); err != nil {
		r.t.Errorf("shutdown: %v", err)
	}
}

// next returns the first message from the link that match accepts.
func (r *linkRig) next(match func(any) bool) any {
	r.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m := <-r.out:
			if match(m) {
				return m
			}
		case <-deadline:
			r.t.Fatal("the link never said what the test waits for")
		}
	}
}

func (r *linkRig) up() *link.Up {
	r.t.Helper()
	return r.next(func(m any) bool { _, ok := m.(*link.Up); return ok }).(*link.Up)
}

func (r *linkRig) lost() *link.Lost {
	r.t.Helper()
	return r.next(func(m any) bool { _, ok := m.(*link.Lost); return ok }).(*link.Lost)
}

// waitReceived waits until the worker has received n messages in all.
func (r *linkRig) waitReceived(n int) {
	r.t.Helper()
	deadline := time.After(20 * time.Second)
	for r.w.count() < n {
		select {
		case <-r.w.tick:
		case <-deadline:
			r.t.Fatalf("worker got %d messages, want %d", r.w.count(), n)
		}
	}
}

// waitProbes waits until the link has probed n times in all.
func (r *linkRig) waitProbes(n int32) {
	r.t.Helper()
	deadline := time.After(20 * time.Second)
	for r.probes.Load() < n {
		select {
		case <-r.probed:
		case <-deadline:
			r.t.Fatalf("%d probes, want %d", r.probes.Load(), n)
		}
	}
}

func TestLinkUpHeartbeatsAndBye(t *testing.T) {
	t.Parallel()
	r := newLinkRig(t, 20*time.Millisecond, 3, func(w *scriptWorker) { w.capacity = 2 })
	up := r.up()
	if up.Name != "w1" || up.Epoch == 0 || up.Capacity != 2 || !up.Target.Equal(r.wpid) {
		t.Fatalf("up = %+v, want w1 with the worker's own capacity 2", up)
	}
	r.w.set(func(w *scriptWorker) {
		if len(w.hellos) != 1 {
			t.Errorf("hellos = %d", len(w.hellos))
		}
		h := w.hellos[0]
		if h.Protocol != remote.Protocol || h.Scheduler != "sched-1" || h.Workspace != "ws" || h.Epoch != up.Epoch || h.LeaseMS != 60 {
			t.Errorf("hello = %+v", h)
		}
	})
	// Heartbeats answered: still up after many of them.
	r.waitReceived(12)
	res, err := r.sys.Root().RequestFuture(r.parent, &link.Query{}, 5*time.Second).Result()
	must(t, err)
	if n := res.(*link.WorkerNote); n.State.State != link.WorkerUp || n.Epoch != up.Epoch || n.State.Capacity != 2 {
		t.Errorf("report = %+v", n)
	}
	select {
	case m := <-r.out:
		if l, ok := m.(*link.Lost); ok {
			t.Fatalf("lost while answering heartbeats: %+v", l)
		}
	default:
	}
	r.sys.Send(r.parent, &link.Posture{Posture: "yolo"})
	deadline := time.After(20 * time.Second)
	for {
		var got []string
		r.w.set(func(w *scriptWorker) { got = w.postures })
		if len(got) == 1 && got[0] == "yolo" {
			break
		}
		select {
		case <-r.w.tick:
		case <-deadline:
			t.Fatalf("postures = %v", got)
		}
	}
	must(t, r.sys.Stop(r.link, 5*time.Second))
	for {
		var byes []*remote.Bye
		r.w.set(func(w *scriptWorker) { byes = w.byes })
		if len(byes) == 1 && byes[0].Epoch == up.Epoch {
			break
		}
		select {
		case <-r.w.tick:
		case <-deadline:
			t.Fatalf("byes = %+v", byes)
		}
	}
}

func TestLinkRefused(t *testing.T) {
	t.Parallel()
	t.Run("workspace", func(t *testing.T) {
		t.Parallel()
		testLinkRefused(t, func(w *scriptWorker) { w.refuse = "workspace" }, "workspace")
	})
	t.Run("protocol", func(t *testing.T) {
		t.Parallel()
		// A worker of another protocol that does not refuse by itself.
		testLinkRefused(t, func(w *scriptWorker) { w.protocol = remote.Protocol + 1 }, "protocol")
	})
}

func testLinkRefused(t *testing.T, tune func(w *scriptWorker), why string) {
	r := newLinkRig(t, 20*time.Millisecond, 3, tune)
	m := r.next(func(m any) bool {
		switch m := m.(type) {
		case *link.Up:
			t.Fatalf("up although refused: %+v", m)
		case *link.WorkerNote:
			return m.State.State == link.Refused
		}
		return false
	}).(*link.WorkerNote)
	if !strings.Contains(m.State.Error, why) {
		t.Errorf("refused note = %+v", m.State)
	}
	// A refused worker is asked again only slowly: no flood of hellos,
	// and no heartbeat.
	r.w.set(func(w *scriptWorker) {
		if w.received != 1 {
			t.Errorf("worker got %d messages after refusing", w.received)
		}
	})
}

func TestLinkHeartbeatLossAndComeback(t *testing.T) {
	t.Parallel()
	const hb, miss = 30 * time.Millisecond, 3
	r := newLinkRig(t, hb, miss, nil)
	first := r.up()
	// Protoactor's endpoint is told the address is gone when the link
	// gives up on heartbeats.
	ended := make(chan string, 4)
	sub := r.sys.ActorSystem().EventStream.Subscribe(func(evt any) {
		if e, ok := evt.(*actorremote.EndpointTerminatedEvent); ok {
			// Called on the publisher's goroutine (the link's mailbox):
			// never block it.
			select {
			case ended <- e.Address:
			default:
			}
		}
	})
	defer r.sys.ActorSystem().EventStream.Unsubscribe(sub)
	// Cut the network: the worker is unreachable and answers nothing.
	r.reachable.Store(false)
	cut := time.Now()
	r.w.set(func(w *scriptWorker) { w.mute = true })
	lost := r.lost()
	took := time.Since(cut)
	if lost.Epoch != first.Epoch || !strings.Contains(lost.Why, "heartbeat") {
		t.Errorf("lost = %+v", lost)
	}
	// The bound: miss_limit unanswered beats plus the one in flight, with
	// a wide margin for a loaded machine.
	if bound := hb*(miss+1) + 3*time.Second; took > bound {
		t.Errorf("loss noticed after %s, bound %s", took, bound)
	}
	select {
	case a := <-ended:
		if a != "w1.test:7420" {
			t.Errorf("endpoint terminated for %q", a)
		}
	case <-time.After(10 * time.Second):
		t.Error("no EndpointTerminatedEvent after a heartbeat loss")
	}
	// While lost, the link probes (our own dial) but sends the worker
	// nothing, not even a forwarded task message.
	sent := r.w.count()
	r.sys.Send(r.link, &link.Forward{Epoch: first.Epoch, Msg: &remote.Cancel{Task: "t", Attempt: 1}, Sender: r.parent})
	r.waitProbes(r.probes.Load() + 3)
	if n := r.w.count(); n != sent {
		t.Errorf("worker got %d messages while lost", n-sent)
	}
	res, err := r.sys.Root().RequestFuture(r.link, &link.Query{}, 5*time.Second).Result()
	must(t, err)
	if n := res.(*link.WorkerNote); n.State.State != link.WorkerLost || n.State.Error == "" {
		t.Errorf("report while lost = %+v", n.State)
	}
	// The network mends: up again, with a new epoch.
	r.w.set(func(w *scriptWorker) { w.mute = false })
	r.reachable.Store(true)
	again := r.up()
	if again.Epoch <= first.Epoch {
		t.Errorf("epoch after the comeback %d, before %d", again.Epoch, first.Epoch)
	}
}

func TestLinkLostOnWorkerStopAndEndpointEvent(t *testing.T) {
	t.Parallel()
	r := newLinkRig(t, time.Hour, 3, nil) // heartbeats never decide here
	first := r.up()
	// protoactor saying the endpoint is gone is enough.
	r.sys.ActorSystem().EventStream.Publish(&actorremote.EndpointTerminatedEvent{Address: "w1.test:7420"})
	if l := r.lost(); l.Epoch != first.Epoch || !strings.Contains(l.Why, "connection") {
		t.Errorf("lost = %+v", l)
	}
	second := r.up()
	if second.Epoch <= first.Epoch {
		t.Fatalf("epochs %d then %d", first.Epoch, second.Epoch)
	}
	// An event for another address changes nothing.
	r.sys.ActorSystem().EventStream.Publish(&actorremote.EndpointTerminatedEvent{Address: "other.test:1"})
	// The watched worker actor stopping is noticed at once.
	r.reachable.Store(false)
	must(t, r.sys.Stop(r.wpid, 5*time.Second))
	if l := r.lost(); l.Epoch != second.Epoch || !strings.Contains(l.Why, "stopped") {
		t.Errorf("lost = %+v", l)
	}
}
