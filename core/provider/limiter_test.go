package provider

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// simulate drives a limiter against an endpoint that accepts at most
// limit requests at once, in rounds: the limiter admits what it will, the
// endpoint turns away whatever is over its limit at once, and every
// accepted request completes at the end of the round. It returns the
// number of 429s and of rounds needed to complete total requests.
func simulate(t *testing.T, l *Limiter, limit, total int) (throttled, rounds int) {
	t.Helper()
	done := 0
	for done < total {
		rounds++
		if rounds > 100*total {
			t.Fatalf("no progress: %d of %d done, stats %+v", done, total, l.Stats())
		}
		var accepted []*Slot
		for done+len(accepted) < total {
			s, ok := l.TryAcquire()
			if !ok {
				break
			}
			if len(accepted) >= limit {
				throttled++
				s.Done(Throttled, 0)
				continue
			}
			accepted = append(accepted, s)
		}
		for _, s := range accepted {
			s.Done(Succeeded, time.Millisecond)
		}
		done += len(accepted)
	}
	return throttled, rounds
}

func TestLimiterConvergesOnAHardLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ max, limit, total int }{
		{max: 64, limit: 8, total: 192},
		{max: 64, limit: 8, total: 2000},
		{max: 6, limit: 8, total: 192},
		{max: 64, limit: 1, total: 100},
		{max: 64, limit: 64, total: 640},
	} {
		t.Run(fmt.Sprintf("max%d-limit%d-total%d", tc.max, tc.limit, tc.total), func(t *testing.T) {
			t.Parallel()
			l := NewLimiter(tc.max)
			throttled, rounds := simulate(t, l, tc.limit, tc.total)
			par := min(tc.max, tc.limit)
			t.Logf("%d 429s, %d rounds, final %+v", throttled, rounds, l.Stats())
			ideal := (tc.total + par - 1) / par
			// Each probe of the limit costs one 429 and the probe interval
			// doubles, so 429s grow with the log of the run's length.
			if bound := InitialWindow + 2*maxProbeShift; throttled > bound {
				t.Errorf("%d 429s, want at most %d", throttled, bound)
			}
			// Ramp-up and recoveries cost a few rounds, not a share of
			// the run.
			if float64(rounds) > 1.3*float64(ideal)+10 {
				t.Errorf("%d rounds for an ideal of %d", rounds, ideal)
			}
			if st := l.Stats(); st.InFlight != 0 || st.Window > tc.max || st.Window < 1 {
				t.Errorf("stats at the end: %+v", st)
			}
		})
	}
}

func TestLimiterHalvesOncePerWindow(t *testing.T) {
	t.Parallel()
	l := NewLimiter(64)
	var slots []*Slot
	for range InitialWindow {
		s, ok := l.TryAcquire()
		if !ok {
			t.Fatal("window smaller than InitialWindow")
		}
		slots = append(slots, s)
	}
	if _, ok := l.TryAcquire(); ok {
		t.Fatal("admitted past the window")
	}
	// A whole burst turned away halves the window once.
	for _, s := range slots {
		s.Done(Throttled, 0)
	}
	st := l.Stats()
	if st.Window != InitialWindow/2 || st.Decreases != 1 || st.Throttled != InitialWindow {
		t.Fatalf("after a throttled burst: %+v", st)
	}
	// Done twice counts once.
	slots[0].Done(Throttled, 0)
	if l.Stats().Throttled != InitialWindow {
		t.Fatal("a second Done was counted")
	}
}

func TestLimiterLatencyPausesGrowth(t *testing.T) {
	t.Parallel()
	l := NewLimiter(64)
	// A refusal at level 16 leaves the window probing from 15.
	var slots []*Slot
	for range InitialWindow {
		s, _ := l.TryAcquire()
		slots = append(slots, s)
	}
	slots[InitialWindow-1].Done(Throttled, 0)
	for _, s := range slots[:InitialWindow-1] {
		s.Done(Neutral, 0)
	}
	ok := func(ttfb time.Duration) {
		s, _ := l.TryAcquire()
		s.Done(Succeeded, ttfb)
	}
	for l.Stats().Window < InitialWindow-1 {
		ok(10 * time.Millisecond)
	}
	w := l.Stats().Window
	for range w - 1 {
		ok(10 * time.Millisecond)
	}
	if l.Stats().Window != w {
		t.Fatalf("window grew before a window of successes: %+v", l.Stats())
	}
	ok(100 * time.Millisecond) // the probe's success, but ten times slower
	if l.Stats().Window != w {
		t.Fatalf("a slow success grew the window: %+v", l.Stats())
	}
	ok(10 * time.Millisecond)
	if l.Stats().Window != w+1 {
		t.Fatalf("a fast success did not grow the window: %+v", l.Stats())
	}
}

func TestLimiterQueuesFirstComeFirstServed(t *testing.T) {
	t.Parallel()
	l := NewLimiter(1)
	first, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := l.Acquire(ctx)
		gaveUp <- err
	}()
	got := make(chan *Slot, 1)
	waitFor(t, l, 1)
	go func() {
		s, err := l.Acquire(context.Background())
		if err == nil {
			got <- s
		}
	}()
	waitFor(t, l, 2)
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	if st := l.Stats(); st.Waiting != 1 {
		t.Fatalf("after a waiter gave up: %+v", st)
	}
	first.Done(Succeeded, 0)
	select {
	case s := <-got:
		s.Done(Neutral, 0)
	case <-time.After(10 * time.Second):
		t.Fatal("waiter not admitted after the slot was released")
	}
	if st := l.Stats(); st.InFlight != 0 || st.Waiting != 0 {
		t.Fatalf("at the end: %+v", st)
	}
}

// waitFor waits until n requests are queued at l.
func waitFor(t *testing.T, l *Limiter, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.Stats().Waiting < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiting, want %d", l.Stats().Waiting, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestEndpointLimiterIsShared(t *testing.T) {
	t.Parallel()
	a, b := EndpointLimiter("http://shared.test/chat", 8), EndpointLimiter("http://shared.test/chat", 0)
	if a != b {
		t.Fatal("two limiters for one endpoint")
	}
	if EndpointLimiter("http://other.test/chat", 0) == a {
		t.Fatal("one limiter for two endpoints")
	}
	found := false
	for _, st := range EndpointStats() {
		if st.Endpoint == "http://shared.test/chat" {
			found = st.Max == 8 && st.Window == 8
		}
	}
	if !found {
		t.Fatalf("endpoint stats: %+v", EndpointStats())
	}
}
