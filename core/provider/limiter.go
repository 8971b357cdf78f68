package provider

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Limiter defaults. DefaultMaxInFlight is the window's ceiling when the
// config sets none: a whole fleet plus the parent. InitialWindow is where
// a new endpoint starts, so a provider with a low concurrency limit turns
// away at most the difference instead of a whole fleet's first burst.
const (
	DefaultMaxInFlight = 64
	InitialWindow      = 16
	// maxProbeShift bounds how far repeated losses at the same level
	// stretch the wait before the next probe (2^6 windows of successes).
	maxProbeShift = 6
)

// Outcome is how one request that held a Limiter slot ended.
type Outcome int

// The outcomes a slot can report.
const (
	// Neutral is any ending that says nothing about the endpoint's
	// capacity: a cancelled request, a transport error, a 4xx.
	Neutral Outcome = iota
	// Succeeded is a request the endpoint accepted and answered.
	Succeeded
	// Throttled is a 429 or 503: the endpoint is over its limit.
	Throttled
)

// Limiter is the adaptive concurrency window of one provider endpoint,
// shared by every agent of the process that talks to it. It admits a
// request while fewer than Window requests are in flight and adapts the
// window by additive increase, multiplicative decrease: a throttled reply
// halves it (once per window: replies to requests sent under an older
// window do not halve it again) and sets the level the window climbs
// back to quickly; past that level it grows by one per window of
// successes, and each further loss at the same level doubles that wait,
// so a fleet pressing on a hard limit probes it a logarithmic number of
// times. While probing, a success whose time to the first byte is more
// than twice the recent average does not count towards growth: the soft
// sign of a queue building at the endpoint. Waiting
// requests are admitted first come, first served. It is safe for
// concurrent use.
type Limiter struct {
	mu       sync.Mutex
	max      int
	window   int
	inFlight int
	waiters  []*waiter
	// epoch advances on every decrease; a slot remembers the epoch it
	// was admitted in.
	epoch uint64
	// recover is the window below which each success adds one (the
	// ceiling until the first refusal, then just below the level that was
	// refused); edge is the lowest level a throttled request was admitted
	// at since the window last grew past it, and shift the doubling of the
	// probe interval.
	recover int
	edge    int
	shift   int
	okRun   int
	// avgTTF is a moving average of the time to the first byte.
	avgTTF time.Duration
	// throttled counts Throttled outcomes, decreases the halvings.
	throttled int64
	decreases int64
	// peakClean is the highest level at which a request succeeded, and
	// store the learned-limits file the limiter started from (learned.go).
	peakClean int
	store     string
	// okAt and refusedAt count successes and refusals by the level each
	// request was admitted at (index capped at max), for learnedLimit.
	okAt, refusedAt []int
	// endpoint is the key the limiter is registered under (empty for
	// one made by NewLimiter), and keys the API key fingerprints of the
	// providers that use it (lender.go).
	endpoint string
	keys     map[string]bool
}

type waiter struct {
	ready chan struct{}
	slot  *Slot
}

// NewLimiter returns a limiter whose window starts at min(max,
// InitialWindow) and never exceeds max; max <= 0 means
// DefaultMaxInFlight.
func NewLimiter(max int) *Limiter {
	if max <= 0 {
		max = DefaultMaxInFlight
	}
	return &Limiter{max: max, window: min(max, InitialWindow), recover: max}
}

// Slot is one admitted request. Done must be called exactly once.
type Slot struct {
	l     *Limiter
	epoch uint64
	// level is the number in flight once this slot was admitted.
	level int
	once  sync.Once
	// remote, when set, gives back a slot borrowed from another
	// process's window (Lender) instead of this limiter's.
	remote func(Outcome, time.Duration)
}

// Acquire waits until the window admits one more request or ctx ends.
func (l *Limiter) Acquire(ctx context.Context) (*Slot, error) {
	return l.AcquireAs(ctx, "")
}

