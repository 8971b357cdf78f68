//go:build linux

package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
)

const (
	benchWorkers  = 4
	benchCapacity = 16
	// benchCalls parallel_tasks calls of benchPerCall tasks each, made in
	// one parent turn: parallel_tasks is read-only, so the executor runs
	// the calls at once and the scheduler sees all 256 tasks together.
	benchCalls   = 4
	benchPerCall = 64
	benchTasks   = benchCalls * benchPerCall
	// benchTurns model turns per task, each held benchLatency at the fake
	// before its headers (BenchmarkFleet64's script).
	benchTurns   = 3
	benchLatency = 200 * time.Millisecond
)

// BenchmarkWorkers256 runs the real binary as a scheduler that places
// every task on workers ([remote] run_local = false): 256 read tasks, four
// parallel_tasks calls of 64 in one turn, over 4 `reasonix worker`
// processes of 16 slots each, on loopback, against the fake at 200 ms per
// model turn and 3 turns per task. The workers start once; each iteration
// is one `reasonix run` (process start, links coming up, the fleet, exit).
//
// It reports, as medians over the iterations:
//   - wall/ideal: the run's wall time over ideal = ceil(256/64) waves ×
//     3 turns × 200 ms = 2.4 s, the time 64 slots need for the model's
//     latency alone, plus, when the fan-out held its siblings for the
//     warmer's first token, that one 200 ms (as BenchmarkFleet64 counts it);
//   - wall/ideal-bare: the same over 2.4 s, the wait not counted;
//   - place-ms: the mean placement latency of the tasks that waited for a
//     slot. On a worker with C slots, its j-th task_started (j > C) can
//     only follow its (j-C)-th task_done, which freed the slot; the
//     latency is the time between the two. A remote task_started is
//     published when the worker has accepted the task, so this covers the
//     scheduler's bookkeeping of the ended task, the choice of the next,
//     the start message, the worker building the subagent and the
//     acceptance coming back;
//   - run-extra-ms: the mean, over all tasks, of task_done − task_started
//     − 3 × 200 ms: the time a running task spends beyond the model's
//     latency (the worker's agent steps and tools, the event relay, the
//     finish coming back);
//   - first-start-ms: from the first task_queued to the first
//     task_started, which includes the links coming up;
//   - first-wave-ms: from the first task_started to the 64th, the time
//     the first wave takes to fill every slot (the fleet's prompt-cache
//     warm-up holds a node's siblings until the first one's first output,
//     about one model latency);
//   - relayed-events/s: task events (anything with a task id) on the
//     parent's stream per second of wall time;
//   - startup-ms: from starting the process to the first task_queued
//     (process start, config, session, the parent's first model turn);
//   - after-ms: from the last task_done to the process's exit (the fleet
//     result, the parent's last model turn, shutdown).
func BenchmarkWorkers256(b *testing.B) {
	r := newRig(b, map[string]string{"README.md": "a checkout\n", "src/main.go": "package main\n"},
		providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if !isSubagent(req) {
				if len(toolResults(req)) == 0 {
					var calls []providertest.ToolCall
					for c := 1; c <= benchCalls; c++ {
						var tasks []string
						for i := 1; i <= benchPerCall; i++ {
							tasks = append(tasks, fmt.Sprintf(`{"prompt":"task %d.%d"}`, c, i))
						}
						calls = append(calls, providertest.ToolCall{ID: fmt.Sprintf("p%d", c), Name: "parallel_tasks",
							Arguments: `{"tasks":[` + strings.Join(tasks, ",") + `]}`})
					}
					return providertest.Turn{ToolCalls: calls}
				}
				return providertest.Turn{Text: "done"}
			}
			switch len(toolResults(req)) {
			case 0:
				return providertest.Turn{Latency: benchLatency, ToolCalls: []providertest.ToolCall{{Name: "ls", Arguments: `{}`}}}
			case 1:
				return providertest.Turn{Latency: benchLatency, ToolCalls: []providertest.ToolCall{{Name: "glob", Arguments: `{"pattern":"*"}`}}}
			}
			return providertest.Turn{Latency: benchLatency, Text: "answer to " + req.FirstUser()}
		}))
	var entries []workerEntry
	for i := 1; i <= benchWorkers; i++ {
		name := fmt.Sprintf("b%d", i)
		r.startWorker(name, benchCapacity, workerToken)
		entries = append(entries, workerEntry{name: name, capacity: benchCapacity})
	}
	r.writeParentConfig("max_subagent_concurrency = 64", "run_local = false", entries...)
	slots := benchWorkers * benchCapacity
	ideal := time.Duration((benchTasks+slots-1)/slots) * benchTurns * benchLatency

	var ratio, bare, place, extra, first, wave, rate, startup, after []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		seen := r.e.srv.Count()
		start := time.Now()
		p := r.startParent("run", "--output-format", "stream-json", "fan out")
		_, code := p.waitExit(b)
		wall := time.Since(start)
		if code != 0 {
			b.Fatalf("run exit %d\n--- stderr\n%s\n--- stdout (tail)\n%s", code, p.stderr, tail(p.stdout.String(), 3000))
		}
		m := benchFigures(b, decodeEvents(b, p.stdout.String()))
		startup = append(startup, float64(m.firstQueued.Sub(start).Microseconds())/1000)
		after = append(after, float64(p.exitedAt().Sub(m.lastDone).Microseconds())/1000)
		// As in BenchmarkFleet64: a fan-out that held its siblings for the
		// warmer's first token pays that one time to first token by design,
		// so the ideal counts it once.
		warm := ideal
		if firstRequestsSpread(r.e.srv.Requests()[seen:]) >= benchLatency/2 {
			warm += benchLatency
		}
		ratio = append(ratio, float64(wall)/float64(warm))
		bare = append(bare, float64(wall)/float64(ideal))
		place = append(place, m.placeMS)
		extra = append(extra, m.extraMS)
		first = append(first, m.firstMS)
		wave = append(wave, m.waveMS)
		rate = append(rate, float64(m.taskEvents)/wall.Seconds())
	}
	b.ReportMetric(median(ratio), "wall/ideal")
	b.ReportMetric(median(bare), "wall/ideal-bare")
	b.ReportMetric(median(place), "place-ms")
	b.ReportMetric(median(extra), "run-extra-ms")
	b.ReportMetric(median(first), "first-start-ms")
	b.ReportMetric(median(wave), "first-wave-ms")
	b.ReportMetric(median(rate), "relayed-events/s")
	b.ReportMetric(median(startup), "startup-ms")
	b.ReportMetric(median(after), "after-ms")
	b.StopTimer()
	var names []string
	for _, w := range entries {
		names = append(names, w.name)
	}
	codes, _ := r.terminateAll(b, names...)
	for _, n := range names {
		if codes[n] != 0 {
			b.Errorf("worker %s exited %d on SIGTERM", n, codes[n])
		}
	}
	r.noLeftovers(b)
}

