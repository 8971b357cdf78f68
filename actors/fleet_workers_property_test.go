package actors

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/actors/remote"
	"reasonix/core/provider/providertest"
)

// TestFleetWorkersPropertyEndsOnce runs random fleets over the local
// process and scripted workers that answer, hang until cancelled or timed
// out, refuse as full, or refuse for good, while their networks are cut
// and mended at random and tasks are cancelled. Whatever the mix, each
// task ends exactly once (one task_done, nothing after, its result in
// input order, its task_done naming the attempt of its last start),
// writers start only on nodes whose write paths cover them, and two
// overlapping writers never hold their claims at once, a lost writer's
// fence included.
func TestFleetWorkersPropertyEndsOnce(t *testing.T) {
	t.Parallel()
	n := 12
	if testing.Short() {
		n = 4
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runWorkersProperty(t, seed) })
	}
}

type propTask struct {
	spec event.TaskSpec
	mode string // ok, hang, full, fatal
}

func runWorkersProperty(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	writes := [][]string{nil, {"."}, {"src"}, {"docs"}, {"src", "docs"}}
	spec := fleet.FleetSpec{MaxRunning: 1 + rng.IntN(2), MaxWriters: 1 + rng.IntN(3), Root: "/ws", WarmWait: -1, RunLocal: rng.IntN(3) > 0,
		Heartbeat: 25 * time.Millisecond, MissLimit: 2, TaskTimeout: 1500 * time.Millisecond, Grace: 200 * time.Millisecond}
	if rng.IntN(2) == 0 {
		spec.LostPolicy = "fail"
	}
	nodeWrites := map[string][]string{}
	for i := 1; i <= 2+rng.IntN(2); i++ {
		w := fleet.WorkerSpec{Name: fmt.Sprintf("w%d", i), Address: fmt.Sprintf("w%d.test:7420", i), Capacity: 1 + rng.IntN(3),
			Writes: writes[rng.IntN(len(writes))]}
		spec.Workers = append(spec.Workers, w)
		nodeWrites[w.Name] = w.Writes
	}
	paths := [][]string{nil, {"src/a"}, {"src/b"}, {"docs/x"}, {"src"}, {"src/a", "docs/x"}}
	var tasks []propTask
	byID := map[string]propTask{}
	for i := 1; i <= 6+rng.IntN(10); i++ {
		mode := []string{"ok", "ok", "ok", "hang", "full", "fatal"}[rng.IntN(6)]
		ts := event.TaskSpec{ID: fmt.Sprintf("f1.%d", i), Prompt: fmt.Sprintf("task %d %s", i, mode)}
		if rng.IntN(5) < 2 {
			ts.Writer, ts.WritePaths = true, paths[rng.IntN(len(paths))]
		}
		tasks = append(tasks, propTask{spec: ts, mode: mode})
		byID[ts.ID] = tasks[len(tasks)-1]
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d: spec %+v", seed, spec)
			for _, pt := range tasks {
				t.Logf("  %s %s writer=%v %v", pt.spec.ID, pt.mode, pt.spec.Writer, pt.spec.WritePaths)
			}
		}
	})

	var mu sync.Mutex
	refused := map[string]bool{}
	script := func(fw *fleetWorker, c actor.Context, m any) bool {
		switch m := m.(type) {
		case *remote.Start:
			mode := byID[m.Spec.ID].mode
			mu.Lock()
			first := !refused[m.Spec.ID]
			refused[m.Spec.ID] = true
			mu.Unlock()
			switch {
			case mode == "fatal":
				remote.SendWorker(fw.sys, c, c.Sender(), &remote.Refused{Task: m.Spec.ID, Attempt: m.Attempt, Reason: "unknown profile", Fatal: true})
				return true
			case mode == "full" && first:
				remote.SendWorker(fw.sys, c, c.Sender(), &remote.Refused{Task: m.Spec.ID, Attempt: m.Attempt, Reason: "full"})
				return true
			case mode == "hang":
				remote.SendWorker(fw.sys, c, c.Sender(), &remote.Accepted{Task: m.Spec.ID, Attempt: m.Attempt})
				return true
			}
		case *remote.Cancel:
			fw.mu.Lock()
			mute := fw.mute
			fw.mu.Unlock()
			if !mute {
				remote.SendWorker(fw.sys, c, c.Sender(), &remote.Finished{Task: m.Task, Attempt: m.Attempt, Status: event.StatusCancelled, Error: "cancelled"})
			}
			return true
		}
		return false
	}
	local := func(req providertest.Request) providertest.Turn {
		if strings.HasSuffix(req.FirstUser(), " hang") {
			return providertest.Turn{Stall: true}
		}
		return providertest.Turn{Text: "local did " + req.FirstUser()}
	}
	r := newScriptedFleetRig(t, spec, nil, nil, script, local)
	var names []string
	for _, w := range spec.Workers {
		names = append(names, w.Name)
	}
	r.waitUp(names...)

	var specs []event.TaskSpec
	for _, pt := range tasks {
		specs = append(specs, pt.spec)
	}
	res := r.submit(&fleetmsg.SubmitFleet{FleetID: "f1", Tasks: specs})
	// Chaos until the fleet ends: cut and mend networks, cancel tasks.
	stop := make(chan struct{})
	chaosDone := make(chan struct{})
	go func() {
		defer close(chaosDone)
		crng := rand.New(rand.NewPCG(seed, 0xc4a05))
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(30+crng.IntN(300)) * time.Millisecond):
			}
			switch crng.IntN(4) {
			case 0, 1:
				fw := r.workers[names[crng.IntN(len(names))]]
				cut := crng.IntN(2) == 0
				fw.reachable.Store(!cut)
				fw.set(func(w *scriptWorker) { w.mute = cut })
			case 2:
				r.sys.Send(r.pid, &fleetmsg.CancelTask{TaskID: tasks[crng.IntN(len(tasks))].spec.ID})
			}
		}
	}()
	var out *fleetmsg.FleetResult
	select {
	case out = <-res:
	case <-time.After(60 * time.Second):
		t.Fatal("the fleet never ended")
	}
	close(stop)
	<-chaosDone
	if out == nil {
		t.FailNow()
	}
	if len(out.Results) != len(tasks) {
		t.Fatalf("%d results for %d tasks", len(out.Results), len(tasks))
	}
	for i, res := range out.Results {
		if res.TaskID != tasks[i].spec.ID {
			t.Errorf("result %d is %s", i, res.TaskID)
		}
		switch res.Status {
		case event.TaskOK, event.TaskFailed, event.TaskCancelled, event.TaskTimedOut:
		default:
			t.Errorf("%s ended %q", res.TaskID, res.Status)
		}
		if res.Status == event.TaskOK && !strings.HasSuffix(res.Text, " did "+tasks[i].spec.Prompt) {
			t.Errorf("%s ok with %q", res.TaskID, res.Text)
		}
	}
	evs := r.drain()
	var ids []string
	for _, pt := range tasks {
		ids = append(ids, pt.spec.ID)
	}
	done, started, _ := checkEndsOnce(t, evs, ids)
	for i, res := range out.Results {
		d := done[res.TaskID]
		if d == nil {
			continue
		}
		if d.Status != res.Status {
			t.Errorf("%s: task_done %s, result %s", res.TaskID, d.Status, res.Status)
		}
		if s := started[res.TaskID]; len(s) > 0 {
			last := s[len(s)-1]
			if d.Worker != last.Worker || d.Attempt != last.Attempt {
				t.Errorf("%s: done on %q attempt %d, last start on %q attempt %d", res.TaskID, d.Worker, d.Attempt, last.Worker, last.Attempt)
			}
			if len(s) > 3 {
				t.Errorf("%s started %d times", res.TaskID, len(s))
			}
		}
		ts := tasks[i].spec
		for _, s := range started[ts.ID] {
			if ts.Writer && s.Worker != "" && !nodeCovers(nodeWrites[s.Worker], ts.WritePaths) {
				t.Errorf("writer %s %v started on %s, which writes %v", ts.ID, ts.WritePaths, s.Worker, nodeWrites[s.Worker])
			}
		}
	}
	checkWritersApart(t, evs, byID)
}

