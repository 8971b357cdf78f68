package actors

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet/link"
	"reasonix/actors/kernel"
	"reasonix/actors/remote"
	"reasonix/core/provider"
)

// proxyParent stands in for the scheduler around one proxy: it starts the
// attempt with RunTurn and passes every TurnFinished to out.
type proxyParent struct {
	sys  *kernel.System
	spec link.TaskSpec
	out  chan *agent.TurnFinished
	pid  *actor.PID
}

func (p *proxyParent) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		p.pid = c.Spawn(link.TaskProps(p.sys, p.spec))
		c.Request(p.pid, &agent.RunTurn{Input: p.spec.Start.Spec.Prompt})
	case *agent.TurnFinished:
		if c.Sender() == nil || !c.Sender().Equal(p.pid) {
			panic("TurnFinished from someone else")
		}
		p.out <- m
	case *agent.CancelTurn, *link.AttemptLost, *agent.ApprovalResponse:
		c.Send(p.pid, m)
	case chan struct{}: // a ping: everything sent here before it is handled
		close(m)
	}
}

type proxyRig struct {
	*linkRig
	up     *link.Up
	bus    *event.Bus
	sub    *event.Subscription
	meter  *team.TaskMeter
	out    chan *agent.TurnFinished
	parent *actor.PID
	pp     *proxyParent
	// fromProxy receives the task messages the worker got.
	fromProxy chan any
}

// newProxyRig runs one attempt of task "f1.1" on a scripted worker; script
// answers each task message the worker gets (c.Sender() is the proxy).
func newProxyRig(t *testing.T, backstop time.Duration, script func(r *proxyRig, c actor.Context, m any)) *proxyRig {
	t.Helper()
	r := &proxyRig{fromProxy: make(chan any, 64), out: make(chan *agent.TurnFinished, 4)}
	r.linkRig = newLinkRig(t, time.Hour, 3, func(w *scriptWorker) {
		w.onTask = func(c actor.Context, m any) {
			r.fromProxy <- m
			if script != nil {
				script(r, c, m)
			}
		}
	})
	r.up = r.linkRig.up()
	r.bus = event.NewBus()
	r.sub = r.bus.Subscribe()
	t.Cleanup(r.sub.Close)
	r.meter = &team.TaskMeter{}
	spec := link.TaskSpec{Worker: "w1", Link: r.link, Meter: r.meter, Bus: r.bus, Backstop: backstop,
		Start: remote.Start{Epoch: r.up.Epoch, Attempt: 2, Session: "s1", Fleet: "f1", Workspace: "ws",
			Spec: event.TaskSpec{ID: "f1.1", Prompt: "do it", Model: "asked-model"}}}
	pp := &proxyParent{sys: r.sys, spec: spec, out: r.out}
	r.pp = pp
	r.parent = r.sys.Root().Spawn(actor.PropsFromProducer(func() actor.Actor { return pp }))
	t.Cleanup(func() { _ = r.sys.Stop(r.parent, 5*time.Second) })
	return r
}

// finished waits for the attempt's answer.
func (r *proxyRig) finished() *agent.TurnFinished {
	r.t.Helper()
	select {
	case tf := <-r.out:
		return tf
	case <-time.After(20 * time.Second):
		r.t.Fatal("the proxy never answered")
	}
	return nil
}

// noSecondAnswer checks that what the test and the worker sent so far
// brings no second answer: the parent has passed on what it got, the
// proxy has handled all of it (a poison queues behind it), and the parent
// and the link have handled whatever the proxy sent them.
func (r *proxyRig) noSecondAnswer() {
	r.t.Helper()
	r.pingParent()
	must(r.t, r.sys.Root().PoisonFuture(r.pp.pid).Wait())
	r.pingParent()
	_, err := r.sys.Root().RequestFuture(r.link, &link.Query{}, 5*time.Second).Result()
	must(r.t, err)
	select {
	case tf := <-r.out:
		r.t.Fatalf("second answer %+v", tf)
	default:
	}
}

// pingParent waits until the parent has handled what was sent to it.
func (r *proxyRig) pingParent() {
	r.t.Helper()
	done := make(chan struct{})
	r.sys.Send(r.parent, done)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		r.t.Fatal("the proxy's parent never answered a ping")
	}
}

func events(t *testing.T, evs ...event.Event) []remote.TaskEvent {
	t.Helper()
	var out []remote.TaskEvent
	for _, ev := range evs {
		w, err := remote.EncodeWorkerEvent(ev)
		must(t, err)
		out = append(out, w)
	}
	return out
}

// busEvents drains what the bus has for the task so far, up to n events.
func (r *proxyRig) busEvents(n int) []event.Event {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []event.Event
	for len(out) < n {
		e, err := r.sub.Next(ctx)
		if err != nil {
			r.t.Fatalf("bus: %v after %d events", err, len(out))
		}
		out = append(out, e)
	}
	return out
}

