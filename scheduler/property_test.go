package scheduler_test

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/scheduler"
)

var (
	seedFlag      = flag.Uint64("scheduler.seed", 20250101, "base seed of the random workloads")
	workloadsFlag = flag.Int("scheduler.workloads", 1000, "random workloads per property subtest")
)

// pathPool holds write paths chosen to collide in every way the contract
// distinguishes: equal, directory over file, sibling sharing a prefix
// ("a/b" against "a/bc"), unrelated, and the whole workspace.
var pathPool = []string{".", "a", "a/b", "a/b/c.go", "a/bc", "a/b/d", "ab", "b", "b/x.go", "c", "c/d/e", "..foo"}

// spell writes a clean relative path in one of the equivalent forms a model
// might send, so normalisation is exercised along with admission.
func spell(r *rand.Rand, root, p string) string {
	switch r.IntN(7) {
	case 0:
		return "./" + p
	case 1:
		return p + "/"
	case 2:
		if root != "" {
			return root + "/" + p
		}
	case 3:
		return "zz/../" + p
	case 4:
		if root != "" {
			return "../" + root[1:] + "/" + p
		}
	}
	return p
}

// badPaths are write paths Submit must refuse (with root "/ws").
var badPaths = []string{"", "..", "../x", "a/../../x", "/etc/passwd", "/wsx/a"}

// workload is one randomly generated scenario.
type workload struct {
	cfg       scheduler.Config
	tasks     int
	writerPct int
	waitUnit  int // longest run of any task, in rounds
	// workers are added before the first task; with any, the run also
	// churns nodes: workers go down and up, slots change, new workers
	// appear, and the tasks of a lost worker are requeued (or finished
	// once their attempts run out). Waiting is then unbounded, so the
	// bound is not checked.
	workers []scheduler.Node
	// localSlots, when not nil, is set on the local node before the first
	// task.
	localSlots *int
}

// simulate runs one workload step by step. Each round: tasks due to end are
// finished in random order; random cancels, fleet cancels and bad calls
// happen; new tasks arrive; expired tasks are stopped; Next admits. A
// running task ends within waitUnit rounds of starting even when it is
// cancelled or expires, which is what makes waiting bounded. It returns the
// decision trace, so callers can check determinism, and what it exercised.
func simulate(seed uint64, w workload) (string, stats, error) {
	h, err := run(seed, w)
	return h.trace.String(), h.stats, err
}

