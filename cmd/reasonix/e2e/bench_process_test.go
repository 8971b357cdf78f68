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
	var walls []time.Duration
	var peakKB int64
	for i := 0; i < b.N; i++ {
		e.srv.Push(providertest.Turn{Text: "The answer is 42."})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd, _, stderr := e.command(ctx, "run", "what is the answer?")
		start := time.Now()
		err := cmd.Run()
		walls = append(walls, time.Since(start))
		cancel()
		if err != nil {
			b.Fatalf("run: %v\n%s", err, stderr)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > peakKB {
			peakKB = ru.Maxrss // kilobytes on Linux
		}
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	b.ReportMetric(float64(walls[len(walls)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MB")
}
