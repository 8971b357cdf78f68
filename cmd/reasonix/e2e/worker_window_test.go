//go:build linux

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
)

// workersShare429Bound is the ceiling on 429s for a 48-task fleet placed
// on three workers against an endpoint that takes 8 requests at once:
// the scheduler's one window overshoots by at most InitialWindow-8 and
// probes the limit as a local fleet would (fleet429Bound's reasoning,
// with a fleet of 144 requests, not 192). Three windows of their own
// would overshoot three times over on the first burst alone.
const workersShare429Bound = 16

// TestE2EWorkersShareTheEndpointWindow runs a 48-task fleet on three
// `reasonix worker` processes of 16 slots, all configured with the same
// endpoint and key as the scheduler, against a fake that turns away every
// request over 8 in flight. Every worker request borrows its slot from the
// scheduler's window (remote.SlotAsk), so the processes together stay
// within the limit: at most workersShare429Bound requests are turned away,
// where each worker starting its own window at 16 would send 48 at once.
func TestE2EWorkersShareTheEndpointWindow(t *testing.T) {
	t.Parallel()
	const tasks = 48
	r := newRig(t, map[string]string{"README.md": "a checkout\n", "src/main.go": "package main\n"},
		providertest.WithMaxInFlight(8), providertest.WithResponder(fanOut(tasks)))
	r.sameURL = true
	var entries []workerEntry
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("s%d", i)
		r.startWorker(name, 16, workerToken)
		entries = append(entries, workerEntry{name: name, capacity: 16})
	}
	r.writeParentConfig("max_subagent_concurrency = 64", "run_local = false", entries...)
	parent := r.startParent("run", "--output-format", "stream-json", "fan out")
	if _, code := parent.waitExit(t); code != 0 {
		t.Fatalf("parent exit %d\n--- stderr\n%s\n--- stdout (tail)\n%s", code, parent.stderr, tail(parent.stdout.String(), 4000))
	}
	if out := parentResult(t, r.e.srv, "fan"); !strings.HasPrefix(out, fmt.Sprintf("%d tasks: %d ok", tasks, tasks)) {
		t.Fatalf("fleet result:\n%s", tail(out, 2000))
	}
	on := 0
	for _, w := range entries {
		n := startedOn(parent.stdout.String(), w.name)
		on += n
		if n == 0 {
			t.Errorf("no task ran on worker %s", w.name)
		}
	}
	if on != tasks {
		t.Errorf("%d of %d tasks started on the workers", on, tasks)
	}
	got := r.e.srv.Throttled()
	t.Logf("429s: %d, peak in flight %d, requests %d", got, r.e.srv.PeakInFlight(), r.e.srv.Count())
	if got > workersShare429Bound {
		t.Errorf("%d requests turned away with 429, want at most %d: the workers did not share the scheduler's window", got, workersShare429Bound)
	}
	finish(t, r, "s1", "s2", "s3")
}
