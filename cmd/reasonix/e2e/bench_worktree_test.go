package e2e

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
)

// BenchmarkWorktreeFleet16 runs a fleet of 16 writers that all claim
// funcs.go and each edit one function of it, with 100 ms of model latency
// per turn, once with claims (they take turns) and once in worktrees
// (they run together, merged as they end), at max_parallel_writers = 16.
// It reports the median wall time of each and, for worktrees, the wall
// time beyond the model's (two turns), per task: what making, committing
// and merging a worktree costs inside a fleet.
func BenchmarkWorktreeFleet16(b *testing.B) {
	const latency = 100 * time.Millisecond
	for _, iso := range []string{"claims", "worktree"} {
		b.Run(iso, func(b *testing.B) {
			e := newE2E(b, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
				if !isSubagent(req) {
					if len(toolResults(req)) == 0 {
						return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet",
							Arguments: fleetArgs(16, func(int) string { return `,"isolation":"` + iso + `","write_paths":["funcs.go"]` })}}}
					}
					return providertest.Turn{Text: "done"}
				}
				var i int
				fmt.Sscanf(req.FirstUser(), "task %d", &i)
				if len(toolResults(req)) > 0 {
					return providertest.Turn{Latency: latency, Text: "edited"}
				}
				return providertest.Turn{Latency: latency, ToolCalls: []providertest.ToolCall{toolCall("edit", "edit_file", map[string]string{
					"path": "funcs.go", "old_string": fmt.Sprintf("return \"old %d\"", i), "new_string": fmt.Sprintf("return \"new %d\"", i)})}}
			}))
			e.writeConfig("\n[agent]\nmax_subagent_concurrency = 16\nmax_parallel_writers = 16\n")
			gitWork(b, e, map[string]string{"funcs.go": funcsFile(16)})
			var walls []time.Duration
			for i := 0; i < b.N; i++ {
				writeWorkFiles(b, e.work, map[string]string{"funcs.go": funcsFile(16)})
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				cmd, _, stderr := e.command(ctx, "run", "fan out")
				start := time.Now()
				err := cmd.Run()
				walls = append(walls, time.Since(start))
				cancel()
				if err != nil {
					b.Fatalf("run: %v\n%s", err, stderr)
				}
			}
			sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
			med := walls[len(walls)/2]
			b.ReportMetric(med.Seconds(), "wall-s")
			if iso == "worktree" {
				b.ReportMetric(float64((med-2*latency).Milliseconds())/16, "extra-ms/task")
			}
		})
	}
}
