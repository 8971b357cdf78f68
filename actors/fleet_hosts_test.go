package actors

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/actors/kernel"
	"reasonix/actors/remote"
	"reasonix/actors/worker"
	"reasonix/core/config"
	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// TestFleetOnRealWorkerHostsOverLoopback runs a fleet on two real worker
// hosts, each in an actor system of its own behind its own remote
// endpoint, with the scheduler dialling them as configured (its own
// endpoint, the gRPC probe, the protobuf wire). One worker's process goes
// away with a task on it: the task runs again on the other.
func TestFleetOnRealWorkerHostsOverLoopback(t *testing.T) {
	t.Parallel()
	var held atomic.Bool
	stalled := make(chan struct{})
	srv := providertest.Start(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		// The first attempt of the held task stalls; its rerun answers.
		if strings.HasPrefix(req.FirstUser(), "hold") && held.CompareAndSwap(false, true) {
			close(stalled)
			return providertest.Turn{Stall: true}
		}
		return providertest.Turn{Text: "answer to " + req.FirstUser()}
	}))
	cfg, cwd := &config.Config{}, t.TempDir()
	type host struct {
		sys  *kernel.System
		rem  *remote.Remote
		host *worker.Host
	}
	var hosts []*host
	for _, name := range []string{"w1", "w2"} {
		sys := kernel.NewSystem(nil)
		rem, err := remote.StartRemote(sys, remote.RemoteOptions{Listen: "127.0.0.1:0", Token: hostsToken})
		must(t, err)
		h, err := worker.StartHost(sys, worker.HostSpec{Name: name, Capacity: 2, Workspaces: map[string]string{"ws": cwd}, Config: cfg,
			Grace: time.Second, NewAgents: fakeModelAgents(fakeProvider(t, srv))})
		must(t, err)
		hosts = append(hosts, &host{sys: sys, rem: rem, host: h})
	}
	spec := fleet.FleetSpec{MaxRunning: 1, MaxWriters: 2, Root: cwd, Workspace: "ws", WarmWait: -1, RunLocal: false,
		Heartbeat: 100 * time.Millisecond, MissLimit: 3, TaskTimeout: time.Minute,
		Remote: &remote.RemoteOptions{Listen: "127.0.0.1:0", Token: hostsToken},
		Workers: []fleet.WorkerSpec{
			{Name: "w1", Address: hosts[0].rem.Address(), Capacity: 2},
			{Name: "w2", Address: hosts[1].rem.Address(), Capacity: 1},
		}}
	ssys := kernel.NewSystem(nil)
	must(t, fleet.StartWorkersRemote(ssys, &spec))
	bus := event.NewBus()
	sub := bus.Subscribe()
	r := &fleetRig{t: t, sys: ssys, bus: bus, sub: sub}
	r.spawn("p1", spec)
	pid := r.pid
	t.Cleanup(func() {
		sub.Close()
		if err := ssys.Stop(pid, 10*time.Second); err != nil {
			t.Errorf("stop scheduler: %v", err)
		}
		shutdown := func(what string, sys *kernel.System) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			t0 := time.Now()
			if err := sys.Shutdown(ctx); err != nil {
				t.Errorf("shutdown %s: %v", what, err)
			}
			// Measured, not asserted: a worker whose scheduler is gone
			// may spend protoactor's dial retries (10 s) on its goodbye.
			t.Logf("shutdown %s took %s", what, time.Since(t0))
		}
		shutdown("scheduler", ssys)
		for i, h := range hosts {
			if err := h.host.Stop(5 * time.Second); err != nil {
				t.Errorf("stop worker: %v", err)
			}
			shutdown(fmt.Sprint("worker ", i+1), h.sys)
		}
	})
	r.waitUp("w1", "w2")
	// The held task stalls on whichever worker it lands; that worker's
	// process then goes away.
	var tasks []event.TaskSpec
	var ids []string
	for i := 1; i <= 6; i++ {
		p := fmt.Sprintf("task %d", i)
		if i == 3 {
			p = "hold task 3"
		}
		tasks = append(tasks, event.TaskSpec{ID: fmt.Sprintf("f1.%d", i), Prompt: p})
		ids = append(ids, tasks[i-1].ID)
	}
	res := r.submit(&fleetmsg.SubmitFleet{FleetID: "f1", Tasks: tasks})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var evs []event.Event
	var lost, other string
	for lost == "" {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for the held task: %v", err)
		}
		evs = append(evs, e)
		if s, ok := e.(*event.TaskStarted); ok && s.Task == "f1.3" {
			lost = s.Worker
		}
	}
	// Its request must have reached the model before the worker goes:
	// a worker's request borrows its slot from the scheduler first.
	select {
	case <-stalled:
	case <-ctx.Done():
		t.Fatal("the held task's request never reached the model")
	}
	switch lost {
	case "w1":
		other = "w2"
		hosts[0].rem.Stop(5 * time.Second)
	case "w2":
		other = "w1"
		hosts[1].rem.Stop(5 * time.Second)
	default:
		t.Fatalf("the held task started on %q", lost)
	}
	out := <-res
	if out == nil {
		t.FailNow()
	}
	for i, res := range out.Results {
		if res.TaskID != ids[i] {
			t.Errorf("result %d is %s", i, res.TaskID)
		}
		if res.Status != event.TaskOK || res.Text != "answer to "+tasks[i].Prompt {
			t.Errorf("%s = %+v", res.TaskID, res)
		}
	}
	evs = append(evs, r.drain()...)
	_, started, requeued := checkEndsOnce(t, evs, ids)
	if q := requeued["f1.3"]; len(q) != 1 || q[0].Worker != lost {
		t.Errorf("f1.3 requeued %+v, want once from %s", q, lost)
	}
	if s := started["f1.3"]; len(s) != 2 || s[1].Worker != other || s[1].Attempt != 2 {
		t.Errorf("f1.3 started %+v, want its rerun on %s", s, other)
	}
	for _, id := range ids {
		for _, s := range started[id] {
			if s.Worker == "" || s.Model != "fake-model" {
				t.Errorf("%s started %+v: every task runs on a worker, with the model the worker resolved", id, s)
			}
		}
	}
}

// fakeModelAgents stands in for the agent builder a worker host is given:
// every task's agent talks to the fake model p, with no tools.
func fakeModelAgents(p provider.Provider) func(*config.Config, string, *slog.Logger) (worker.Agents, error) {
	return func(*config.Config, string, *slog.Logger) (worker.Agents, error) { return modelAgents{p}, nil }
}

type modelAgents struct{ p provider.Provider }

func (a modelAgents) AgentFor(agent.TaskOwner, event.TaskSpec) (agent.AgentSpec, error) {
	reg, err := tool.NewRegistry()
	if err != nil {
		return agent.AgentSpec{}, err
	}
	return agent.AgentSpec{Provider: a.p, Model: "fake-model", Tools: reg, System: "sub", ToolTimeout: 10 * time.Second}, nil
}

// hostsToken is the shared secret of the scheduler tests' worker hosts.
const hostsToken = "hosts-test-token"