// nodeCovers is placement's rule: every claim lies under one of the
// node's write paths (no claims: the whole workspace).
func nodeCovers(writes, claims []string) bool {
	if len(claims) == 0 {
		claims = []string{"."}
	}
	for _, c := range claims {
		ok := false
		for _, w := range writes {
			ok = ok || w == "." || w == c || strings.HasPrefix(c, w+"/")
		}
		if !ok {
			return false
		}
	}
	return true
}

// checkWritersApart checks, in bus order, that overlapping writers never
// hold an attempt at once: an attempt holds from its task_started to its
// task_requeued or task_done.
func checkWritersApart(t *testing.T, evs []event.Event, byID map[string]propTask) {
	t.Helper()
	holding := map[string]bool{}
	for _, e := range evs {
		id := e.EventMeta().Task
		pt, ok := byID[id]
		if !ok || !pt.spec.Writer {
			continue
		}
		switch e.(type) {
		case *event.TaskStarted:
			for other := range holding {
				if claimsOverlap(pt.spec.WritePaths, byID[other].spec.WritePaths) {
					t.Errorf("writer %s %v started (seq %d) while %s %v held its claims", id, pt.spec.WritePaths, e.EventMeta().Seq,
						other, byID[other].spec.WritePaths)
				}
			}
			holding[id] = true
		case *event.TaskRequeued, *event.TaskDone:
			delete(holding, id)
		}
	}
}
