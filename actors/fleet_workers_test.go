package actors

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/actors/fleet/link"
	"reasonix/actors/kernel"
	"reasonix/actors/remote"
	"reasonix/core/provider"
	"reasonix/core/provider/openai"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// fleetWorker is one scripted worker of a fleet test: it accepts every
// task and answers it at once, unless hang holds it (a task left running
// when the worker is cut off).
type fleetWorker struct {
	*scriptWorker
	reachable atomic.Bool
	hang      atomic.Bool
	// started gets every attempt the worker accepted.
	started chan *remote.Start
}

type fleetRig struct {
	t       *testing.T
	sys     *kernel.System
	bus     *event.Bus
	sub     *event.Subscription
	pid     *actor.PID
	workers map[string]*fleetWorker
	wpids   []*actor.PID
	// changed gets a token each time the scheduler has handled news from
	// a link (up, lost or a note), for waitUp.
	changed chan struct{}
}

// newFleetRig starts a scheduler over the local process (on the model
// fake) and scripted workers named by specs.
func newFleetRig(t *testing.T, spec fleet.FleetSpec, hang, down map[string]bool) *fleetRig {
	t.Helper()
	return newScriptedFleetRig(t, spec, hang, down, nil, nil)
}

// newScriptedFleetRig is newFleetRig with the worker's handling of task
// messages replaced by script where it returns true, and the local
// model's answers by local.
func newScriptedFleetRig(t *testing.T, spec fleet.FleetSpec, hang, down map[string]bool,
	script func(fw *fleetWorker, c actor.Context, m any) bool, local func(req providertest.Request) providertest.Turn) *fleetRig {
	t.Helper()
	if local == nil {
		local = func(req providertest.Request) providertest.Turn {
			return providertest.Turn{Text: "local did " + req.FirstUser()}
		}
	}
	srv := providertest.Start(t, providertest.WithResponder(local))
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	p, err := openai.New(provider.Config{Name: "fake", Kind: "openai", BaseURL: srv.URL(), Model: "fake-model",
		MaxRetries: -1, HTTPClient: &http.Client{Transport: tr}})
	must(t, err)
	sys := kernel.NewSystem(nil)
	r := &fleetRig{t: t, sys: sys, bus: event.NewBus(), workers: map[string]*fleetWorker{}}
	r.sub = r.bus.Subscribe()
	for _, ws := range spec.Workers {
		name := ws.Name
		fw := &fleetWorker{scriptWorker: &scriptWorker{sys: sys, name: name, capacity: ws.Capacity, free: -1, tick: make(chan struct{}, 1)},
			started: make(chan *remote.Start, 64)}
		fw.reachable.Store(!down[name])
		fw.hang.Store(hang[name])
		fw.onTask = func(c actor.Context, m any) {
			if script != nil && script(fw, c, m) {
				return
			}
			st, ok := m.(*remote.Start)
			if !ok {
				return
			}
			to := c.Sender()
			remote.SendWorker(sys, c, to, &remote.Accepted{Task: st.Spec.ID, Attempt: st.Attempt, Model: name + "-model"})
			select {
			case fw.started <- st:
			default:
			}
			if fw.hang.Load() {
				return
			}
			answer := name + " did " + st.Spec.Prompt
			items, err := remote.EncodeWorkerEvent(&event.TextDelta{Meta: event.Meta{Session: st.Session, Task: st.Spec.ID}, Text: answer})
			if err != nil {
				panic(err)
			}
			remote.SendWorker(sys, c, to, &remote.TaskEvents{Task: st.Spec.ID, Attempt: st.Attempt, First: 1, Items: []remote.TaskEvent{items}})
			remote.SendWorker(sys, c, to, &remote.Finished{Task: st.Spec.ID, Attempt: st.Attempt, Last: 1, Status: event.StatusOK, Text: answer, Steps: 1})
		}
		wpid, err := sys.Root().SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return fw.scriptWorker }), "script-"+name)
		must(t, err)
		r.workers[name] = fw
		r.wpids = append(r.wpids, wpid)
	}
	pre := spec.Probe // a test's own probe runs first
	spec.Probe = func(ctx context.Context, address string) (time.Duration, error) {
		if pre != nil {
			if _, err := pre(ctx, address); err != nil {
				return 0, err
			}
		}
		for _, fw := range r.workers {
			if address == fw.name+".test:7420" {
				if !fw.reachable.Load() {
					return 0, errors.New("unreachable")
				}
				return time.Millisecond, nil
			}
		}
		return 0, fmt.Errorf("no worker at %s", address)
	}
	spec.Target = func(w fleet.WorkerSpec) *actor.PID {
		return actor.NewPID(sys.ActorSystem().ProcessRegistry.Address, "script-"+w.Name)
	}
	spec.NewAgent = func(event.TaskSpec) (agent.AgentSpec, error) {
		reg, err := tool.NewRegistry()
		if err != nil {
			return agent.AgentSpec{}, err
		}
		return agent.AgentSpec{Provider: p, Model: "fake-model", Tools: reg, System: "sub", ToolTimeout: 10 * time.Second}, nil
	}
	r.spawn("s1", spec)
	t.Cleanup(r.close)
	return r
}

