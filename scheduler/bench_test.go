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