type benchRun struct {
	placeMS, extraMS, firstMS, waveMS float64
	taskEvents                        int
	firstQueued, lastDone             time.Time
}

// benchFigures computes one run's figures (see BenchmarkWorkers256) from
// its stream, after checking every task ended ok once, on a worker.
func benchFigures(b *testing.B, events []evt) benchRun {
	b.Helper()
	var out benchRun
	starts := map[string][]time.Time{} // worker → task_started times
	dones := map[string][]time.Time{}  // worker → task_done times
	startedAt := map[string]time.Time{}
	var firstQueued, firstStarted time.Time
	ended := map[string]int{}
	var extra time.Duration
	for _, ev := range events {
		if field(ev, "task") != "" {
			out.taskEvents++
		}
		at := eventTime(b, ev)
		id, w := field(ev, "task"), field(ev, "worker")
		switch ev.Type {
		case "task_queued":
			if firstQueued.IsZero() {
				firstQueued = at
			}
		case "task_started":
			if w == "" {
				b.Fatalf("task %s started on the scheduler itself with run_local = false: %s", id, ev.line)
			}
			if firstStarted.IsZero() {
				firstStarted = at
			}
			starts[w] = append(starts[w], at)
			startedAt[id] = at
		case "task_requeued":
			b.Fatalf("a task was requeued in a run where no worker is lost: %s", ev.line)
		case "task_done":
			ended[id]++
			if st := field(ev, "status"); st != "ok" {
				b.Fatalf("task %s ended %s: %s", id, st, ev.line)
			}
			dones[w] = append(dones[w], at)
			extra += at.Sub(startedAt[id]) - benchTurns*benchLatency
		}
	}
	if len(ended) != benchTasks {
		b.Fatalf("%d tasks ended, want %d", len(ended), benchTasks)
	}
	for id, n := range ended {
		if n != 1 {
			b.Fatalf("task %s ended %d times", id, n)
		}
	}
	var waits []time.Duration
	for w, s := range starts {
		d := dones[w]
		slices.SortFunc(s, func(x, y time.Time) int { return x.Compare(y) })
		slices.SortFunc(d, func(x, y time.Time) int { return x.Compare(y) })
		for j := benchCapacity; j < len(s); j++ {
			waits = append(waits, s[j].Sub(d[j-benchCapacity]))
		}
	}
	var sum time.Duration
	for _, w := range waits {
		sum += w
	}
	if len(waits) > 0 {
		out.placeMS = float64(sum.Microseconds()) / 1000 / float64(len(waits))
	}
	out.extraMS = float64(extra.Microseconds()) / 1000 / benchTasks
	out.firstMS = float64(firstStarted.Sub(firstQueued).Microseconds()) / 1000
	out.firstQueued = firstQueued
	var all []time.Time
	for _, st := range starts {
		all = append(all, st...)
	}
	slices.SortFunc(all, func(x, y time.Time) int { return x.Compare(y) })
	if n := benchWorkers * benchCapacity; len(all) >= n {
		out.waveMS = float64(all[n-1].Sub(all[0]).Microseconds()) / 1000
	}
	for _, d := range dones {
		for _, at := range d {
			if at.After(out.lastDone) {
				out.lastDone = at
			}
		}
	}
	return out
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[len(s)/2]
}