// run is simulate's body; it returns the harness for the trace and stats.
func run(seed uint64, w workload) (*harness, error) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	q, err := scheduler.New(w.cfg)
	if err != nil {
		return &harness{}, fmt.Errorf("new: %w", err)
	}
	nodes := len(w.workers) > 0 || w.localSlots != nil
	bound := w.waitUnit
	if nodes {
		bound = 0
	}
	h := newHarness(q, w.cfg, bound)
	endAt := map[string]int{} // round at which a running task stops
	lost := map[string]bool{} // running on a lost worker, to be requeued at endAt
	if w.localSlots != nil {
		if err := h.setNode(scheduler.Node{Slots: *w.localSlots}); err != nil {
			return h, err
		}
	}
	for _, n := range w.workers {
		if err := h.setNode(n); err != nil {
			return h, err
		}
	}
	// requeueOrFail is what the fleet does with a task whose worker is
	// gone: run it again, or end it once it has had its attempts.
	requeueOrFail := func(id string, now time.Time) error {
		delete(lost, id)
		if _, err := h.requeue(id, now); err != nil {
			return err
		}
		if m := h.lookup(id); m.state == scheduler.Running {
			_, err := h.finish(id, now)
			return err
		}
		return nil
	}
	draining := false
	fleets := []string{"", "f1", "f2", "f3"}
	submitted := 0
	stopSoon := func(id string) {
		if e := h.round + 1 + r.IntN(w.waitUnit); e < endAt[id] {
			endAt[id] = e
		}
	}
	anyID := func() string {
		if len(h.all) == 0 || r.IntN(8) == 0 {
			return "nope"
		}
		return h.all[r.IntN(len(h.all))].task.ID
	}

	for h.round = 0; submitted < w.tasks || h.live() > 0; h.round++ {
		if h.round > 100_000 {
			return h, violation("workload did not drain: %d live", h.live())
		}
		now := t0.Add(time.Duration(h.round) * time.Second)

		if nodes && !draining && submitted >= w.tasks && r.IntN(8) == 0 {
			// Bring every node back so that everything queued can drain.
			draining = true
			for _, n := range h.nodes {
				back := scheduler.Node{Name: n.name, Slots: n.slots, Up: true, Writes: joinClaims(n.writes)}
				if n.name == "" && w.localSlots != nil {
					back.Slots = *w.localSlots
				}
				if err := h.setNode(back); err != nil {
					return h, err
				}
			}
		}
		if nodes && !draining {
			if err := churn(r, h, w, now, requeueOrFail, lost); err != nil {
				return h, err
			}
		}

		var due []string
		for _, m := range h.running {
			if endAt[m.task.ID] <= h.round {
				due = append(due, m.task.ID)
			}
		}
		r.Shuffle(len(due), func(i, j int) { due[i], due[j] = due[j], due[i] })
		for _, id := range due {
			if lost[id] && h.lookup(id).state == scheduler.Running {
				if err := requeueOrFail(id, now); err != nil {
					return h, err
				}
				continue
			}
			delete(lost, id)
			if _, err := h.finish(id, now); err != nil {
				return h, err
			}
		}

		switch r.IntN(20) {
		case 0:
			wasRunning, err := h.cancel(anyID(), now)
			if err != nil {
				return h, err
			}
			_ = wasRunning
		case 1:
			got, err := h.cancelFleet(fleets[r.IntN(len(fleets))], now)
			if err != nil {
				return h, err
			}
			for _, id := range got.Stopping {
				stopSoon(id)
			}
		case 2:
			if _, err := h.finish(anyID(), now); err != nil {
				return h, err
			}
		case 3:
			bad := scheduler.Task{ID: anyID(), Writer: true, WritePaths: []string{"a"}}
			if r.IntN(2) == 0 {
				bad = scheduler.Task{ID: fmt.Sprintf("bad%d", h.round), Writer: true,
					WritePaths: []string{badPaths[r.IntN(len(badPaths))]}}
			}
			if err := h.submit(bad, now); err != nil {
				return h, err
			}
		}
		// A cancel above may have turned a running task into a stopping one.
		for _, m := range h.running {
			if m.state == scheduler.Stopping && endAt[m.task.ID] > h.round+w.waitUnit {
				stopSoon(m.task.ID)
			}
		}

		for submitted < w.tasks && r.IntN(3) != 0 {
			t := scheduler.Task{
				ID:    fmt.Sprintf("t%d", submitted),
				Fleet: fleets[r.IntN(len(fleets))],
			}
			if r.IntN(100) < w.writerPct {
				t.Writer = true
				n := r.IntN(4) // zero paths: the whole workspace
				if n > 0 && r.IntN(4) != 0 {
					n = 1 + r.IntN(2)
				}
				for range n {
					t.WritePaths = append(t.WritePaths, spell(r, w.cfg.Root, pathPool[1+r.IntN(len(pathPool)-1)]))
				}
				if r.IntN(30) == 0 {
					t.WritePaths = append(t.WritePaths, spell(r, w.cfg.Root, "."))
				}
			}
			if r.IntN(5) == 0 {
				t.Timeout = time.Duration(1+r.IntN(w.waitUnit+1)) * time.Second
			}
			if err := h.submit(t, now); err != nil {
				return h, err
			}
			submitted++
		}

		ids, err := h.expired(now)
		if err != nil {
			return h, err
		}
		for _, id := range ids {
			stopSoon(id)
		}

		starts, err := h.next(now)
		if err != nil {
			return h, err
		}
		for _, s := range starts {
			endAt[s.Task.ID] = h.round + 1 + r.IntN(w.waitUnit)
		}
		if err := h.checkStatus(); err != nil {
			return h, err
		}
		if err := h.endRound(); err != nil {
			return h, err
		}
	}
	return h, h.checkAllEnded()
}

