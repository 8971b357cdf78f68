//go:build linux

package e2e

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
)

// BenchmarkRunProcess measures what a user waits for: starting the real
// binary, loading config, one streamed answer from the fake at zero
// latency, saving the transcript and exiting. It reports the median wall
// time and the peak RSS (the highest and the median across runs).
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
// prepare each time) and reports the median wall time and the binary's
// peak RSS, the highest and the median of the runs'. Each iteration runs
// it twice: once started directly, timed, and once through the peakrss
// launcher for its RSS, since the launcher's own start would add to the
// wall time.
func benchProcess(b *testing.B, e *e2e, prepare func(), args ...string) {
	var walls []time.Duration
	var peaks []int64
	for i := 0; i < b.N; i++ {
		prepare()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd, _, stderr := e.command(ctx, args...)
		start := time.Now()
		err := cmd.Run()
		walls = append(walls, time.Since(start))
		if err != nil {
			cancel()
			b.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		prepare()
		cmd, _, stderr, peak := e.measuredCommand(ctx, args...)
		err = cmd.Run()
		cancel()
		if err != nil {
			b.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		peaks = append(peaks, peak())
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	b.ReportMetric(float64(walls[len(walls)/2].Microseconds())/1000, "median-ms")
	slices.Sort(peaks)
	b.ReportMetric(float64(peaks[len(peaks)-1])/1024, "peak-RSS-MB")
	b.ReportMetric(float64(peaks[len(peaks)/2])/1024, "median-RSS-MB")
}