// spawn starts the rig's scheduler, observed for waitUp.
func (r *fleetRig) spawn(session string, spec fleet.FleetSpec) {
	r.changed = make(chan struct{}, 1)
	observe := actor.WithReceiverMiddleware(func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			next(c, env)
			switch env.Message.(type) {
			case *link.Up, *link.Lost, *link.WorkerNote:
				select {
				case r.changed <- struct{}{}:
				default: // a token is pending already
				}
			}
		}
	})
	r.pid = r.sys.Root().Spawn(fleet.FleetProps(r.sys, session, r.bus, spec).Configure(observe))
}

func (r *fleetRig) close() {
	r.sub.Close()
	if err := r.sys.Stop(r.pid, 10*time.Second); err != nil {
		r.t.Errorf("stop scheduler: %v", err)
	}
	for _, w := range r.wpids {
		_ = r.sys.Stop(w, 5*time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.sys.Shutdown(ctx); err != nil {
		r.t.Errorf("shutdown: %v", err)
	}
}

// waitUp waits until every named worker is up in the scheduler's status.
func (r *fleetRig) waitUp(names ...string) {
	r.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		res, err := r.sys.Root().RequestFuture(r.pid, &fleetmsg.QueryFleet{}, 5*time.Second).Result()
		must(r.t, err)
		up := map[string]bool{}
		for _, w := range res.(*fleetmsg.FleetStatus).Workers {
			up[w.Name] = w.State == link.WorkerUp
		}
		all := true
		for _, n := range names {
			all = all && up[n]
		}
		if all {
			return
		}
		// Ask again once the scheduler has heard from a link; a token
		// left from before the query only costs one more query.
		select {
		case <-r.changed:
		case <-deadline:
			r.t.Fatalf("workers %v not up: %+v", names, res.(*fleetmsg.FleetStatus).Workers)
		}
	}
}

// submit sends the fleet and returns a channel with its result.
func (r *fleetRig) submit(m *fleetmsg.SubmitFleet) <-chan *fleetmsg.FleetResult {
	out := make(chan *fleetmsg.FleetResult, 1)
	fut := r.sys.Root().RequestFuture(r.pid, m, 60*time.Second)
	go func() {
		res, err := fut.Result()
		if err != nil {
			r.t.Errorf("fleet: %v", err)
			close(out)
			return
		}
		out <- res.(*fleetmsg.FleetResult)
	}()
	return out
}

// drain reads every event published so far.
func (r *fleetRig) drain() []event.Event {
	r.t.Helper()
	last := r.bus.LastSeq()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []event.Event
	for {
		if len(out) > 0 && out[len(out)-1].EventMeta().Seq >= last {
			return out
		}
		e, err := r.sub.Next(ctx)
		if err != nil {
			r.t.Fatalf("bus: %v", err)
		}
		out = append(out, e)
	}
}

// checkEndsOnce checks that each task has one task_done and nothing of it
// after, and returns the task_done and task_started events by task.
func checkEndsOnce(t *testing.T, evs []event.Event, ids []string) (map[string]*event.TaskDone, map[string][]*event.TaskStarted, map[string][]*event.TaskRequeued) {
	t.Helper()
	done := map[string]*event.TaskDone{}
	started := map[string][]*event.TaskStarted{}
	requeued := map[string][]*event.TaskRequeued{}
	for _, e := range evs {
		task := e.EventMeta().Task
		if task == "" {
			continue
		}
		if d, ok := done[task]; ok {
			t.Errorf("%s of %s after its task_done (%+v)", e.Kind(), task, d)
		}
		switch e := e.(type) {
		case *event.TaskDone:
			done[task] = e
		case *event.TaskStarted:
			started[task] = append(started[task], e)
		case *event.TaskRequeued:
			requeued[task] = append(requeued[task], e)
		}
	}
	for _, id := range ids {
		if done[id] == nil {
			t.Errorf("%s has no task_done", id)
		}
	}
	return done, started, requeued
}

func TestFleetOverWorkersSurvivesALostWorker(t *testing.T) {
	t.Parallel()
	spec := fleet.FleetSpec{MaxRunning: 2, MaxWriters: 4, Root: "/ws", WarmWait: -1, RunLocal: true,
		Heartbeat: 30 * time.Millisecond, MissLimit: 3,
		Workers: []fleet.WorkerSpec{
			{Name: "w1", Address: "w1.test:7420", Capacity: 2, Writes: []string{"src"}},
			{Name: "w2", Address: "w2.test:7420", Capacity: 2},
		}}
	r := newFleetRig(t, spec, map[string]bool{"w2": true}, nil)
	r.waitUp("w1", "w2")
	var tasks []event.TaskSpec
	var ids []string
	for i := 1; i <= 12; i++ {
		ts := event.TaskSpec{ID: fmt.Sprintf("f1.%d", i), Prompt: fmt.Sprintf("task %d", i)}
		switch i % 4 {
		case 1:
			ts.Writer, ts.WritePaths = true, []string{fmt.Sprintf("src/p%d", i)}
		case 2:
			ts.Writer, ts.WritePaths = true, []string{fmt.Sprintf("docs/p%d", i)}
		}
		tasks = append(tasks, ts)
		ids = append(ids, ts.ID)
	}
	res := r.submit(&fleetmsg.SubmitFleet{FleetID: "f1", Tasks: tasks})
	// w2 takes two readers and sits on them; then its network is cut.
	w2 := r.workers["w2"]
	var onW2 []string
	for len(onW2) < 2 {
		select {
		case st := <-w2.started:
			if st.Spec.Writer {
				t.Errorf("writer %s placed on w2, which has no write paths", st.Spec.ID)
			}
			onW2 = append(onW2, st.Spec.ID)
		case <-time.After(20 * time.Second):
			t.Fatalf("w2 got %v only", onW2)
		}
	}
	w2.reachable.Store(false)
	w2.set(func(w *scriptWorker) { w.mute = true })
	var out *fleetmsg.FleetResult
	select {
	case out = <-res:
	case <-time.After(60 * time.Second):
		t.Fatal("the fleet never ended")
	}
	if out == nil {
		t.FailNow()
	}
	if len(out.Results) != len(ids) {
		t.Fatalf("%d results", len(out.Results))
	}
	for i, res := range out.Results {
		if res.TaskID != ids[i] || res.Status != event.TaskOK {
			t.Errorf("result %d = %+v", i, res)
		}
		if !strings.HasSuffix(res.Text, " did task "+strings.TrimPrefix(ids[i], "f1.")) {
			t.Errorf("%s answered %q", res.TaskID, res.Text)
		}
	}
	done, started, requeued := checkEndsOnce(t, r.drain(), ids)
	for _, id := range onW2 {
		if len(requeued[id]) != 1 || requeued[id][0].Worker != "w2" || requeued[id][0].Attempt != 2 ||
			!strings.Contains(requeued[id][0].Reason, "w2 lost") {
			t.Errorf("%s requeued %+v", id, requeued[id])
		}
		if d := done[id]; d == nil || d.Worker == "w2" || d.Attempt != 2 {
			t.Errorf("%s, lost on w2, ended %+v", id, d)
		}
	}
	for i, ts := range tasks {
		for _, s := range started[ts.ID] {
			switch {
			case ts.Writer && s.Worker != "" && !strings.HasPrefix(ts.WritePaths[0], "src/"):
				t.Errorf("writer %s of %v started on %s", ts.ID, ts.WritePaths, s.Worker)
			case s.Worker == "w1" && s.Model != "w1-model":
				t.Errorf("task %d on w1 has model %q", i+1, s.Model)
			}
		}
	}
	// The lost worker shows as lost; the others up.
	st, err := r.sys.Root().RequestFuture(r.pid, &fleetmsg.QueryFleet{}, 5*time.Second).Result()
	must(t, err)
	for _, w := range st.(*fleetmsg.FleetStatus).Workers {
		want := link.WorkerUp
		if w.Name == "w2" {
			want = link.WorkerLost
		}
		if w.State != want || w.Running != 0 {
			t.Errorf("worker %+v, want %s", w, want)
		}
	}
}

func TestFleetLostWorkerFailPolicyAndFencedWriter(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"fail", "rerun"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			spec := fleet.FleetSpec{MaxRunning: 1, MaxWriters: 4, Root: "/ws", WarmWait: -1, RunLocal: false, LostPolicy: policy,
				Heartbeat: 30 * time.Millisecond, MissLimit: 2,
				Workers: []fleet.WorkerSpec{
					{Name: "w1", Address: "w1.test:7420", Capacity: 1, Writes: []string{"."}},
					{Name: "w2", Address: "w2.test:7420", Capacity: 1, Writes: []string{"."}},
				}}
			// w2 comes up only once w1 holds the first writer.
			r := newFleetRig(t, spec, map[string]bool{"w1": true}, map[string]bool{"w2": true})
			r.waitUp("w1")
			// Two overlapping writers: the first lands on w1 and hangs
			// there; the second runs on w2 once the first's claims are free.
			tasks := []event.TaskSpec{
				{ID: "f1.1", Prompt: "task 1", Writer: true, WritePaths: []string{"src"}},
				{ID: "f1.2", Prompt: "task 2", Writer: true, WritePaths: []string{"src/a"}},
			}
			var first *remote.Start
			res := r.submit(&fleetmsg.SubmitFleet{FleetID: "f1", Tasks: tasks})
			select {
			case first = <-r.workers["w1"].started:
			case <-time.After(20 * time.Second):
				t.Fatal("w1 never got a task")
			}
			if first.Spec.ID != "f1.1" {
				t.Fatalf("w1 got %s", first.Spec.ID)
			}
			r.workers["w2"].reachable.Store(true)
			r.waitUp("w2")
			w1 := r.workers["w1"]
			w1.reachable.Store(false)
			w1.set(func(w *scriptWorker) { w.mute = true })
			cut := time.Now()
			out := <-res
			if out == nil {
				t.FailNow()
			}
			evs := r.drain()
			done, started, requeued := checkEndsOnce(t, evs, []string{"f1.1", "f1.2"})
			if policy == "fail" {
				if r0 := out.Results[0]; r0.Status != event.TaskFailed || !strings.Contains(r0.Error, "worker w1 lost") {
					t.Errorf("f1.1 = %+v", r0)
				}
				if len(requeued["f1.1"]) != 0 {
					t.Errorf("requeued under fail: %+v", requeued["f1.1"])
				}
			} else {
				if r0 := out.Results[0]; r0.Status != event.TaskOK || r0.Text != "w2 did task 1" {
					t.Errorf("f1.1 = %+v", r0)
				}
				// The rerun waited out w1's lease before it started.
				var lostAt, rerunAt time.Time
				for _, e := range evs {
					if q, ok := e.(*event.TaskRequeued); ok && q.Task == "f1.1" {
						lostAt = q.Time
					}
				}
				if s := started["f1.1"]; len(s) == 2 && s[1].Worker == "w2" {
					rerunAt = s[1].Time
				} else {
					t.Errorf("f1.1 started %+v", s)
				}
				if lease := 2 * 30 * time.Millisecond; rerunAt.Sub(cut) < lease || lostAt.Sub(cut) < lease {
					t.Errorf("writer requeued %s and rerun %s after the cut, inside the lease %s", lostAt.Sub(cut), rerunAt.Sub(cut), lease)
				}
				if d := done["f1.1"]; d.Worker != "w2" || d.Attempt != 2 {
					t.Errorf("f1.1 done %+v", d)
				}
			}
			if r1 := out.Results[1]; r1.Status != event.TaskOK || r1.Text != "w2 did task 2" {
				t.Errorf("f1.2 = %+v", r1)
			}
			// The overlapping writer never ran while the first one still
			// held its claims: it started after the first's loss was
			// settled (requeued or failed).
			var settled, second time.Time
			for _, e := range evs {
				switch e := e.(type) {
				case *event.TaskRequeued:
					if e.Task == "f1.1" {
						settled = e.Time
					}
				case *event.TaskDone:
					if e.Task == "f1.1" && settled.IsZero() {
						settled = e.Time
					}
				case *event.TaskStarted:
					if e.Task == "f1.2" {
						second = e.Time
					}
				}
			}
			if second.Before(settled) {
				t.Errorf("f1.2 started at %s, before f1.1's loss settled at %s", second, settled)
			}
		})
	}
}