// churn applies one round of random node events: a worker lost (its
// running tasks requeued at once, or left to be requeued later, as a
// fleet keeps a lost writer's slots for a while), a worker back, a slot
// change, a new worker, or a requeue of a random task.
func churn(r *rand.Rand, h *harness, w workload, now time.Time,
	requeueOrFail func(string, time.Time) error, lost map[string]bool) error {
	workers := h.nodes[1:]
	switch r.IntN(12) {
	case 0, 1:
		if len(workers) == 0 {
			return nil
		}
		n := workers[r.IntN(len(workers))]
		if err := h.setNode(scheduler.Node{Name: n.name, Slots: n.slots, Up: !n.up, Writes: joinClaims(n.writes)}); err != nil {
			return err
		}
		if n.up {
			return nil
		}
		for _, m := range slices.Clone(h.running) {
			if m.node != n || m.state != scheduler.Running {
				continue
			}
			if r.IntN(3) == 0 {
				lost[m.task.ID] = true
				continue
			}
			if err := requeueOrFail(m.task.ID, now); err != nil {
				return err
			}
		}
	case 2:
		if len(workers) == 0 {
			return nil
		}
		n := workers[r.IntN(len(workers))]
		return h.setNode(scheduler.Node{Name: n.name, Slots: 1 + r.IntN(4), Up: n.up, Writes: joinClaims(n.writes)})
	case 3:
		if w.localSlots != nil && *w.localSlots == 0 {
			return nil // a writer only local covers would wait for ever
		}
		return h.setNode(scheduler.Node{Slots: 1 + r.IntN(4)})
	case 4:
		if r.IntN(4) == 0 && len(h.nodes) < 8 {
			return h.setNode(randomWorker(r, fmt.Sprintf("n%d", len(h.nodes)), w.cfg.Root))
		}
	case 5:
		if len(h.running) > 0 && r.IntN(2) == 0 {
			return requeueOrFail(h.running[r.IntN(len(h.running))].task.ID, now)
		}
		if len(h.all) > 0 {
			_, err := h.requeue(h.all[r.IntN(len(h.all))].task.ID, now)
			return err
		}
	}
	return nil
}

// joinClaims turns model write paths back into the slash form SetNode
// takes.
func joinClaims(claims [][]string) []string {
	var out []string
	for _, c := range claims {
		if len(c) == 0 {
			out = append(out, ".")
			continue
		}
		out = append(out, strings.Join(c, "/"))
	}
	return out
}

// randomWorker draws a worker: 1–4 slots, mostly up, reading only or
// writing one or two paths of the pool or the whole workspace.
func randomWorker(r *rand.Rand, name, root string) scheduler.Node {
	n := scheduler.Node{Name: name, Slots: 1 + r.IntN(4), Up: r.IntN(4) != 0}
	switch r.IntN(4) {
	case 0:
	case 1:
		n.Writes = []string{spell(r, root, ".")}
	default:
		for range 1 + r.IntN(2) {
			n.Writes = append(n.Writes, spell(r, root, pathPool[1+r.IntN(len(pathPool)-1)]))
		}
	}
	return n
}

// nodeWorkload draws a workload over several nodes: 1–4 workers, a local
// node with 0–4 slots, and churn.
func nodeWorkload(seed uint64) workload {
	w := randomWorkload(seed, func(r *rand.Rand) (int, int) { return 1 + r.IntN(4), 1 + r.IntN(4) })
	r := rand.New(rand.NewPCG(seed, 2))
	local := r.IntN(5)
	w.localSlots = &local
	for i := range 1 + r.IntN(4) {
		w.workers = append(w.workers, randomWorker(r, fmt.Sprintf("w%d", i), w.cfg.Root))
	}
	return w
}

// randomWorkload draws a workload; caps picks the slot caps.
func randomWorkload(seed uint64, caps func(r *rand.Rand) (int, int)) workload {
	r := rand.New(rand.NewPCG(seed, 1))
	running, writers := caps(r)
	root := "/ws"
	if r.IntN(4) == 0 {
		root = ""
	}
	return workload{
		cfg:       scheduler.Config{MaxRunning: running, MaxWriters: writers, Root: root},
		tasks:     2 + r.IntN(63),
		writerPct: []int{0, 30, 70, 100}[r.IntN(4)],
		waitUnit:  1 + r.IntN(6),
	}
}

