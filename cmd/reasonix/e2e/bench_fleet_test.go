//go:build unix

package e2e

import (
	"context"
	"fmt"
	"sort"
	"syscall"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
)

// BenchmarkFleet64 runs the real binary on a 64-task fleet where every
// subagent takes three model turns (two read-only tool steps and an
// answer) and every subagent turn waits 200 ms at the fake before its
// headers. It reports the median wall time divided by the ideal
// ceil(64/cap) × 600 ms, and the highest peak RSS of the process.
func BenchmarkFleet64(b *testing.B) {
	const latency = 200 * time.Millisecond
	for _, cap := range []int{6, 64} {
		b.Run(fmt.Sprintf("cap%d", cap), func(b *testing.B) {
			e := newE2E(b, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
				if !isSubagent(req) {
					if len(toolResults(req)) == 0 {
						return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "fleet", Arguments: fleetArgs(64, nil)}}}
					}
					return providertest.Turn{Text: "done"}
				}
				switch len(toolResults(req)) {
				case 0:
					return providertest.Turn{Latency: latency, ToolCalls: []providertest.ToolCall{{Name: "ls", Arguments: `{}`}}}
				case 1:
					return providertest.Turn{Latency: latency, ToolCalls: []providertest.ToolCall{{Name: "glob", Arguments: `{"pattern":"*"}`}}}
				}
				return providertest.Turn{Latency: latency, Text: "answer"}
			}))
			e.writeConfig(fmt.Sprintf("\n[agent]\nmax_subagent_concurrency = %d\n", cap))
			ideal := time.Duration((64+cap-1)/cap) * 3 * latency
			var walls []time.Duration
			var peakKB int64
			for i := 0; i < b.N; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				cmd, _, stderr := e.command(ctx, "run", "fan out")
				start := time.Now()
				err := cmd.Run()
				walls = append(walls, time.Since(start))
				cancel()
				if err != nil {
					b.Fatalf("run: %v\n%s", err, stderr)
				}
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > peakKB {
					peakKB = ru.Maxrss
				}
			}
			sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
			med := walls[len(walls)/2]
			b.ReportMetric(float64(med)/float64(ideal), "wall/ideal")
			b.ReportMetric(float64(med.Milliseconds()), "median-ms")
			b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MB")
		})
	}
}

// BenchmarkFleetThrottled runs the real binary on a 64-task fleet (three
// model turns per subagent, each waiting fleetLatency at the fake) against
// a fake that answers 429 to any request over 8 in flight. It reports the
// median wall time divided by the ideal at the endpoint's limit,
// ceil(64/min(cap,8)) × 3 × fleetLatency, and the median number of 429s.
func BenchmarkFleetThrottled(b *testing.B) {
	const limit = 8
	for _, cap := range []int{6, 64} {
		b.Run(fmt.Sprintf("cap%d", cap), func(b *testing.B) {
			e := limitedFleet(b, limit)
			e.writeConfig(fmt.Sprintf("\n[agent]\nmax_subagent_concurrency = %d\n", cap))
			par := min(cap, limit)
			ideal := time.Duration((64+par-1)/par) * 3 * fleetLatency
			var walls []time.Duration
			var throttled []int
			for i := 0; i < b.N; i++ {
				before := e.srv.Throttled()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				cmd, _, stderr := e.command(ctx, "run", "fan out")
				start := time.Now()
				err := cmd.Run()
				walls = append(walls, time.Since(start))
				cancel()
				if err != nil {
					b.Fatalf("run: %v\n%s", err, stderr)
				}
				throttled = append(throttled, e.srv.Throttled()-before)
			}
			sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
			sort.Ints(throttled)
			b.ReportMetric(float64(walls[len(walls)/2])/float64(ideal), "wall/ideal")
			b.ReportMetric(float64(throttled[len(throttled)/2]), "429s")
			b.ReportMetric(float64(throttled[len(throttled)-1]), "max-429s")
		})
	}
}