// AcquireAs is Acquire for a provider whose API key has fingerprint key
// (KeyFingerprint). When ctx carries a Lender (WithLender) that keeps a
// window for the endpoint and key, the slot is borrowed from it and this
// limiter is left alone.
func (l *Limiter) AcquireAs(ctx context.Context, key string) (*Slot, error) {
	if s, ok, err := l.borrow(ctx, key); ok || err != nil {
		return s, err
	}
	l.mu.Lock()
	if len(l.waiters) == 0 && l.inFlight < l.window {
		s := l.admitLocked()
		l.mu.Unlock()
		return s, nil
	}
	w := &waiter{ready: make(chan struct{})}
	l.waiters = append(l.waiters, w)
	l.mu.Unlock()
	select {
	case <-w.ready:
		return w.slot, nil
	case <-ctx.Done():
		l.mu.Lock()
		granted := w.slot != nil
		if !granted {
			for i, x := range l.waiters {
				if x == w {
					l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
					break
				}
			}
		}
		l.mu.Unlock()
		if granted {
			w.slot.Done(Neutral, 0)
		}
		return nil, ctx.Err()
	}
}

// TryAcquire admits a request if the window has room now and nobody is
// waiting ahead of it.
func (l *Limiter) TryAcquire() (*Slot, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.waiters) == 0 && l.inFlight < l.window {
		return l.admitLocked(), true
	}
	return nil, false
}

func (l *Limiter) admitLocked() *Slot {
	l.inFlight++
	return &Slot{l: l, epoch: l.epoch, level: l.inFlight}
}

// wakeLocked admits waiters while the window has room.
func (l *Limiter) wakeLocked() {
	for len(l.waiters) > 0 && l.inFlight < l.window {
		w := l.waiters[0]
		l.waiters = l.waiters[1:]
		w.slot = l.admitLocked()
		close(w.ready)
	}
}

// Done releases the slot and feeds its outcome to the window. ttfb is the
// time the request took to its first byte, zero when unknown. Calls after
// the first are ignored.
func (s *Slot) Done(out Outcome, ttfb time.Duration) {
	if s == nil {
		return
	}
	if s.remote != nil {
		s.once.Do(func() { s.remote(out, ttfb) })
		return
	}
	s.once.Do(func() { s.l.done(s, out, ttfb) })
}

func (l *Limiter) done(s *Slot, out Outcome, ttfb time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
	switch out {
	case Throttled:
		l.throttled++
		l.count(&l.refusedAt, s.level)
		again := l.edge > 0
		// The lowest level turned away is the best guess of the limit,
		// whichever reply of a burst arrives first.
		if l.edge == 0 || s.level < l.edge {
			l.edge = s.level
		}
		l.recover = max(1, min(l.recover, l.edge-1))
		if s.epoch == l.epoch {
			l.epoch++
			l.decreases++
			l.window = max(1, l.window/2)
			l.okRun = 0
			if again {
				l.shift = min(l.shift+1, maxProbeShift)
			}
		}
	case Succeeded:
		l.peakClean = max(l.peakClean, s.level)
		l.count(&l.okAt, s.level)
		slow := false
		if ttfb > 0 {
			slow = l.avgTTF > 0 && ttfb > 2*l.avgTTF
			if l.avgTTF == 0 {
				l.avgTTF = ttfb
			} else {
				l.avgTTF += (ttfb - l.avgTTF) / 8
			}
		}
		switch {
		case l.window < l.recover:
			l.window++
			l.okRun = 0
		case slow:
		case l.okRun+1 >= l.window<<l.shift:
			l.window++
			l.okRun = 0
			if l.edge > 0 && l.window > l.edge {
				// A whole window got through past the level that was
				// turned away: the limit moved up, so probing starts
				// afresh from here.
				l.edge, l.shift = 0, 0
			}
		default:
			l.okRun++
		}
		l.window = min(l.window, l.max)
	}
	l.wakeLocked()
}

// count adds one to (*at)[level], the slice grown to the ceiling on first
// use and levels past it counted at it.
func (l *Limiter) count(at *[]int, level int) {
	if *at == nil {
		*at = make([]int, l.max+1)
	}
	(*at)[min(max(level, 0), len(*at)-1)]++
}