// TestFleetWorkerRefusalRequeues: a worker that says it is full gets no
// more tasks until its heartbeat shows a free slot; the refused task
// runs elsewhere.
func TestFleetWorkerRefusalRequeues(t *testing.T) {
	t.Parallel()
	spec := fleet.FleetSpec{MaxRunning: 1, MaxWriters: 4, Root: "/ws", WarmWait: -1, RunLocal: true,
		Heartbeat: 30 * time.Millisecond, MissLimit: 3,
		Workers: []fleet.WorkerSpec{{Name: "w1", Address: "w1.test:7420", Capacity: 1}}}
	r := newFleetRig(t, spec, nil, nil)
	w1 := r.workers["w1"]
	var refusals atomic.Int32
	var mu sync.Mutex
	refusedTasks := map[string]bool{}
	w1.set(func(w *scriptWorker) {
		w.free = 0 // heartbeats report no free slot
		inner := w.onTask
		w.onTask = func(c actor.Context, m any) {
			if st, ok := m.(*remote.Start); ok && refusals.Load() == 0 {
				refusals.Add(1)
				mu.Lock()
				refusedTasks[st.Spec.ID] = true
				mu.Unlock()
				remote.SendWorker(w.sys, c, c.Sender(), &remote.Refused{Task: st.Spec.ID, Attempt: st.Attempt, Reason: "full"})
				return
			}
			inner(c, m)
		}
	})
	r.waitUp("w1")
	var tasks []event.TaskSpec
	var ids []string
	for i := 1; i <= 6; i++ {
		tasks = append(tasks, event.TaskSpec{ID: fmt.Sprintf("f1.%d", i), Prompt: fmt.Sprintf("task %d", i)})
		ids = append(ids, tasks[i-1].ID)
	}
	out := <-r.submit(&fleetmsg.SubmitFleet{FleetID: "f1", Tasks: tasks})
	if out == nil {
		t.FailNow()
	}
	for _, res := range out.Results {
		if res.Status != event.TaskOK {
			t.Errorf("%+v", res)
		}
	}
	_, started, requeued := checkEndsOnce(t, r.drain(), ids)
	mu.Lock()
	defer mu.Unlock()
	if len(refusedTasks) != 1 {
		t.Fatalf("refused %v", refusedTasks)
	}
	for id := range refusedTasks {
		if len(requeued[id]) != 1 || !strings.Contains(requeued[id][0].Reason, "full") {
			t.Errorf("%s requeued %+v", id, requeued[id])
		}
	}
	// Full from the refusal on, and never reported free again: every
	// later task ran here.
	onW1 := 0
	for _, s := range started {
		for _, e := range s {
			if e.Worker == "w1" {
				onW1++
			}
		}
	}
	if onW1 != 0 {
		t.Errorf("%d tasks started on the full worker after its refusal", onW1)
	}
}