// TestPropertyRandomWorkloads simulates thousands of random fleets and
// checks every invariant the harness knows after every call: caps, no
// overlapping writers, exactly-once endings, reader order, bounded
// overtaking, greedy admission and bounded waiting.
func TestPropertyRandomWorkloads(t *testing.T) {
	t.Parallel()
	base, n := *seedFlag, uint64(*workloadsFlag)
	if testing.Short() {
		n = min(n, 100)
	}
	t.Logf("base seed %d, %d workloads per subtest (flags -scheduler.seed, -scheduler.workloads)", base, n)
	tests := []struct {
		name   string
		offset uint64
		caps   func(r *rand.Rand) (int, int)
	}{
		{"default caps", 0, func(*rand.Rand) (int, int) { return 0, 0 }},
		{"one slot", 1 << 20, func(*rand.Rand) (int, int) { return 1, 1 }},
		{"tight caps", 2 << 20, func(r *rand.Rand) (int, int) { return 1 + r.IntN(4), 1 + r.IntN(3) }},
		{"wide caps", 3 << 20, func(r *rand.Rand) (int, int) { return 16 + r.IntN(17), 8 + r.IntN(25) }},
		{"more writer than run slots", 4 << 20, func(r *rand.Rand) (int, int) { return 1 + r.IntN(3), 4 + r.IntN(4) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var total stats
			for i := range n {
				seed := base + tc.offset + i
				w := randomWorkload(seed, tc.caps)
				trace, st, err := simulate(seed, w)
				if err != nil {
					t.Fatalf("seed %d (%+v): %v\ntrace tail:\n%s", seed, w, err, tail(trace, 40))
				}
				total.add(st)
				if i%50 == 0 {
					again, _, err := simulate(seed, w)
					if err != nil || again != trace {
						t.Fatalf("seed %d: a second run of the same workload differs (err %v)", seed, err)
					}
				}
			}
			t.Logf("%+v", total)
			if total.started == 0 || total.finished == 0 {
				t.Fatalf("workloads exercised nothing: %+v", total)
			}
		})
	}
}

// TestPropertyNodes runs random fleets over several nodes that go down
// and up, change slots and appear mid-run, with lost tasks requeued, and
// checks the harness invariants after every call: per-node slots, writer
// eligibility, the placement choice, the writer cap and no overlap across
// nodes, reader order, attempts, exactly-once endings and nothing lost.
func TestPropertyNodes(t *testing.T) {
	t.Parallel()
	base, n := *seedFlag, uint64(*workloadsFlag)
	if testing.Short() {
		n = min(n, 100)
	}
	var total stats
	for i := range n {
		seed := base + 5<<20 + i
		w := nodeWorkload(seed)
		trace, st, err := simulate(seed, w)
		if err != nil {
			t.Fatalf("seed %d (%+v): %v\ntrace tail:\n%s", seed, w, err, tail(trace, 60))
		}
		total.add(st)
		if i%50 == 0 {
			again, _, err := simulate(seed, w)
			if err != nil || again != trace {
				t.Fatalf("seed %d: a second run of the same workload differs (err %v)", seed, err)
			}
		}
	}
	t.Logf("%+v", total)
	if total.remote == 0 || total.requeued == 0 || total.exhausted == 0 || total.rejected == 0 || total.reservations == 0 {
		t.Fatalf("workloads did not exercise nodes: %+v", total)
	}
}

