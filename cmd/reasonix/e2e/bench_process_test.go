//go:build unix

package e2e

import (
	"context"
	"sort"
	"syscall"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
)

// BenchmarkRunProcess measures what a user waits for: starting the real
// binary, loading config, one streamed answer from the fake at zero
// latency, saving the transcript and exiting. It reports the median wall
// time and the highest peak RSS seen across runs.
func BenchmarkRunProcess(b *testing.B) {
	e := newE2E(b)
	benchProcess(b, e, func() { e.srv.Push(providertest.Turn{Text: "The answer is 42."}) }, "run", "what is the answer?")
}

// BenchmarkVersionProcess measures the floor every command pays: the
// binary's start-up (package init, runtime) and `reasonix version`.
func BenchmarkVersionProcess(b *testing.B) {
	benchProcess(b, newE2E(b), func() {}, "version")
}

// benchProcess runs the binary b.N times with args (before calling
// prepare each time) and reports the median wall time and the highest
// peak RSS.
func benchProcess(b *testing.B, e *e2e, prepare func(), args ...string) {
	var walls []time.Duration
	var peakKB int64
	for i := 0; i < b.N; i++ {
		prepare()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd, _, stderr := e.command(ctx, args...)
		start := time.Now()
		err := cmd.Run()
		walls = append(walls, time.Since(start))
		cancel()
		if err != nil {
			b.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > peakKB {
			peakKB = ru.Maxrss // kilobytes on Linux
		}
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	b.ReportMetric(float64(walls[len(walls)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MB")
}