// TestFleetRepairsLostWorkerMessages: a scheduler handler that panics on
// a link's up or lost message loses it; the repair asks every link for its
// state, so the queue's nodes match the links again. Not parallel: the
// fault hook is process-wide.
func TestFleetRepairsLostWorkerMessages(t *testing.T) {
	t.Run("up", func(t *testing.T) {
		fired := InjectPanic(t, "scheduler", "*link.Up", false)
		spec := fleet.FleetSpec{MaxRunning: 1, MaxWriters: 1, Root: "/ws", WarmWait: -1, RunLocal: false,
			Heartbeat: 30 * time.Millisecond, MissLimit: 3,
			Workers: []fleet.WorkerSpec{{Name: "w1", Address: "w1.test:7420", Capacity: 2}}}
		r := newFleetRig(t, spec, nil, nil)
		r.waitUp("w1")
		if !fired.Load() {
			t.Fatal("the fault never fired")
		}
		out := <-r.submit(&fleetmsg.SubmitFleet{FleetID: "f1", Tasks: []event.TaskSpec{{ID: "f1.1", Prompt: "task 1"}, {ID: "f1.2", Prompt: "task 2"}}})
		if out == nil {
			t.FailNow()
		}
		for _, res := range out.Results {
			if res.Status != event.TaskOK || !strings.HasPrefix(res.Text, "w1 did") {
				t.Errorf("%+v", res)
			}
		}
	})
	t.Run("lost", func(t *testing.T) {
		spec := fleet.FleetSpec{MaxRunning: 1, MaxWriters: 1, Root: "/ws", WarmWait: -1, RunLocal: true,
			Heartbeat: 30 * time.Millisecond, MissLimit: 3,
			Workers: []fleet.WorkerSpec{{Name: "w1", Address: "w1.test:7420", Capacity: 2}}}
		r := newFleetRig(t, spec, map[string]bool{"w1": true}, nil)
		r.waitUp("w1")
		res := r.submit(&fleetmsg.SubmitFleet{FleetID: "f1", Tasks: []event.TaskSpec{{ID: "f1.1", Prompt: "task 1"}, {ID: "f1.2", Prompt: "task 2"},
			{ID: "f1.3", Prompt: "task 3"}}})
		var on []string
		for len(on) < 2 {
			select {
			case st := <-r.workers["w1"].started:
				on = append(on, st.Spec.ID)
			case <-time.After(20 * time.Second):
				t.Fatalf("w1 started %v", on)
			}
		}
		fired := InjectPanic(t, "scheduler", "*link.Lost", false)
		w1 := r.workers["w1"]
		w1.reachable.Store(false)
		w1.set(func(w *scriptWorker) { w.mute = true })
		out := <-res
		if out == nil {
			t.FailNow()
		}
		if !fired.Load() {
			t.Fatal("the fault never fired")
		}
		for _, res := range out.Results {
			if res.Status != event.TaskOK || !strings.HasPrefix(res.Text, "local did") {
				t.Errorf("%+v", res)
			}
		}
		_, _, requeued := checkEndsOnce(t, r.drain(), []string{"f1.1", "f1.2", "f1.3"})
		for _, id := range on {
			if len(requeued[id]) != 1 {
				t.Errorf("%s requeued %+v", id, requeued[id])
			}
		}
	})
}

