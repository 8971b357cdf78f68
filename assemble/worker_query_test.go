package assemble

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"

	"reasonix/actors/kernel"
	"reasonix/actors/remote"
	"reasonix/actors/worker"
	"reasonix/core/testenv"
)

// queryTestToken is the shared secret of the query tests' workers.
const queryTestToken = "query-test-token"

// startRemoteSystem starts a quiet system with a loopback endpoint guarded
// by queryTestToken; mount spawns what the endpoint serves and returns its
// stop. Everything is stopped at cleanup, the actors first.
func startRemoteSystem(t *testing.T, mount func(sys *kernel.System) (stop func() error)) string {
	t.Helper()
	sys := kernel.NewSystem(nil)
	r, err := remote.StartRemote(sys, remote.RemoteOptions{Listen: "127.0.0.1:0", Token: queryTestToken})
	if err != nil {
		t.Fatal(err)
	}
	stop := func() error { return nil }
	if mount != nil {
		stop = mount(sys)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
		r.Stop(5 * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return r.Address()
}

// startQueryWorkerHost serves a real worker host named "build1" with
// capacity 4 and the workspaces "proj" and "other" on loopback.
func startQueryWorkerHost(t *testing.T) (string, *worker.Host) {
	t.Helper()
	cfg, cwd := buildConfig(t, "http://127.0.0.1:1/v1", "")
	var host *worker.Host
	addr := startRemoteSystem(t, func(sys *kernel.System) func() error {
		h, err := StartWorkerHost(sys, worker.HostSpec{Name: "build1", Capacity: 4, Config: cfg,
			Workspaces: map[string]string{"proj": cwd, "other": t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		host = h
		return func() error { return h.Stop(5 * time.Second) }
	})
	return addr, host
}

// helloWorker stands in for a worker of another build: it answers each
// hello with welcome(hello), or not at all when that returns nil.
type helloWorker struct {
	sys     *kernel.System
	welcome func(*remote.Hello) *remote.Welcome
	hellos  chan *remote.Hello
}

func (w *helloWorker) Receive(c actor.Context) {
	m, err := remote.FromWire(c.Message())
	if err != nil {
		return
	}
	if h, ok := m.(*remote.Hello); ok {
		select {
		case w.hellos <- h:
		default:
		}
		if wel := w.welcome(h); wel != nil {
			remote.SendWorker(w.sys, c, c.Sender(), wel)
		}
	}
}

// startHelloWorker serves a helloWorker named workerActorName on loopback
// and returns its address and the hellos it gets.
func startHelloWorker(t *testing.T, welcome func(*remote.Hello) *remote.Welcome) (string, <-chan *remote.Hello) {
	t.Helper()
	hellos := make(chan *remote.Hello, 4)
	addr := startRemoteSystem(t, func(sys *kernel.System) func() error {
		w := &helloWorker{sys: sys, welcome: welcome, hellos: hellos}
		pid, err := sys.Root().SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return w }), remote.HostActorName)
		if err != nil {
			t.Fatal(err)
		}
		return func() error { return sys.Stop(pid, 5*time.Second) }
	})
	return addr, hellos
}

func TestQueryWorker(t *testing.T) {
	// Not parallel: goleak must see this test's goroutines alone. The check
	// is the first cleanup, so it runs after the workers have stopped.
	t.Cleanup(func() { goleak.VerifyNone(t) })
	opts := remote.RemoteOptions{Token: queryTestToken}
	query := func(t *testing.T, addr string, o remote.RemoteOptions, within time.Duration) (remote.WorkerInfo, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		return remote.QueryWorker(ctx, addr, o)
	}

	t.Run("up", func(t *testing.T) {
		addr, _ := startQueryWorkerHost(t)
		info, err := query(t, addr, opts, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(info.Workspaces)
		if info.Name != "build1" || info.Boot == "" || info.Protocol != remote.Protocol ||
			info.Capacity != 4 || info.Running != 0 || !slices.Equal(info.Workspaces, []string{"other", "proj"}) || info.Refused != "" {
			t.Errorf("info = %+v", info)
		}
		if info.RTT <= 0 {
			t.Errorf("RTT = %s, want the probe's round trip", info.RTT)
		}
		// Asked again, the same worker answers with the same boot.
		again, err := query(t, addr, opts, 10*time.Second)
		if err != nil || again.Boot != info.Boot {
			t.Errorf("second query: %+v, %v; want boot %q", again, err, info.Boot)
		}
	})

	t.Run("the hello is a status query", func(t *testing.T) {
		addr, hellos := startHelloWorker(t, func(h *remote.Hello) *remote.Welcome {
			return &remote.Welcome{Protocol: remote.Protocol, Worker: "w", Epoch: h.Epoch, Capacity: 8, Running: 3}
		})
		info, err := query(t, addr, opts, 10*time.Second)
		if err != nil || info.Capacity != 8 || info.Running != 3 {
			t.Fatalf("info = %+v, err = %v", info, err)
		}
		if _, err := query(t, addr, opts, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		h1, h2 := <-hellos, <-hellos
		if h1.Protocol != remote.Protocol || h1.LeaseMS != 0 || h1.Scheduler == "" || h1.Workspace != "" {
			t.Errorf("hello = %+v, want protocol %d, no lease, a scheduler id, no workspace", h1, remote.Protocol)
		}
		if h1.Scheduler == h2.Scheduler {
			t.Errorf("two queries used the same scheduler id %q", h1.Scheduler)
		}
	})

	t.Run("bad token", func(t *testing.T) {
		addr, _ := startQueryWorkerHost(t)
		_, err := query(t, addr, remote.RemoteOptions{Token: "wrong"}, 10*time.Second)
		if !errors.Is(err, remote.ErrWorkerAuth) {
			t.Fatalf("err = %v, want ErrWorkerAuth", err)
		}
	})

	t.Run("closed port", func(t *testing.T) {
		_, err := query(t, testenv.ClosedAddr(t), opts, 10*time.Second)
		if !errors.Is(err, remote.ErrWorkerUnreachable) {
			t.Fatalf("err = %v, want ErrWorkerUnreachable", err)
		}
	})

	t.Run("protocol mismatch", func(t *testing.T) {
		addr, _ := startHelloWorker(t, func(h *remote.Hello) *remote.Welcome {
			return &remote.Welcome{Protocol: remote.Protocol + 1, Worker: "future", Epoch: h.Epoch, Refused: "protocol"}
		})
		info, err := query(t, addr, opts, 10*time.Second)
		if !errors.Is(err, remote.ErrWorkerIncompatible) {
			t.Fatalf("err = %v, want ErrWorkerIncompatible", err)
		}
		if info.Refused != "protocol" || info.Protocol != remote.Protocol+1 || info.Name != "future" {
			t.Errorf("info = %+v, want the worker's protocol and Refused protocol", info)
		}
	})

	t.Run("draining is no error", func(t *testing.T) {
		addr, host := startQueryWorkerHost(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := host.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		info, err := query(t, addr, opts, 10*time.Second)
		if err != nil || info.Refused != "draining" || info.Capacity != 4 {
			t.Errorf("info = %+v, err = %v; want Refused draining and no error", info, err)
		}
	})

	t.Run("no worker actor", func(t *testing.T) {
		addr := startRemoteSystem(t, nil)
		_, err := query(t, addr, opts, 10*time.Second)
		if !errors.Is(err, remote.ErrWorkerIncompatible) {
			t.Fatalf("err = %v, want ErrWorkerIncompatible", err)
		}
	})

	t.Run("no answer", func(t *testing.T) {
		addr, hellos := startHelloWorker(t, func(*remote.Hello) *remote.Welcome { return nil })
		_, err := query(t, addr, opts, time.Second)
		if !errors.Is(err, remote.ErrWorkerNoAnswer) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want ErrWorkerNoAnswer after the deadline", err)
		}
		// The hello left before the deadline, but on a loaded machine it
		// may land after it: wait for it rather than peek.
		select {
		case <-hellos:
		case <-time.After(10 * time.Second):
			t.Error("the worker never got the hello")
		}
	})

	t.Run("one querier, several workers at once", func(t *testing.T) {
		up, _ := startQueryWorkerHost(t)
		future, _ := startHelloWorker(t, func(h *remote.Hello) *remote.Welcome {
			return &remote.Welcome{Protocol: remote.Protocol + 1, Epoch: h.Epoch, Refused: "protocol"}
		})
		q, err := remote.NewWorkerQuerier(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		addrs := []string{up, future, testenv.ClosedAddr(t), up}
		infos := make([]remote.WorkerInfo, len(addrs))
		errs := make([]error, len(addrs))
		var wg sync.WaitGroup
		for i, a := range addrs {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				infos[i], errs[i] = q.Query(ctx, a)
			})
		}
		wg.Wait()
		for _, i := range []int{0, 3} {
			if errs[i] != nil || infos[i].Name != "build1" || infos[i].Capacity != 4 {
				t.Errorf("query %d: %+v, %v", i, infos[i], errs[i])
			}
		}
		if !errors.Is(errs[1], remote.ErrWorkerIncompatible) || infos[1].Refused != "protocol" {
			t.Errorf("query of the other protocol: %+v, %v", infos[1], errs[1])
		}
		if !errors.Is(errs[2], remote.ErrWorkerUnreachable) {
			t.Errorf("query of a closed port: %v", errs[2])
		}
	})
}
