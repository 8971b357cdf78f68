package scheduler_test

import (
	"fmt"
	"testing"

	"reasonix/scheduler"
)

// benchFleet builds 64 tasks of one mix: all readers, writers on disjoint
// files, writers on a few overlapping directories, or a blend of all three.
func benchFleet(mix string) []scheduler.Task {
	tasks := make([]scheduler.Task, 64)
	for i := range tasks {
		t := scheduler.Task{ID: fmt.Sprintf("t%02d", i), Fleet: "bench"}
		kind := mix
		if mix == "mixed" {
			kind = []string{"readers", "disjoint", "overlapping"}[i%3]
		}
		switch kind {
		case "disjoint":
			t.Writer = true
			t.WritePaths = []string{fmt.Sprintf("pkg%02d/file.go", i)}
		case "overlapping":
			t.Writer = true
			t.WritePaths = []string{fmt.Sprintf("dir%d", i%4), fmt.Sprintf("dir%d/sub/file%d.go", (i+1)%4, i)}
		}
		tasks[i] = t
	}
	return tasks
}

// BenchmarkFleet runs a 64-task fleet from submission to the last Finish,
// finishing the oldest running task between calls to Next, and reports
// admission decisions (tasks started) per second.
func BenchmarkFleet(b *testing.B) {
	for _, caps := range []struct{ running, writers int }{{6, 3}, {64, 32}} {
		for _, mix := range []string{"readers", "disjoint", "overlapping", "mixed"} {
			b.Run(fmt.Sprintf("caps=%d/%d/%s", caps.running, caps.writers, mix), func(b *testing.B) {
				tasks := benchFleet(mix)
				cfg := scheduler.Config{MaxRunning: caps.running, MaxWriters: caps.writers, Root: "/ws"}
				decisions := 0
				b.ReportAllocs()
				for b.Loop() {
					q, err := scheduler.New(cfg)
					if err != nil {
						b.Fatal(err)
					}
					for _, t := range tasks {
						if err := q.Submit(t, t0); err != nil {
							b.Fatal(err)
						}
					}
					var running []string
					for done := 0; done < len(tasks); done++ {
						for _, s := range q.Next(t0) {
							running = append(running, s.Task.ID)
							decisions++
						}
						if len(running) == 0 {
							b.Fatal("no task running and none started")
						}
						if _, err := q.Finish(running[0], t0); err != nil {
							b.Fatal(err)
						}
						running = running[1:]
					}
				}
				b.ReportMetric(float64(decisions)/b.Elapsed().Seconds(), "decisions/s")
			})
		}
	}
}

// BenchmarkNextBlocked measures the worst scan: 64 queued writers that all
// conflict with a running whole-workspace writer, so Next visits every task
// and starts none.
func BenchmarkNextBlocked(b *testing.B) {
	q, err := scheduler.New(scheduler.Config{MaxRunning: 32, MaxWriters: 32, Root: "/ws"})
	if err != nil {
		b.Fatal(err)
	}
	if err := q.Submit(scheduler.Task{ID: "all", Writer: true}, t0); err != nil {
		b.Fatal(err)
	}
	q.Next(t0)
	for _, t := range benchFleet("overlapping") {
		if err := q.Submit(t, t0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(q.Next(t0)) != 0 {
			b.Fatal("a conflicting writer started")
		}
	}
}

// benchNodes is the local node and four workers: one owning all, two
// owning a subtree each, one reading only; 6+8+8+8+8 = 38 slots.
var benchNodes = []scheduler.Node{
	{Name: "all", Slots: 8, Up: true, Writes: []string{"."}},
	{Name: "api", Slots: 8, Up: true, Writes: []string{"services/api"}},
	{Name: "web", Slots: 8, Up: true, Writes: []string{"services/web"}},
	{Name: "ro", Slots: 8, Up: true},
}

// benchNodeFleet is 256 tasks: half readers, the rest writers on disjoint
// files under services/api, services/web and lib.
func benchNodeFleet() []scheduler.Task {
	tasks := make([]scheduler.Task, 256)
	for i := range tasks {
		t := scheduler.Task{ID: fmt.Sprintf("t%03d", i), Fleet: "bench"}
		if i%2 == 1 {
			t.Writer = true
			dir := []string{"services/api", "services/web", "lib"}[i/2%3]
			t.WritePaths = []string{fmt.Sprintf("%s/f%03d.go", dir, i)}
		}
		tasks[i] = t
	}
	return tasks
}

func newBenchNodeQueue(b *testing.B, tasks []scheduler.Task) *scheduler.Queue {
	q, err := scheduler.New(scheduler.Config{MaxRunning: 6, MaxWriters: 32, Root: "/ws"})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range benchNodes {
		if err := q.SetNode(n); err != nil {
			b.Fatal(err)
		}
	}
	for _, t := range tasks {
		if err := q.Submit(t, t0); err != nil {
			b.Fatal(err)
		}
	}
	return q
}

// BenchmarkNodesFleet runs a 256-task fleet over five nodes from
// submission to the last Finish, finishing the oldest running task
// between calls to Next, and reports the cost of one Next (256 per fleet)
// and admission decisions per second.
func BenchmarkNodesFleet(b *testing.B) {
	tasks := benchNodeFleet()
	decisions := 0
	b.ReportAllocs()
	for b.Loop() {
		q := newBenchNodeQueue(b, tasks)
		var running []string
		for done := 0; done < len(tasks); done++ {
			for _, s := range q.Next(t0) {
				running = append(running, s.Task.ID)
				decisions++
			}
			if len(running) == 0 {
				b.Fatal("no task running and none started")
			}
			if _, err := q.Finish(running[0], t0); err != nil {
				b.Fatal(err)
			}
			running = running[1:]
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(tasks)), "ns/next")
	b.ReportMetric(float64(decisions)/b.Elapsed().Seconds(), "decisions/s")
}

// BenchmarkNodesNextBlocked measures the worst scan over five nodes: 256
// queued writers under services/api, whose only covering worker is full
// (the local node has no slots) while the other nodes have free slots, so
// Next checks every writer against the caps and every node and starts
// none.
func BenchmarkNodesNextBlocked(b *testing.B) {
	q, err := scheduler.New(scheduler.Config{MaxRunning: 1, MaxWriters: 32, Root: "/ws"})
	if err != nil {
		b.Fatal(err)
	}
	if err := q.SetNode(scheduler.Node{Slots: 0}); err != nil {
		b.Fatal(err)
	}
	for _, n := range benchNodes {
		if n.Name == "all" {
			n.Writes = []string{"lib"}
		}
		if err := q.SetNode(n); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 8 {
		if err := q.Submit(scheduler.Task{ID: fmt.Sprintf("hog%d", i), Writer: true, WritePaths: []string{fmt.Sprintf("services/api/hog%d", i)}}, t0); err != nil {
			b.Fatal(err)
		}
	}
	if got := len(q.Next(t0)); got != 8 {
		b.Fatalf("%d hogs started, want 8", got)
	}
	for i := range 256 {
		if err := q.Submit(scheduler.Task{ID: fmt.Sprintf("w%03d", i), Writer: true, WritePaths: []string{fmt.Sprintf("services/api/w%03d.go", i)}}, t0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(q.Next(t0)) != 0 {
			b.Fatal("a writer started on a full node")
		}
	}
}