// TestPropertyCheckerCatches shows that the property checks can fail: with
// the anti-starvation rule switched off, each liveness check on its own
// reports the starved writer, and with the rule on none of them does.
func TestPropertyCheckerCatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		checks  check
		starve  bool
		wantErr bool
	}{
		{"rule on, all checks", checkAll, false, false},
		{"rule off, overtaking check", checkOvertaking, true, true},
		{"rule off, waiting bound", checkWaiting, true, true},
		{"rule off, status reservation", checkStatus, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := starvationScenario(tc.starve, tc.checks)
			if (err != nil) != tc.wantErr {
				t.Fatalf("starvation scenario: err %v, want error %v", err, tc.wantErr)
			}
			t.Logf("checker: %v", err)
		})
	}
	t.Run("caps larger than the model's", func(t *testing.T) {
		t.Parallel()
		// The Queue really has 4 run slots; the checker is told 2.
		q, err := scheduler.New(scheduler.Config{MaxRunning: 4, MaxWriters: 2, Root: "/ws"})
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(q, scheduler.Config{MaxRunning: 2, MaxWriters: 2, Root: "/ws"}, 0)
		for i := range 3 {
			if err := h.submit(scheduler.Task{ID: fmt.Sprint(i)}, t0); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := h.next(t0); err == nil {
			t.Fatal("checker accepted three running tasks under a cap of two")
		}
	})
	t.Run("node slots larger than the model's", func(t *testing.T) {
		t.Parallel()
		cfg := scheduler.Config{MaxRunning: 1, Root: "/ws"}
		q, err := scheduler.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(q, cfg, 0)
		if err := h.setNode(scheduler.Node{Name: "w1", Slots: 2, Up: true}); err != nil {
			t.Fatal(err)
		}
		// The Queue's w1 really has 4 slots.
		if err := q.SetNode(scheduler.Node{Name: "w1", Slots: 4, Up: true}); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if err := h.submit(scheduler.Task{ID: fmt.Sprint(i)}, t0); err != nil {
				t.Fatal(err)
			}
		}
		_, err = h.next(t0)
		if err == nil {
			t.Fatal("checker accepted a placement beyond the node's slots")
		}
		t.Logf("checker: %v", err)
	})
	t.Run("writer on a node that does not cover it", func(t *testing.T) {
		t.Parallel()
		cfg := scheduler.Config{MaxRunning: 1, Root: "/ws"}
		q, err := scheduler.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(q, cfg, 0)
		for _, n := range []scheduler.Node{{Name: "w1", Slots: 4, Up: true, Writes: []string{"a"}}} {
			if err := h.setNode(n); err != nil {
				t.Fatal(err)
			}
		}
		// The Queue's w1 really writes everything.
		if err := q.SetNode(scheduler.Node{Name: "w1", Slots: 4, Up: true, Writes: []string{"."}}); err != nil {
			t.Fatal(err)
		}
		if err := h.submit(scheduler.Task{ID: "w", Writer: true, WritePaths: []string{"b"}}, t0); err != nil {
			t.Fatal(err)
		}
		_, err = h.next(t0)
		if err == nil {
			t.Fatal("checker accepted a writer on a node that does not cover it")
		}
		t.Logf("checker: %v", err)
	})
}

// starvationScenario submits a relay of writers r0, r1, … one per round,
// alternating between paths x and y and each running two rounds, so that
// one of x and y is always held. A writer "w" on both x and y, queued right
// after r0, can only start if later relay writers stop passing it. It
// returns the first violation the harness reports.
func starvationScenario(starve bool, checks check) error {
	cfg := scheduler.Config{MaxRunning: 4, MaxWriters: 3, Root: "/ws"}
	q, err := scheduler.New(cfg)
	if err != nil {
		return err
	}
	if starve {
		scheduler.SetPassLimit(q, math.MaxInt)
	}
	const unit = 2
	h := newHarness(q, cfg, unit)
	h.checks = checks
	endAt := map[string]int{}
	submit := func(id string, paths ...string) error {
		return h.submit(scheduler.Task{ID: id, Writer: true, WritePaths: paths}, t0.Add(time.Duration(h.round)*time.Second))
	}
	for h.round = 0; h.round < 60; h.round++ {
		now := t0.Add(time.Duration(h.round) * time.Second)
		for _, m := range slices.Clone(h.running) {
			if endAt[m.task.ID] <= h.round {
				if _, err := h.finish(m.task.ID, now); err != nil {
					return err
				}
			}
		}
		if h.round < 40 {
			if err := submit(fmt.Sprintf("r%d", h.round), []string{"x", "y"}[h.round%2]); err != nil {
				return err
			}
		}
		if h.round == 0 {
			if err := submit("w", "x", "y"); err != nil {
				return err
			}
		}
		starts, err := h.next(now)
		if err != nil {
			return err
		}
		for _, s := range starts {
			endAt[s.Task.ID] = h.round + unit
		}
		if err := h.checkStatus(); err != nil {
			return err
		}
		if err := h.endRound(); err != nil {
			return err
		}
	}
	return nil
}

func tail(s string, lines int) string {
	n := 0
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			n++
			if n > lines {
				return s[i+1:]
			}
		}
	}
	return s
}
