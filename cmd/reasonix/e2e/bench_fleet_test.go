//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
)

// BenchmarkFleet64 runs the real binary on a 64-task fleet where every
// subagent takes three model turns (two read-only tool steps and an
// answer) and every subagent turn waits 200 ms at the fake before its
// headers, against a fake with a prompt cache. The ideal is
// ceil(64/cap) × 600 ms, plus one 200 ms time to first token when the
// fan-out held its siblings for their warmer (counted once: that is what
// the wait costs by design). It reports the median wall time over both
// ideals (wall/ideal with the wait counted, wall/ideal-bare without it),
// the share of the subagents' prompt tokens served from the cache, how
// many of the runs held their siblings, and the binary's peak RSS (the
// highest and the median of the runs', read through the peakrss
// launcher; the launcher's start is inside the wall time). Runs
// share one home, so from the second on the fleet starts at the
// endpoint's learned window.
func BenchmarkFleet64(b *testing.B) {
	const latency = 200 * time.Millisecond
	for _, cap := range []int{6, 64} {
		b.Run(fmt.Sprintf("cap%d", cap), func(b *testing.B) {
			e := newE2E(b, providertest.WithPrefixCache(), providertest.WithResponder(func(req providertest.Request) providertest.Turn {
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
			bare := time.Duration((64+cap-1)/cap) * 3 * latency
			var walls, ideals []time.Duration
			var peaks []int64
			var hits []float64
			held := 0
			for i := 0; i < b.N; i++ {
				seen := e.srv.Count()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				cmd, stdout, stderr, peak := e.measuredCommand(ctx, "run", "--output-format", "stream-json", "fan out")
				start := time.Now()
				err := cmd.Run()
				wall := time.Since(start)
				cancel()
				if err != nil {
					b.Fatalf("run: %v\n%s", err, stderr)
				}
				ideal := bare
				if firstRequestsSpread(e.srv.Requests()[seen:]) >= latency/2 {
					ideal += latency
					held++
				}
				walls, ideals = append(walls, wall), append(ideals, ideal)
				hits = append(hits, cacheHitShare(b, stdout.String()))
				peaks = append(peaks, peak())
			}
			ratios := make([]float64, len(walls))
			for i := range walls {
				ratios[i] = float64(walls[i]) / float64(ideals[i])
			}
			sort.Float64s(ratios)
			sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
			sort.Float64s(hits)
			med := walls[len(walls)/2]
			b.ReportMetric(ratios[len(ratios)/2], "wall/ideal")
			b.ReportMetric(float64(med)/float64(bare), "wall/ideal-bare")
			b.ReportMetric(float64(med.Milliseconds()), "median-ms")
			b.ReportMetric(hits[len(hits)/2], "cache-hit-%")
			b.ReportMetric(float64(held), "runs-held")
			slices.Sort(peaks)
			b.ReportMetric(float64(peaks[len(peaks)-1])/1024, "peak-RSS-MB")
			b.ReportMetric(float64(peaks[len(peaks)/2])/1024, "median-RSS-MB")
		})
	}
}

// firstRequestsSpread is how far apart the subagents' first requests
// arrived: a few milliseconds when the fan-out started together, at
// least the warmer's time to its first token when the siblings waited
// for it.
func firstRequestsSpread(reqs []providertest.Request) time.Duration {
	var first, last time.Time
	for _, r := range reqs {
		if !isSubagent(r) || len(toolResults(r)) > 0 {
			continue
		}
		if first.IsZero() || r.Arrived.Before(first) {
			first = r.Arrived
		}
		if r.Arrived.After(last) {
			last = r.Arrived
		}
	}
	return last.Sub(first)
}

// cacheHitShare is the share, in percent, of the subagents' prompt tokens
// the provider's cache served, from the task_done events of a stream-json
// run.
func cacheHitShare(b *testing.B, stdout string) float64 {
	var prompt, hit int
	for _, line := range strings.Split(stdout, "\n") {
		var ev struct {
			Type  string         `json:"type"`
			Usage provider.Usage `json:"usage"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "task_done" {
			prompt += ev.Usage.PromptTokens
			hit += ev.Usage.CacheHitTokens
		}
	}
	if prompt == 0 {
		b.Fatalf("no task_done event with usage in the output")
	}
	return 100 * float64(hit) / float64(prompt)
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