// learnedLimit is the highest level at which the endpoint accepted more
// requests than it turned away, and at least two: what it takes, read
// from many requests rather than from the one lowest refusal, which a
// request that is ending (gone for the endpoint, still counted here) can
// put far below the limit. Zero when no level qualifies. l.mu is held.
func (l *Limiter) learnedLimit() int {
	for lv := len(l.okAt) - 1; lv > 0; lv-- {
		refused := 0
		if lv < len(l.refusedAt) {
			refused = l.refusedAt[lv]
		}
		if l.okAt[lv] >= 2 && l.okAt[lv] > refused {
			return lv
		}
	}
	return 0
}

// LimiterStats is a snapshot of one endpoint's limiter.
type LimiterStats struct {
	// Endpoint is the chat URL the limiter guards.
	Endpoint string `json:"endpoint"`
	// Window is how many requests may be in flight now; Max its ceiling.
	Window int `json:"window"`
	Max    int `json:"max"`
	// InFlight and Waiting count admitted and queued requests.
	InFlight int `json:"in_flight"`
	Waiting  int `json:"waiting"`
	// Throttled counts 429 and 503 replies; Decreases the halvings they
	// caused.
	Throttled int64 `json:"throttled"`
	Decreases int64 `json:"decreases"`
}

// Stats returns the limiter's current state.
func (l *Limiter) Stats() LimiterStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return LimiterStats{Window: l.window, Max: l.max, InFlight: l.inFlight, Waiting: len(l.waiters),
		Throttled: l.throttled, Decreases: l.decreases}
}

var (
	limMu    sync.Mutex
	limiters = map[string]*Limiter{}
)

// EndpointLimiter returns the process-wide limiter of an endpoint,
// creating it with ceiling max on first use (a later, different max
// raises or lowers the ceiling). Every provider instance that talks to
// the endpoint shares it, which is what makes the main session, a
// planner and all subagents back off together. After UseLearned, a new
// limiter starts from what earlier processes learned of the endpoint.
func EndpointLimiter(endpoint string, max int) *Limiter {
	limMu.Lock()
	defer limMu.Unlock()
	l, ok := limiters[endpoint]
	if !ok {
		l = NewLimiter(max)
		l.endpoint = endpoint
		if rec, path := learnedFor(endpoint); path != "" {
			l.store = path
			l.window, l.recover, l.edge = startFrom(rec, time.Since(rec.Updated), l.max)
			if l.edge > 0 {
				// A known limit: the first probe past it waits two
				// windows of successes, not one.
				l.shift = 1
			}
		}
		limiters[endpoint] = l
		return l
	}
	if max > 0 {
		l.mu.Lock()
		if max != l.max {
			l.max = max
			l.window = min(l.window, max)
			l.recover = min(l.recover, max)
		}
		l.mu.Unlock()
	}
	return l
}

// Endpointer is implemented by a Provider whose requests go through an
// EndpointLimiter; Endpoint is the key it is registered under.
type Endpointer interface {
	Endpoint() string
}

// LookupLimiter returns the endpoint's limiter, or nil when no provider
// of the process has talked to it.
func LookupLimiter(endpoint string) *Limiter {
	limMu.Lock()
	defer limMu.Unlock()
	return limiters[endpoint]
}

// EndpointStats returns a snapshot of every endpoint limiter of the
// process, sorted by endpoint.
func EndpointStats() []LimiterStats {
	limMu.Lock()
	keys := make([]string, 0, len(limiters))
	for k := range limiters {
		keys = append(keys, k)
	}
	ls := make([]*Limiter, 0, len(keys))
	sort.Strings(keys)
	for _, k := range keys {
		ls = append(ls, limiters[k])
	}
	limMu.Unlock()
	out := make([]LimiterStats, 0, len(ls))
	for i, l := range ls {
		st := l.Stats()
		st.Endpoint = keys[i]
		out = append(out, st)
	}
	return out
}