func TestProxyRelaysEventsInOrderAndFinishes(t *testing.T) {
	t.Parallel()
	usage := provider.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}
	r := newProxyRig(t, 0, func(r *proxyRig, c actor.Context, m any) {
		st, ok := m.(*remote.Start)
		if !ok {
			return
		}
		to := c.Sender()
		remote.SendWorker(r.sys, c, to, &remote.Accepted{Task: st.Spec.ID, Attempt: st.Attempt, Model: "worker-model", Price: &event.Price{Input: 1, Output: 2}})
		b1 := events(r.t, &event.TextDelta{Text: "he"}, &event.TextDelta{Text: "llo"})
		b2 := events(r.t, &event.UsageReported{Usage: usage, Total: usage}, &event.TurnDone{Status: event.StatusOK, Text: "hello"})
		remote.SendWorker(r.sys, c, to, &remote.TaskEvents{Task: st.Spec.ID, Attempt: st.Attempt, First: 1, Items: b1})
		// A stale attempt's events are dropped, not relayed.
		remote.SendWorker(r.sys, c, to, &remote.TaskEvents{Task: st.Spec.ID, Attempt: 1, First: 3, Items: b2})
		remote.SendWorker(r.sys, c, to, &remote.TaskEvents{Task: st.Spec.ID, Attempt: st.Attempt, First: 3, Items: b2})
		remote.SendWorker(r.sys, c, to, &remote.Finished{Task: st.Spec.ID, Attempt: st.Attempt, Last: 4, Status: event.StatusOK, Text: "hello", Steps: 1, Usage: usage})
	})
	tf := r.finished()
	if tf.Status != event.StatusOK || tf.Text != "hello" || tf.Steps != 1 || tf.Usage != usage || tf.Task != "f1.1" {
		t.Errorf("answer = %+v", tf)
	}
	st := (<-r.fromProxy).(*remote.Start)
	if st.Epoch != r.up.Epoch || st.Attempt != 2 || st.Spec.ID != "f1.1" || st.Fleet != "f1" {
		t.Errorf("start = %+v", st)
	}
	evs := r.busEvents(5)
	kinds := []string{}
	for _, e := range evs {
		kinds = append(kinds, e.Kind())
		if e.EventMeta().Task != "f1.1" || e.EventMeta().Session != "s1" {
			t.Errorf("%s meta = %+v", e.Kind(), e.EventMeta())
		}
	}
	if got := strings.Join(kinds, ","); got != "task_started,text_delta,text_delta,usage,turn_done" {
		t.Errorf("relayed %s", got)
	}
	if s := evs[0].(*event.TaskStarted); s.Model != "worker-model" || s.Worker != "w1" || s.Attempt != 2 || s.Fleet != "f1" {
		t.Errorf("task_started = %+v", s)
	}
	if evs[1].(*event.TextDelta).Text != "he" || evs[2].(*event.TextDelta).Text != "llo" {
		t.Errorf("deltas out of order: %+v %+v", evs[1], evs[2])
	}
	turns, u, cost := r.meter.Spent()
	if turns != 1 || u != usage || cost <= 0 {
		t.Errorf("gate metered %d turns, %+v, cost %v", turns, u, cost)
	}
	r.noSecondAnswer()
}

func TestProxyCancelApprovalAndLost(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var start *remote.Start
	var to *actor.PID
	r := newProxyRig(t, 0, func(r *proxyRig, c actor.Context, m any) {
		switch m := m.(type) {
		case *remote.Start:
			mu.Lock()
			start, to = m, c.Sender()
			mu.Unlock()
			remote.SendWorker(r.sys, c, c.Sender(), &remote.Accepted{Task: m.Spec.ID, Attempt: m.Attempt})
		case *remote.Cancel:
			remote.SendWorker(r.sys, c, c.Sender(), &remote.Finished{Task: m.Task, Attempt: m.Attempt, Status: event.StatusCancelled})
		}
	})
	if _, ok := (<-r.fromProxy).(*remote.Start); !ok {
		t.Fatal("no start")
	}
	r.sys.Send(r.parent, &agent.ApprovalResponse{RequestID: "s1/f1.1/c1", Choice: event.ApproveOnce})
	if a, ok := (<-r.fromProxy).(*remote.Approval); !ok || a.RequestID != "s1/f1.1/c1" || a.Attempt != 2 || a.Choice != event.ApproveOnce {
		t.Errorf("approval = %+v", a)
	}
	r.sys.Send(r.parent, &agent.CancelTurn{})
	if c, ok := (<-r.fromProxy).(*remote.Cancel); !ok || c.Task != "f1.1" || c.Attempt != 2 {
		t.Errorf("cancel = %+v", c)
	}
	if tf := r.finished(); tf.Status != event.StatusCancelled {
		t.Errorf("answer = %+v", tf)
	}
	// The worker's late messages change nothing.
	mu.Lock()
	remote.SendWorker(r.sys, r.sys.Root(), to, &remote.Finished{Task: start.Spec.ID, Attempt: start.Attempt, Status: event.StatusOK})
	mu.Unlock()
	r.sys.Send(r.parent, &link.AttemptLost{Why: "late"})
	r.noSecondAnswer()
}

