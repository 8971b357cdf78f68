package assemble

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/actors/remote"
	"reasonix/actors/worker"
	"reasonix/core/config"
	"reasonix/core/provider/providertest"
	"reasonix/core/session"
)

// schedProbe plays a scheduler's link or a task's proxy: it sends what the
// test hands it with requestWorker, so it is the sender the worker answers,
// and passes everything it receives to the test in arrival order.
type schedProbe struct {
	sys *kernel.System
	got chan any
}

// probeSend asks a probe to send m to to.
type probeSend struct {
	to *actor.PID
	m  any
}

// probeMark is a message the test sends a probe through its mailbox: once
// the test reads it back, everything sent to the probe before it has been
// read too.
type probeMark struct{ n int }

func (p *schedProbe) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *probeSend:
		remote.RequestWorker(p.sys, c, m.to, m.m)
	case actor.SystemMessage, actor.AutoReceiveMessage:
	default:
		v, err := remote.FromWire(m)
		if err != nil {
			v = err
		}
		p.got <- v
	}
}

// probe is the test's handle on a schedProbe.
type probe struct {
	t   *testing.T
	r   *workerRig
	pid *actor.PID
	got chan any
}

// workerRig is one quiet system with a worker host on the model fake,
// serving the workspace "ws".
type workerRig struct {
	t      *testing.T
	srv    *providertest.Server
	sys    *kernel.System
	host   *worker.Host
	worker *actor.PID
	home   string
	cwd    string
	marks  int
}

type rigOpts struct {
	capacity int
	grace    time.Duration
	server   []providertest.Option
	// wrap, when set, wraps each workspace's agent builder; prepare runs
	// before the rig's workspace is served (a git init, say).
	wrap    func(*subagents) worker.Agents
	prepare func(cwd string)
}

