package actors

import (
	"strings"
	"testing"
	"time"

	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/core/provider/providertest"
)

// cacheFleet runs a fan-out of 16 one-turn tasks against a fake with a
// prompt cache, each reply beginning after latency, and returns the
// task_done events and the fleet result. The harness's prefix is small,
// so the size threshold is off (MinWarmPrefix -1): these tests are about
// the wait itself.
func cacheFleet(t *testing.T, warmWait, latency time.Duration, opts ...providertest.Option) ([]*event.TaskDone, string) {
	t.Helper()
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 16, MaxWriters: 2, Root: "/ws", WarmWait: warmWait, MinWarmPrefix: -1},
		server: append(opts, providertest.WithPrefixCache(), providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				return providertest.Turn{Latency: latency, Text: "answer to " + req.FirstUser()}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(16, nil)}}
			}
			return providertest.Turn{Text: "parent done"}
		}))})
	done, evs := h.turn("fan out")
	if done.Status != event.StatusOK {
		t.Fatalf("parent turn: %+v", done)
	}
	var final providertest.Request
	for _, r := range h.srv.Requests() {
		if !isSub(r) {
			final = r
		}
	}
	return eventsOf[*event.TaskDone](evs), toolMessages(final)[0].Content
}

func TestFanOutWarmsThePrefixFirst(t *testing.T) {
	t.Parallel()
	dones, res := cacheFleet(t, 10*time.Second, 50*time.Millisecond)
	checkWarmed(t, dones, res)
}

// TestFanOutWaitsForTheFirstToken: against a provider that sends its
// headers while the request is queued and caches the prompt only at the
// first token, the siblings wait for the warmer's first token, not for
// its headers, and 15 of 16 are served from the cache.
func TestFanOutWaitsForTheFirstToken(t *testing.T) {
	t.Parallel()
	dones, res := cacheFleet(t, 10*time.Second, 300*time.Millisecond, providertest.WithQueuedHeaders())
	checkWarmed(t, dones, res)
}

// checkWarmed fails unless every task but the warmer hit the cache.
func checkWarmed(t *testing.T, dones []*event.TaskDone, res string) {
	t.Helper()
	hits := 0
	for _, d := range dones {
		if d.Status != event.TaskOK {
			t.Errorf("task %s: %s", d.Task, d.Status)
		}
		if d.CacheHitPct > 0 {
			hits++
		}
	}
	if hits != 15 {
		t.Errorf("%d of 16 siblings report cache hits, want 15 (all but the warmer)", hits)
	}
	if n := strings.Count(res, "% cache hits"); n != 15 {
		t.Errorf("fleet result shows cache hits on %d tasks, want 15:\n%s", n, res)
	}
}

// TestFanOutWithoutWarmupMisses is the control: siblings started together
// all miss the cache, which is what the warm-up is for.
func TestFanOutWithoutWarmupMisses(t *testing.T) {
	t.Parallel()
	// A reply slow enough to begin that every sibling has asked before
	// the first is answered, however slowly a loaded machine starts them.
	dones, _ := cacheFleet(t, -1, time.Second)
	hits := 0
	for _, d := range dones {
		if d.CacheHitPct > 0 {
			hits++
		}
	}
	if hits > 4 {
		t.Errorf("%d of 16 siblings hit the cache without a warm-up", hits)
	}
}

// TestFanOutWaitIsBounded: a warmer whose reply is slow to begin holds its
// siblings only for WarmWait; they end before it does.
func TestFanOutWaitIsBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 4, MaxWriters: 2, Root: "/ws", WarmWait: 100 * time.Millisecond, MinWarmPrefix: -1},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				if req.FirstUser() == "task 1" {
					return providertest.Turn{Latency: 2 * time.Second, Text: "slow"}
				}
				return providertest.Turn{Text: "quick"}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(4, nil)}}
			}
			return providertest.Turn{Text: "parent done"}
		})}})
	done, evs := h.turn("fan out")
	if done.Status != event.StatusOK {
		t.Fatalf("parent turn: %+v", done)
	}
	dones := eventsOf[*event.TaskDone](evs)
	if len(dones) != 4 || dones[3].Task != "f1.1" {
		var order []string
		for _, d := range dones {
			order = append(order, d.Task)
		}
		t.Errorf("task_done order %v, want the slow warmer last", order)
	}
}

// subArrivals is how far apart in time the first requests of a fleet's
// subagents arrived at the fake: the spread of a fan-out that was not
// held is a few milliseconds, one that waited for its warmer at least the
// warmer's time to its first token.
func subArrivals(reqs []providertest.Request, fleetNo int) time.Duration {
	var first, last time.Time
	seen := 0
	for _, r := range reqs {
		if !isSub(r) || len(toolMessages(r)) > 0 || !strings.HasPrefix(r.FirstUser(), "task ") {
			continue
		}
		seen++
		if (seen-1)/16 != fleetNo {
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

// TestFanOutSkipsTheWaitForASmallPrefix: the harness's subagents send a
// prefix far under DefaultMinWarmPrefix tokens, too small for a wait to
// pay, so the siblings are not held: all 16 are sent before the warmer's
// reply (a second in coming) has begun.
func TestFanOutSkipsTheWaitForASmallPrefix(t *testing.T) {
	t.Parallel()
	const latency = time.Second
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 16, MaxWriters: 2, Root: "/ws", WarmWait: 10 * time.Second},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				return providertest.Turn{Latency: latency, Text: "answer to " + req.FirstUser()}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(16, nil)}}
			}
			return providertest.Turn{Text: "parent done"}
		})}})
	if done, _ := h.turn("fan out"); done.Status != event.StatusOK {
		t.Fatalf("parent turn: %+v", done)
	}
	if spread := subArrivals(h.srv.Requests(), 0); spread >= latency/2 {
		t.Errorf("the 16 subagents' first requests arrived over %s: the siblings waited for the warmer although the prefix is small", spread)
	}
}

// TestFanOutSkipsTheWaitWhenWarm: a second fan-out of the same subagents
// finds its prefix answered at the endpoint moments ago (by the first
// fan-out), so cached, and sends all 16 at once; the first waited.
func TestFanOutSkipsTheWaitWhenWarm(t *testing.T) {
	t.Parallel()
	const latency = time.Second
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 16, MaxWriters: 2, Root: "/ws", WarmWait: 10 * time.Second, MinWarmPrefix: -1},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				return providertest.Turn{Latency: latency, Text: "answer to " + req.FirstUser()}
			}
			if req.Last().Role == "user" {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(16, nil)}}
			}
			return providertest.Turn{Text: "parent done"}
		})}})
	for i := 0; i < 2; i++ {
		if done, _ := h.turn("fan out"); done.Status != event.StatusOK {
			t.Fatalf("parent turn %d: %+v", i+1, done)
		}
	}
	reqs := h.srv.Requests()
	if spread := subArrivals(reqs, 0); spread < latency/2 {
		t.Errorf("the first fan-out's requests arrived over %s: it did not wait for its warmer", spread)
	}
	if spread := subArrivals(reqs, 1); spread >= latency/2 {
		t.Errorf("the second fan-out's requests arrived over %s: it waited although its prefix was just answered", spread)
	}
}
