package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
)

// fleetLatency is how long the fake waits before answering a subagent
// turn in the in-flight-limited fleet tests.
const fleetLatency = 100 * time.Millisecond

// limitedFleet is a fake that accepts n requests at once and a responder
// where the parent fans out 64 tasks and each subagent takes three turns.
func limitedFleet(t testing.TB, n int) *e2e {
	return newE2E(t, providertest.WithMaxInFlight(n), providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if !isSubagent(req) {
			if len(toolResults(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: fleetArgs(64, nil)}}}
			}
			return providertest.Turn{Text: "parent summarised the fleet"}
		}
		switch len(toolResults(req)) {
		case 0:
			return providertest.Turn{Latency: fleetLatency, ToolCalls: []providertest.ToolCall{{Name: "ls", Arguments: `{}`}}}
		case 1:
			return providertest.Turn{Latency: fleetLatency, ToolCalls: []providertest.ToolCall{{Name: "glob", Arguments: `{"pattern":"*"}`}}}
		}
		return providertest.Turn{Latency: fleetLatency, Text: "done with " + req.FirstUser()}
	}))
}

// fleet429Bound is the documented ceiling on 429s for a 64-task fleet
// against an endpoint that takes 8 requests at once: the limiter's first
// window overshoots by at most InitialWindow-8, and each later probe of
// the limit costs one 429, with probes spaced twice as far apart each
// time, which for 192 requests is at most 8 more (docs/benchmarks.md).
const fleet429Bound = provider.InitialWindow - 8 + 8

// TestE2EFleetAgainstConcurrencyLimit runs a 64-task fleet at cap 64
// against a fake that turns away every request over 8 in flight: every
// task ends ok, the endpoint never sees more than it accepts, and the 429s
// stay under the documented bound.
func TestE2EFleetAgainstConcurrencyLimit(t *testing.T) {
	t.Parallel()
	e := limitedFleet(t, 8)
	e.writeConfig("\n[agent]\nmax_subagent_concurrency = 64\n")
	r := e.run("run", "--output-format", "stream-json", "fan out")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	var last providertest.Request
	for _, req := range e.srv.Requests() {
		if !isSubagent(req) {
			last = req
		}
	}
	res := toolResults(last)
	if len(res) != 1 || !strings.HasPrefix(res[0].Content, "64 tasks: 64 ok") {
		t.Fatalf("fleet result: %+v", res)
	}
	if n := e.srv.Count(); n != 2+64*3 {
		t.Errorf("%d requests answered, want %d: a request was asked twice or lost", n, 2+64*3)
	}
	if got := e.srv.Throttled(); got > fleet429Bound {
		t.Errorf("%d requests turned away with 429, want at most %d", got, fleet429Bound)
	}
	t.Logf("429s: %d, peak in flight %d", e.srv.Throttled(), e.srv.PeakInFlight())
	if !strings.Contains(r.stdout, `"endpoint":{`) {
		t.Errorf("no task event shows the endpoint's window:\n%s", r.stdout[:min(len(r.stdout), 2000)])
	}
	for i := 1; i <= 64; i++ {
		if !strings.Contains(res[0].Content, fmt.Sprintf("done with task %d\n", i)) && i != 64 {
			t.Errorf("task %d's answer missing", i)
		}
	}
}