func newWorkerRig(t *testing.T, o rigOpts) *workerRig {
	t.Helper()
	srv := providertest.Start(t, o.server...)
	cfg, cwd := buildConfig(t, srv.URL(), "")
	if o.capacity == 0 {
		o.capacity = 2
	}
	if o.prepare != nil {
		o.prepare(cwd)
	}
	sys := kernel.NewSystem(nil)
	spec := worker.HostSpec{Name: "w1", Capacity: o.capacity, Workspaces: map[string]string{"ws": cwd}, Config: cfg, Grace: o.grace}
	var host *worker.Host
	var err error
	if o.wrap != nil {
		spec.NewAgents = func(cfg *config.Config, cwd string, log *slog.Logger) (worker.Agents, error) {
			d, err := newWorkerAgents(cfg, cwd, log)
			if err != nil {
				return nil, err
			}
			return o.wrap(d), nil
		}
		host, err = worker.StartHost(sys, spec)
	} else {
		host, err = StartWorkerHost(sys, spec)
	}
	if err != nil {
		t.Fatal(err)
	}
	r := &workerRig{t: t, srv: srv, sys: sys, host: host, worker: host.Pid, home: cfg.Home, cwd: cwd}
	t.Cleanup(func() {
		if err := host.Stop(5 * time.Second); err != nil {
			t.Errorf("stop worker: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return r
}

func (r *workerRig) probe() *probe {
	got := make(chan any, 4096)
	pid := r.sys.Root().Spawn(actor.PropsFromProducer(func() actor.Actor { return &schedProbe{sys: r.sys, got: got} }))
	r.t.Cleanup(func() { _ = r.sys.Stop(pid, 5*time.Second) })
	return &probe{t: r.t, r: r, pid: pid, got: got}
}

// send has the probe send m to the worker.
func (p *probe) send(m any) { p.r.sys.Send(p.pid, &probeSend{to: p.r.worker, m: m}) }

func (p *probe) next() any {
	p.t.Helper()
	select {
	case v := <-p.got:
		return v
	case <-time.After(20 * time.Second):
		p.t.Fatal("timed out waiting for a message")
		return nil
	}
}

// nextOf reads the probe's next message, which must be a T.
func nextOf[T any](p *probe) T {
	p.t.Helper()
	v := p.next()
	m, ok := v.(T)
	if !ok {
		var zero T
		p.t.Fatalf("got %T %+v, want %T", v, v, zero)
	}
	return m
}

// rest returns what the probe received up to a mark sent now through its
// mailbox: everything that reached it before this call.
func (p *probe) rest() []any {
	p.t.Helper()
	p.r.marks++
	n := p.r.marks
	p.r.sys.Send(p.pid, &probeMark{n: n})
	var out []any
	for {
		v := p.next()
		if m, ok := v.(*probeMark); ok && m.n == n {
			return out
		}
		out = append(out, v)
	}
}

// link says hello for scheduler "sched" and session "p1" and returns the
// welcome.
func (p *probe) link(epoch uint64, leaseMS int64) *remote.Welcome {
	p.t.Helper()
	p.send(&remote.Hello{Protocol: remote.Protocol, Scheduler: "sched", Session: "p1", Workspace: "ws", Epoch: epoch, LeaseMS: leaseMS})
	return nextOf[*remote.Welcome](p)
}

func startMsg(epoch uint64, attempt int, spec event.TaskSpec) *remote.Start {
	return &remote.Start{Epoch: epoch, Attempt: attempt, Session: "p1", Fleet: "f1", Workspace: "ws", Spec: spec}
}

// linked gives a link probe that holds a lease for scheduler "sched" at
// epoch 1 and a proxy probe to start tasks with.
func (r *workerRig) linked() (link, proxy *probe) {
	r.t.Helper()
	link, proxy = r.probe(), r.probe()
	link.link(1, 60_000)
	return link, proxy
}

// start has the probe start spec as attempt 1 of epoch 1 and returns the
// worker's acceptance.
func (p *probe) start(spec event.TaskSpec) *remote.Accepted {
	p.t.Helper()
	p.send(startMsg(1, 1, spec))
	return nextOf[*remote.Accepted](p)
}

// running asks the worker for its load with a status hello.
func (p *probe) running() int {
	p.t.Helper()
	p.send(&remote.Hello{Protocol: remote.Protocol, Scheduler: "status"})
	return nextOf[*remote.Welcome](p).Running
}

// waitIdle waits until every job of the worker has stopped.
func (r *workerRig) waitIdle() { r.t.Helper(); r.waitJobs(0) }

// waitJobs waits until at most n jobs of the worker are left.
func (r *workerRig) waitJobs(n int) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.host.WaitJobs(ctx, n); err != nil {
		r.t.Fatal(err)
	}
}

// attempt collects an attempt's messages up to its workerFinished and
// checks their numbering: batches of at most jobBatchItems, numbered on
// from 1 without a gap, and a Last that is the number of the last event.
func (p *probe) attempt() ([]remote.TaskEvent, *remote.Finished) {
	p.t.Helper()
	var items []remote.TaskEvent
	for {
		switch m := p.next().(type) {
		case *remote.TaskEvents:
			if m.First != uint64(len(items))+1 {
				p.t.Fatalf("batch starts at %d after %d events", m.First, len(items))
			}
			if len(m.Items) == 0 || len(m.Items) > worker.JobBatchItems {
				p.t.Fatalf("batch of %d events", len(m.Items))
			}
			items = append(items, m.Items...)
		case *remote.Finished:
			if m.Last != uint64(len(items)) {
				p.t.Fatalf("finished with Last %d after %d events", m.Last, len(items))
			}
			return items, m
		default:
			p.t.Fatalf("unexpected %T %+v", m, m)
		}
	}
}

func TestWorkerHello(t *testing.T) {
	t.Parallel()
	r := newWorkerRig(t, rigOpts{})
	link := r.probe()
	w := link.link(3, 60_000)
	if w.Refused != "" || w.Epoch != 3 || w.Worker != "w1" || w.Capacity != 2 || w.Protocol != remote.Protocol ||
		len(w.Workspaces) != 1 || w.Workspaces[0] != "ws" || w.Boot == "" {
		t.Fatalf("welcome = %+v", w)
	}
	link.send(&remote.Heartbeat{Epoch: 3, N: 7})
	if ack := nextOf[*remote.HeartbeatAck](link); ack.N != 7 || ack.Epoch != 3 || ack.Running != 0 || ack.Free != 2 {
		t.Fatalf("ack = %+v", ack)
	}
	// A heartbeat of another epoch gets no ack: the next answer is the
	// status hello's.
	link.send(&remote.Heartbeat{Epoch: 2, N: 8})
	if link.running() != 0 {
		t.Fatal("running tasks on an idle worker")
	}

	for _, tc := range []struct {
		name  string
		hello remote.Hello
		want  string
	}{
		{"another protocol", remote.Hello{Protocol: remote.Protocol + 1, Scheduler: "x", Workspace: "ws", Epoch: 1, LeaseMS: 1000}, "protocol"},
		{"a workspace not served", remote.Hello{Protocol: remote.Protocol, Scheduler: "x", Workspace: "other", Epoch: 1, LeaseMS: 1000}, "workspace"},
		{"a status query for another workspace", remote.Hello{Protocol: remote.Protocol, Scheduler: "x", Workspace: "other"}, "workspace"},
		{"a status query", remote.Hello{Protocol: remote.Protocol, Scheduler: "x"}, ""},
		{"an older epoch of a linked scheduler", remote.Hello{Protocol: remote.Protocol, Scheduler: "sched", Session: "p1", Workspace: "ws", Epoch: 2, LeaseMS: 1000}, "epoch"},
	} {
		p := r.probe()
		h := tc.hello
		p.send(&h)
		if w := nextOf[*remote.Welcome](p); w.Refused != tc.want || w.Epoch != h.Epoch || w.Boot == "" {
			t.Errorf("%s: welcome = %+v, want refused %q", tc.name, w, tc.want)
		}
		// Neither a refusal nor a status answer leaves a lease.
		p.send(&remote.Heartbeat{Epoch: h.Epoch, N: 1})
		if got := p.rest(); len(got) != 0 {
			t.Errorf("%s: a heartbeat without a lease was answered: %+v", tc.name, got)
		}
	}
}

func TestWorkerRunsATask(t *testing.T) {
	t.Parallel()
	r := newWorkerRig(t, rigOpts{})
	answer := strings.Repeat("the answer is long enough to stream in many pieces. ", 12)
	r.srv.Push(providertest.Turn{Text: answer, ChunkBytes: 4})
	link, proxy := r.linked()
	acc := proxy.start(event.TaskSpec{ID: "f1.1", Prompt: "go"})
	if acc.Task != "f1.1" || acc.Attempt != 1 || acc.Model != "fake-model" {
		t.Fatalf("accepted = %+v", acc)
	}
	items, fin := proxy.attempt()
	if fin.Status != event.StatusOK || fin.Text != answer || fin.Task != "f1.1" || fin.Attempt != 1 {
		t.Fatalf("finished = %+v", fin)
	}
	if len(items) <= worker.JobBatchItems {
		t.Fatalf("only %d events for a reply streamed in %d pieces", len(items), len(answer)/4)
	}
	var deltas strings.Builder
	for _, it := range items {
		var line struct {
			Type    string `json:"type"`
			Session string `json:"session"`
			Task    string `json:"task"`
			Text    string `json:"text"`
		}
		if err := json.Unmarshal(it.JSON, &line); err != nil {
			t.Fatalf("event %q: %v", it.JSON, err)
		}
		if line.Type != it.Kind || line.Session != "p1" || line.Task != "f1.1" {
			t.Fatalf("event %s: kind %q, session %q, task %q", it.JSON, it.Kind, line.Session, line.Task)
		}
		if it.Kind == (&event.TextDelta{}).Kind() {
			deltas.WriteString(line.Text)
		}
	}
	if deltas.String() != answer {
		t.Errorf("the deltas in order read %q", deltas.String())
	}
	want := filepath.Join(session.ProjectDir(r.home, r.cwd), "p1-f1-1.jsonl")
	if fin.Transcript != want {
		t.Errorf("transcript %q, want %q", fin.Transcript, want)
	}
	// The slot is free by the time the end arrives, and the attempt sends
	// nothing after it.
	link.send(&remote.Heartbeat{Epoch: 1, N: 2})
	if ack := nextOf[*remote.HeartbeatAck](link); ack.Running != 0 || ack.Free != 2 {
		t.Errorf("ack after the end = %+v", ack)
	}
	r.waitIdle()
	if got := proxy.rest(); len(got) != 0 {
		t.Errorf("after its end the attempt sent %+v", got)
	}
}

func TestWorkerCapacityAndCancel(t *testing.T) {
	t.Parallel()
	r := newWorkerRig(t, rigOpts{capacity: 1})
	r.srv.Push(providertest.Turn{Stall: true}, providertest.Turn{Text: "b done"})
	link, pa, pb := r.probe(), r.probe(), r.probe()
	link.link(1, 60_000)
	pa.start(event.TaskSpec{ID: "f1.1", Prompt: "a"})
	if _, err := r.srv.WaitRequests(1, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	pb.send(startMsg(1, 1, event.TaskSpec{ID: "f1.2", Prompt: "b"}))
	if ref := nextOf[*remote.Refused](pb); ref.Reason != "full" || ref.Fatal || ref.Task != "f1.2" {
		t.Fatalf("refused = %+v", ref)
	}
	pa.send(&remote.Cancel{Task: "f1.1", Attempt: 1, Why: "test"})
	_, fin := pa.attempt()
	if fin.Status != event.StatusCancelled {
		t.Fatalf("cancelled attempt finished %+v", fin)
	}
	// The cancelled attempt's slot is free as soon as its end is out.
	pb.start(event.TaskSpec{ID: "f1.2", Prompt: "b"})
	if _, fin := pb.attempt(); fin.Status != event.StatusOK || fin.Text != "b done" {
		t.Fatalf("second task finished %+v", fin)
	}
}

// TestWorkerFences: each way a scheduler gives its attempts up cancels
// them, and the worker sends that scheduler nothing more about them.
func TestWorkerFences(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		leaseMS int64
		give    func(r *workerRig, link *probe)
	}{
		{"the lease lapses", 300, func(r *workerRig, link *probe) {}},
		{"the link stops", 60_000, func(r *workerRig, link *probe) {
			if err := r.sys.Stop(link.pid, 5*time.Second); err != nil {
				r.t.Fatal(err)
			}
		}},
		{"the scheduler says bye", 60_000, func(r *workerRig, link *probe) {
			link.send(&remote.Bye{Epoch: 1, Why: "shutting down"})
		}},
		{"the scheduler says bye without a sender", 60_000, func(r *workerRig, link *probe) {
			remote.SendWorker(r.sys, r.sys.Root(), r.worker, &remote.Bye{Epoch: 1, Why: "shutting down"})
		}},
		{"the scheduler links again", 60_000, func(r *workerRig, link *probe) {
			if w := link.link(2, 60_000); w.Refused != "" || w.Epoch != 2 {
				r.t.Fatalf("welcome = %+v", w)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newWorkerRig(t, rigOpts{})
			r.srv.Push(providertest.Turn{Stall: true}, providertest.Turn{Stall: true})
			link, proxy, other := r.probe(), r.probe(), r.probe()
			link.link(1, tc.leaseMS)
			proxy.start(event.TaskSpec{ID: "f1.1", Prompt: "a"})
			// Another scheduler's task is not touched.
			other.send(&remote.Hello{Protocol: remote.Protocol, Scheduler: "sched2", Session: "p2", Workspace: "ws", Epoch: 5, LeaseMS: 60_000})
			nextOf[*remote.Welcome](other)
			other.send(&remote.Start{Epoch: 5, Attempt: 1, Session: "p2", Workspace: "ws", Spec: event.TaskSpec{ID: "f1.1", Prompt: "b"}})
			nextOf[*remote.Accepted](other)
			if _, err := r.srv.WaitRequests(2, 20*time.Second); err != nil {
				t.Fatal(err)
			}
			tc.give(r, link)
			// Wait until only the other scheduler's task is left.
			r.waitJobs(1)
			for _, m := range proxy.rest() {
				if _, ok := m.(*remote.Finished); ok {
					t.Fatalf("the given-up attempt still sent its end: %+v", m)
				}
			}
			// Its old epoch is refused from now on.
			proxy.send(startMsg(1, 2, event.TaskSpec{ID: "f1.1", Prompt: "a"}))
			if ref := nextOf[*remote.Refused](proxy); ref.Reason != "epoch" || ref.Fatal {
				t.Fatalf("a start of the old epoch: %+v", ref)
			}
			other.send(&remote.Cancel{Task: "f1.1", Attempt: 1})
			if _, fin := other.attempt(); fin.Status != event.StatusCancelled {
				t.Fatalf("the other scheduler's task finished %+v", fin)
			}
		})
	}
}

func TestWorkerBuildFailureIsFatal(t *testing.T) {
	t.Parallel()
	r := newWorkerRig(t, rigOpts{})
	link, proxy := r.linked()
	for _, spec := range []event.TaskSpec{
		{ID: "f1.1", Prompt: "a", Model: "nope"},
		{ID: "f1.2", Prompt: "a", Profile: "no-such-profile"},
	} {
		proxy.send(startMsg(1, 1, spec))
		ref := nextOf[*remote.Refused](proxy)
		if !ref.Fatal || ref.Task != spec.ID || (!strings.Contains(ref.Reason, "nope") && !strings.Contains(ref.Reason, "no-such-profile")) {
			t.Errorf("refused = %+v", ref)
		}
	}
	proxy.send(startMsg(1, 1, event.TaskSpec{Prompt: "no id"}))
	if ref := nextOf[*remote.Refused](proxy); !ref.Fatal || !strings.Contains(ref.Reason, "task id") {
		t.Errorf("a start without a task id: %+v", ref)
	}
	proxy.send(&remote.Start{Epoch: 1, Attempt: 1, Session: "p1", Workspace: "elsewhere", Spec: event.TaskSpec{ID: "f1.3"}})
	if ref := nextOf[*remote.Refused](proxy); ref.Reason != "workspace" || ref.Fatal {
		t.Errorf("a start for a workspace not served: %+v", ref)
	}
	if link.running() != 0 {
		t.Error("a refused task holds a slot")
	}
}

func TestWorkerDrain(t *testing.T) {
	t.Parallel()
	r := newWorkerRig(t, rigOpts{})
	r.srv.Push(providertest.Turn{Stall: true})
	link, proxy := r.linked()
	proxy.start(event.TaskSpec{ID: "f1.1", Prompt: "a"})
	if _, err := r.srv.WaitRequests(1, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.host.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if bye := nextOf[*remote.Bye](link); bye.Epoch != 1 {
		t.Errorf("bye = %+v", bye)
	}
	for _, m := range proxy.rest() {
		if _, ok := m.(*remote.Finished); ok {
			t.Fatalf("a drained attempt sent its end to a scheduler told bye: %+v", m)
		}
	}
	if w := link.link(2, 60_000); w.Refused != "draining" {
		t.Errorf("hello while draining: %+v", w)
	}
	proxy.send(startMsg(2, 1, event.TaskSpec{ID: "f1.2", Prompt: "a"}))
	if ref := nextOf[*remote.Refused](proxy); ref.Reason != "draining" {
		t.Errorf("start while draining: %+v", ref)
	}
}

// TestWorkerStopEndsJobs: a worker stopped outright still tells each
// scheduler how its attempts ended.
func TestWorkerStopEndsJobs(t *testing.T) {
	t.Parallel()
	r := newWorkerRig(t, rigOpts{})
	r.srv.Push(providertest.Turn{Stall: true})
	_, proxy := r.linked()
	proxy.start(event.TaskSpec{ID: "f1.1", Prompt: "a"})
	if _, err := r.srv.WaitRequests(1, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.host.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	_, fin := proxy.attempt()
	if fin.Status != event.StatusFailed && fin.Status != event.StatusCancelled {
		t.Fatalf("finished = %+v", fin)
	}
	if got := proxy.rest(); len(got) != 0 {
		t.Errorf("more after the end: %+v", got)
	}
}

// TestWorkerRepairsAPanic is not parallel: the fault hook is process-wide.
func TestWorkerRepairsAPanic(t *testing.T) {
	fired := &atomic.Bool{}
	hook := func(kind string, msg any, after bool) {
		if kind != "worker" || after {
			return
		}
		if m, _ := remote.FromWire(msg); m != nil {
			if _, ok := m.(*remote.Start); ok && fired.CompareAndSwap(false, true) {
				panic("injected fault in the worker's start")
			}
		}
	}
	kernel.FaultHook.Store(&hook)
	t.Cleanup(func() { kernel.FaultHook.Store(nil) })

	r := newWorkerRig(t, rigOpts{})
	r.srv.Push(providertest.Turn{Text: "done"})
	_, proxy := r.linked()
	proxy.send(startMsg(1, 1, event.TaskSpec{ID: "f1.1", Prompt: "a"}))
	ref := nextOf[*remote.Refused](proxy)
	if !fired.Load() || ref.Fatal || !strings.Contains(ref.Reason, "internal error in worker") {
		t.Fatalf("refused = %+v (fired %t)", ref, fired.Load())
	}
	// The worker goes on: its lease and the next start work.
	proxy.start(event.TaskSpec{ID: "f1.1", Prompt: "a"})
	if _, fin := proxy.attempt(); fin.Status != event.StatusOK || fin.Text != "done" {
		t.Fatalf("finished = %+v", fin)
	}
}

// TestWorkerJobRepairsAPanic: a job whose handler of the executor's end
// panics still relays every event and sends that end once.
func TestWorkerJobRepairsAPanic(t *testing.T) {
	fired := injectPanic(t, "job", "*agent.TurnFinished", false)

	r := newWorkerRig(t, rigOpts{})
	r.srv.Push(providertest.Turn{Text: "done"})
	_, proxy := r.linked()
	proxy.start(event.TaskSpec{ID: "f1.1", Prompt: "a"})
	items, fin := proxy.attempt()
	if !fired.Load() || fin.Status != event.StatusOK || fin.Text != "done" || len(items) == 0 {
		t.Fatalf("finished = %+v after %d events (fired %t)", fin, len(items), fired.Load())
	}
	r.waitIdle()
	if got := proxy.rest(); len(got) != 0 {
		t.Errorf("more after the end: %+v", got)
	}
}

// TestWorkerJobBeginCrash: a job whose start panics ends its attempt
// failed, once, and frees its slot.
func TestWorkerJobBeginCrash(t *testing.T) {
	fired := injectPanic(t, "job", "*actor.Started", false)

	r := newWorkerRig(t, rigOpts{})
	_, proxy := r.linked()
	proxy.start(event.TaskSpec{ID: "f1.1", Prompt: "a"})
	items, fin := proxy.attempt()
	if !fired.Load() || fin.Status != event.StatusFailed || !strings.Contains(fin.Error, "could not start") || len(items) != 0 {
		t.Fatalf("finished = %+v after %d events (fired %t)", fin, len(items), fired.Load())
	}
	r.waitIdle()
	if got := proxy.rest(); len(got) != 0 {
		t.Errorf("more after the end: %+v", got)
	}
	if proxy.running() != 0 {
		t.Error("the failed attempt holds a slot")
	}
}

func TestStartWorkerHostChecksItsSpec(t *testing.T) {
	t.Parallel()
	cfg, cwd := buildConfig(t, "http://127.0.0.1:1/v1", "")
	for _, tc := range []struct {
		name string
		spec worker.HostSpec
		want string
	}{
		{"no config", worker.HostSpec{Capacity: 1, Workspaces: map[string]string{"ws": cwd}}, "no config"},
		{"capacity 0", worker.HostSpec{Capacity: 0, Workspaces: map[string]string{"ws": cwd}, Config: cfg}, "capacity"},
		{"capacity 65", worker.HostSpec{Capacity: 65, Workspaces: map[string]string{"ws": cwd}, Config: cfg}, "capacity"},
		{"no workspace", worker.HostSpec{Capacity: 1, Config: cfg}, "no workspace"},
		{"a relative path", worker.HostSpec{Capacity: 1, Workspaces: map[string]string{"ws": "rel"}, Config: cfg}, "absolute"},
		{"a missing checkout", worker.HostSpec{Capacity: 1, Workspaces: map[string]string{"ws": filepath.Join(cwd, "gone")}, Config: cfg}, "gone"},
	} {
		sys := kernel.NewSystem(nil)
		_, err := StartWorkerHost(sys, tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := sys.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		cancel()
	}
	// One worker per system: the name is taken.
	sys := kernel.NewSystem(nil)
	h, err := StartWorkerHost(sys, worker.HostSpec{Capacity: 1, Workspaces: map[string]string{"ws": cwd}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if h.Name() == "" {
		t.Error("no default name")
	}
	if _, err := StartWorkerHost(sys, worker.HostSpec{Capacity: 1, Workspaces: map[string]string{"ws": cwd}, Config: cfg}); err == nil {
		t.Error("a second worker started in one system")
	}
	if err := h.Stop(5 * time.Second); err != nil {
		t.Error(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sys.Shutdown(ctx); err != nil {
		t.Error(err)
	}
}

// TestWorkerOverRemote runs the exchange between two systems over the real
// transport: every message crosses in its protobuf form, the events of a
// task arrive numbered and in order, and a scheduler whose endpoint goes
// away has its running task cancelled by the worker's watch of its link.
func TestWorkerOverRemote(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t)
	cfg, cwd := buildConfig(t, srv.URL(), "")
	start := func() (*kernel.System, *remote.Remote) {
		sys := kernel.NewSystem(nil)
		rem, err := remote.StartRemote(sys, remote.RemoteOptions{Listen: "127.0.0.1:0", Token: "worker-test-token"})
		if err != nil {
			t.Fatal(err)
		}
		return sys, rem
	}
	wsys, wrem := start()
	host, err := StartWorkerHost(wsys, worker.HostSpec{Name: "w1", Capacity: 2, Workspaces: map[string]string{"ws": cwd}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	ssys, srem := start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := host.Stop(5 * time.Second); err != nil {
			t.Errorf("stop worker: %v", err)
		}
		if err := ssys.Shutdown(ctx); err != nil {
			t.Errorf("shutdown scheduler: %v", err)
		}
		if err := wsys.Shutdown(ctx); err != nil {
			t.Errorf("shutdown worker: %v", err)
		}
	})
	r := &workerRig{t: t, srv: srv, sys: ssys, host: host, worker: actor.NewPID(wrem.Address(), remote.HostActorName), home: cfg.Home, cwd: cwd}

	answer := strings.Repeat("across the wire in order. ", 20)
	srv.Push(providertest.Turn{Text: answer, ChunkBytes: 3}, providertest.Turn{Stall: true})
	link, proxy := r.probe(), r.probe()
	if w := link.link(1, 60_000); w.Refused != "" || w.Worker != "w1" {
		t.Fatalf("welcome = %+v", w)
	}
	link.send(&remote.Heartbeat{Epoch: 1, N: 1})
	if ack := nextOf[*remote.HeartbeatAck](link); ack.N != 1 || ack.Free != 2 {
		t.Fatalf("ack = %+v", ack)
	}
	if acc := proxy.start(event.TaskSpec{ID: "f1.1", Prompt: "go"}); acc.Model != "fake-model" {
		t.Fatalf("accepted = %+v", acc)
	}
	items, fin := proxy.attempt()
	if fin.Status != event.StatusOK || fin.Text != answer {
		t.Fatalf("finished = %+v", fin)
	}
	var text strings.Builder
	for _, it := range items {
		ev, err := remote.DecodeWorkerEvent(it)
		if err != nil {
			t.Fatal(err)
		}
		if m := event.MetaOf(ev); m.Session != "p1" || m.Task != "f1.1" {
			t.Fatalf("event %s carries session %q task %q", it.Kind, m.Session, m.Task)
		}
		if d, ok := ev.(*event.TextDelta); ok {
			text.WriteString(d.Text)
		}
	}
	if text.String() != answer {
		t.Errorf("the relayed deltas read %q", text.String())
	}

	proxy.send(startMsg(1, 2, event.TaskSpec{ID: "f1.2", Prompt: "hold"}))
	nextOf[*remote.Accepted](proxy)
	if _, err := srv.WaitRequests(2, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	// The scheduler's process goes away: the worker's watch of the link
	// ends the lease and the task.
	srem.Stop(10 * time.Second)
	r.waitIdle()
}

// TestWorkerApprovalAndPosture: a task of a parent with a frontend asks
// through it (the request reaches the proxy as an event, the answer comes
// back as a workerApproval), and a posture the scheduler set applies to
// the tasks it starts afterwards.
func TestWorkerApprovalAndPosture(t *testing.T) {
	t.Parallel()
	r := newWorkerRig(t, rigOpts{})
	write := func(name string) providertest.Turn {
		return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"` + name + `","content":"hi"}`}}}
	}
	r.srv.Push(write("asked.txt"), providertest.Turn{Text: "written"}, write("free.txt"), providertest.Turn{Text: "written too"})
	link, proxy := r.linked()
	start := startMsg(1, 1, event.TaskSpec{ID: "f1.1", Prompt: "write", Writer: true})
	start.Interactive = true
	proxy.send(start)
	nextOf[*remote.Accepted](proxy)
	var n uint64
	var asked *event.ApprovalRequested
	for asked == nil {
		evs := nextOf[*remote.TaskEvents](proxy)
		if evs.First != n+1 {
			t.Fatalf("batch at %d after %d", evs.First, n)
		}
		n += uint64(len(evs.Items))
		for _, it := range evs.Items {
			ev, err := remote.DecodeWorkerEvent(it)
			if err != nil {
				t.Fatal(err)
			}
			if a, ok := ev.(*event.ApprovalRequested); ok {
				asked = a
			}
		}
	}
	if !strings.HasPrefix(asked.RequestID, "p1/f1.1/") || asked.Tool != "write_file" {
		t.Fatalf("approval request %+v", asked)
	}
	proxy.send(&remote.Approval{Task: "f1.1", Attempt: 1, RequestID: asked.RequestID, Choice: event.ApproveOnce})
	for {
		m := proxy.next()
		if fin, ok := m.(*remote.Finished); ok {
			if fin.Status != event.StatusOK || fin.Text != "written" || fin.Last < n {
				t.Fatalf("finished = %+v", fin)
			}
			break
		}
	}
	if _, err := os.Stat(filepath.Join(r.cwd, "asked.txt")); err != nil {
		t.Fatalf("the approved write did not happen: %v", err)
	}

	link.send(&remote.Posture{Epoch: 1, Posture: "yolo"})
	// The heartbeat's ack says the posture was handled before the start.
	link.send(&remote.Heartbeat{Epoch: 1, N: 9})
	nextOf[*remote.HeartbeatAck](link)
	start = startMsg(1, 1, event.TaskSpec{ID: "f1.2", Prompt: "write", Writer: true})
	start.Interactive = true
	proxy.send(start)
	nextOf[*remote.Accepted](proxy)
	items, fin := proxy.attempt()
	for _, it := range items {
		if it.Kind == (&event.ApprovalRequested{}).Kind() {
			t.Fatalf("a task under the yolo posture asked: %s", it.JSON)
		}
	}
	if fin.Status != event.StatusOK || fin.Text != "written too" {
		t.Fatalf("finished = %+v", fin)
	}
	if _, err := os.Stat(filepath.Join(r.cwd, "free.txt")); err != nil {
		t.Fatalf("the write under yolo did not happen: %v", err)
	}
}

// answerAsks reads an attempt's messages up to its end, answering each
// approval request it relays with choice; with choice "" a request fails
// the test. It returns the end and how many requests it saw.
func (p *probe) answerAsks(task, choice string) (*remote.Finished, int) {
	p.t.Helper()
	asked := 0
	for {
		switch m := p.next().(type) {
		case *remote.TaskEvents:
			for _, it := range m.Items {
				ev, err := remote.DecodeWorkerEvent(it)
				if err != nil {
					p.t.Fatal(err)
				}
				a, ok := ev.(*event.ApprovalRequested)
				if !ok {
					continue
				}
				asked++
				if choice == "" {
					p.t.Fatalf("task %s asked: %+v", task, a)
				}
				p.send(&remote.Approval{Task: task, Attempt: 1, RequestID: a.RequestID, Choice: choice})
			}
		case *remote.Finished:
			return m, asked
		}
	}
}

// TestWorkerGrantsPerParent: what one parent's user allowed for the
// session covers that parent's later tasks on the worker, not another
// parent's.
func TestWorkerGrantsPerParent(t *testing.T) {
	t.Parallel()
	r := newWorkerRig(t, rigOpts{})
	write := providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"shared.txt","content":"hi"}`}}}
	r.srv.Push(write, providertest.Turn{Text: "a"}, write, providertest.Turn{Text: "b"}, write, providertest.Turn{Text: "c"})
	l1, l2, p1, p2 := r.probe(), r.probe(), r.probe(), r.probe()
	l1.link(1, 60_000)
	l2.send(&remote.Hello{Protocol: remote.Protocol, Scheduler: "sched2", Session: "p2", Workspace: "ws", Epoch: 1, LeaseMS: 60_000})
	nextOf[*remote.Welcome](l2)
	run := func(p *probe, session, task, choice string) int {
		t.Helper()
		p.send(&remote.Start{Epoch: 1, Attempt: 1, Session: session, Workspace: "ws", Interactive: true,
			Spec: event.TaskSpec{ID: task, Prompt: "write", Writer: true}})
		nextOf[*remote.Accepted](p)
		fin, asked := p.answerAsks(task, choice)
		if fin.Status != event.StatusOK {
			t.Fatalf("%s/%s finished %+v", session, task, fin)
		}
		return asked
	}
	if n := run(p1, "p1", "f1.1", event.ApproveSession); n != 1 {
		t.Fatalf("the first write asked %d times", n)
	}
	run(p1, "p1", "f1.2", "")
	if n := run(p2, "p2", "f1.1", event.ApproveOnce); n != 1 {
		t.Errorf("another parent's write asked %d times, want once: the first parent's grant covered it", n)
	}
}

// TestWorkerKillsAfterGrace: an attempt whose executor does not stop
// within the grace of a cancel is ended as killed, once. Not parallel: the
// fault hook is process-wide.
func TestWorkerKillsAfterGrace(t *testing.T) {
	release := make(chan struct{})
	var released sync.Once
	unblock := func() { released.Do(func() { close(release) }) }
	hook := func(kind string, msg any, after bool) {
		if _, ok := msg.(*agent.CancelTurn); ok && kind == "executor" && !after {
			<-release // an executor stuck in a handler ignores the cancel
		}
	}
	kernel.FaultHook.Store(&hook)
	t.Cleanup(func() { kernel.FaultHook.Store(nil) })
	t.Cleanup(unblock)

	r := newWorkerRig(t, rigOpts{grace: 100 * time.Millisecond})
	r.srv.Push(providertest.Turn{Stall: true})
	_, proxy := r.linked()
	proxy.start(event.TaskSpec{ID: "f1.1", Prompt: "a"})
	if _, err := r.srv.WaitRequests(1, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	proxy.send(&remote.Cancel{Task: "f1.1", Attempt: 1, Why: "test"})
	_, fin := proxy.attempt()
	if fin.Status != event.StatusCancelled || !strings.Contains(fin.Error, "killed") {
		t.Fatalf("finished = %+v", fin)
	}
	unblock()
	r.waitIdle()
	if got := proxy.rest(); len(got) != 0 {
		t.Errorf("more after the end: %+v", got)
	}
}