// TestFleetWaitsForItsLinksFirstVerdict: a fleet given while the links are
// still dialling is not run locally behind the workers' backs; it waits
// for their first verdict (bounded by settleWait) and then spreads.
func TestFleetWaitsForItsLinksFirstVerdict(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	spec := fleet.FleetSpec{MaxRunning: 1, MaxWriters: 2, Root: "/ws", WarmWait: -1, RunLocal: true,
		Heartbeat: 30 * time.Millisecond, MissLimit: 3,
		Workers: []fleet.WorkerSpec{{Name: "w1", Address: "w1.test:7420", Capacity: 8}},
		Probe: func(ctx context.Context, _ string) (time.Duration, error) {
			select {
			case <-gate:
				return 0, nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}}
	r := newFleetRig(t, spec, nil, nil)
	var tasks []event.TaskSpec
	var ids []string
	for i := 1; i <= 4; i++ {
		tasks = append(tasks, event.TaskSpec{ID: fmt.Sprintf("f1.%d", i), Prompt: fmt.Sprintf("task %d", i)})
		ids = append(ids, tasks[i-1].ID)
	}
	res := r.submit(&fleetmsg.SubmitFleet{FleetID: "f1", Tasks: tasks})
	// The query is handled after the submission: nothing may run yet.
	st, err := r.sys.Root().RequestFuture(r.pid, &fleetmsg.QueryFleet{}, 5*time.Second).Result()
	must(t, err)
	if fs := st.(*fleetmsg.FleetStatus); fs.Running != 0 || fs.Queued != 4 {
		t.Fatalf("before the link's verdict: running %d, queued %d; want 0 and 4", fs.Running, fs.Queued)
	}
	close(gate)
	out := <-res
	if out == nil || len(out.Results) != 4 {
		t.Fatalf("result %+v", out)
	}
	_, started, _ := checkEndsOnce(t, r.drain(), ids)
	for _, id := range ids {
		if s := started[id]; len(s) != 1 || s[0].Worker != "w1" {
			t.Errorf("%s started %+v; want once, on w1 (most free slots)", id, s)
		}
	}
}

// TestFleetWarnsWhenWorkersAreNotUsed: configured workers that cannot be
// used are reported on the bus, where a frontend shows them, and through
// a taken port: the endpoint that cannot start is the session's notice.
func TestFleetWarnsWhenWorkersAreNotUsed(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	sys := kernel.NewSystem(nil)
	bus := event.NewBus()
	sub := bus.Subscribe()
	defer sub.Close()
	spec := &fleet.FleetSpec{Root: "/ws", Remote: &remote.RemoteOptions{Listen: ln.Addr().String(), Token: "t"},
		Workers: []fleet.WorkerSpec{{Name: "w1", Address: "w1.test:7420", Capacity: 2}}}
	if err := fleet.StartWorkersRemote(sys, spec); err == nil {
		t.Fatal("an endpoint on a taken port started")
	}
	if len(spec.Workers) != 0 {
		t.Errorf("workers kept after the endpoint failed: %+v", spec.Workers)
	}
	pid := sys.Root().Spawn(fleet.FleetProps(sys, "s1", bus, *spec))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		ev, err := sub.Next(ctx)
		must(t, err)
		if n, ok := ev.(*event.Notice); ok {
			if n.Level != "warn" || !strings.Contains(n.Message, "workers not used") {
				t.Errorf("notice %+v", n)
			}
			break
		}
	}
	must(t, sys.Stop(pid, 5*time.Second))
	must(t, sys.Shutdown(ctx))
}