func TestProxyLost(t *testing.T) {
	t.Parallel()
	r := newProxyRig(t, 0, func(r *proxyRig, c actor.Context, m any) {
		if st, ok := m.(*remote.Start); ok {
			remote.SendWorker(r.sys, c, c.Sender(), &remote.Accepted{Task: st.Spec.ID, Attempt: st.Attempt})
		}
	})
	<-r.fromProxy
	r.sys.Send(r.parent, &link.AttemptLost{Why: "worker w1 lost: no heartbeat answer for 3s"})
	if tf := r.finished(); tf.Status != link.StatusWorkerLost || !strings.Contains(tf.Error, "heartbeat") {
		t.Errorf("answer = %+v", tf)
	}
	// The proxy gives the attempt up with one cancel (the link drops it
	// when the worker itself is lost; here the link is still up), then
	// sends nothing more.
	if c, ok := (<-r.fromProxy).(*remote.Cancel); !ok || !strings.Contains(c.Why, "attempt lost") {
		t.Errorf("after the loss the worker got %+v", c)
	}
	r.sys.Send(r.parent, &agent.CancelTurn{})
	r.noSecondAnswer()
	select {
	case m := <-r.fromProxy:
		t.Errorf("sent %T for a lost attempt", m)
	default:
	}
}

func TestProxyRefused(t *testing.T) {
	t.Parallel()
	for _, fatal := range []bool{false, true} {
		r := newProxyRig(t, 0, func(r *proxyRig, c actor.Context, m any) {
			if st, ok := m.(*remote.Start); ok {
				reason := "full"
				if fatal {
					reason = `unknown profile "nope"`
				}
				remote.SendWorker(r.sys, c, c.Sender(), &remote.Refused{Task: st.Spec.ID, Attempt: st.Attempt, Reason: reason, Fatal: fatal})
			}
		})
		tf := r.finished()
		switch {
		case fatal && (tf.Status != event.StatusFailed || !strings.Contains(tf.Error, "unknown profile")):
			t.Errorf("fatal refusal answered %+v", tf)
		case !fatal && (tf.Status != link.StatusWorkerRefused || tf.Error != "full"):
			t.Errorf("refusal answered %+v", tf)
		}
		r.noSecondAnswer()
	}
}

func TestProxyBackstop(t *testing.T) {
	t.Parallel()
	r := newProxyRig(t, 50*time.Millisecond, func(r *proxyRig, c actor.Context, m any) {
		if st, ok := m.(*remote.Start); ok {
			remote.SendWorker(r.sys, c, c.Sender(), &remote.Accepted{Task: st.Spec.ID, Attempt: st.Attempt})
		}
	})
	if tf := r.finished(); tf.Status != event.StatusFailed || !strings.Contains(tf.Error, "did not end") {
		t.Errorf("answer = %+v", tf)
	}
	r.noSecondAnswer()
}

func TestProxyGapIsLost(t *testing.T) {
	t.Parallel()
	r := newProxyRig(t, 0, func(r *proxyRig, c actor.Context, m any) {
		st, ok := m.(*remote.Start)
		if !ok {
			return
		}
		to := c.Sender()
		remote.SendWorker(r.sys, c, to, &remote.Accepted{Task: st.Spec.ID, Attempt: st.Attempt})
		remote.SendWorker(r.sys, c, to, &remote.TaskEvents{Task: st.Spec.ID, Attempt: st.Attempt, First: 1, Items: events(r.t, &event.TextDelta{Text: "a"})})
		remote.SendWorker(r.sys, c, to, &remote.TaskEvents{Task: st.Spec.ID, Attempt: st.Attempt, First: 3, Items: events(r.t, &event.TextDelta{Text: "c"})})
		remote.SendWorker(r.sys, c, to, &remote.Finished{Task: st.Spec.ID, Attempt: st.Attempt, Last: 3, Status: event.StatusOK})
	})
	if tf := r.finished(); tf.Status != link.StatusWorkerLost || !strings.Contains(tf.Error, "skipped") {
		t.Errorf("answer = %+v", tf)
	}
	evs := r.busEvents(2)
	if evs[1].(*event.TextDelta).Text != "a" {
		t.Errorf("relayed %+v", evs[1])
	}
	r.noSecondAnswer()
}
