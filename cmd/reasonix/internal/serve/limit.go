package serve

import (
	"sync"
	"time"
)

// The login limit: at most perClientFailures failed logins per client and
// globalFailures in all within loginWindow. Past either, logins are
// refused without being checked until the oldest failure leaves the
// window. The global cap stops a guesser spreading over many addresses;
// it can lock the owner out for a minute too, which beats letting a
// password fall.
const (
	loginWindow       = time.Minute
	perClientFailures = 5
	globalFailures    = 30
	// maxTrackedClients bounds the per-client table; past it the clients
	// with the oldest failures are forgotten (the global cap still holds).
	maxTrackedClients = 4096
)

// loginLimit counts failed logins in a sliding window.
type loginLimit struct {
	now func() time.Time

	mu      sync.Mutex
	clients map[string][]time.Time
	all     []time.Time
}

func newLoginLimit(now func() time.Time) *loginLimit {
	if now == nil {
		now = time.Now
	}
	return &loginLimit{now: now, clients: map[string][]time.Time{}}
}

// blocked returns how long client must wait before a login is checked
// again, 0 when it may try now.
func (l *loginLimit) blocked(client string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.prune(now)
	var wait time.Duration
	if fails := l.clients[client]; len(fails) >= perClientFailures {
		wait = fails[len(fails)-perClientFailures].Add(loginWindow).Sub(now)
	}
	if len(l.all) >= globalFailures {
		wait = max(wait, l.all[len(l.all)-globalFailures].Add(loginWindow).Sub(now))
	}
	return max(wait, 0)
}

// fail records a failed login of client.
func (l *loginLimit) fail(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.prune(now)
	l.clients[client] = append(l.clients[client], now)
	l.all = append(l.all, now)
	for len(l.clients) > maxTrackedClients {
		oldest, at := "", now
		for c, fails := range l.clients {
			if last := fails[len(fails)-1]; !last.After(at) {
				oldest, at = c, last
			}
		}
		delete(l.clients, oldest)
	}
}

// prune drops the failures that left the window.
func (l *loginLimit) prune(now time.Time) {
	cut := now.Add(-loginWindow)
	keep := func(ts []time.Time) []time.Time {
		i := 0
		for i < len(ts) && !ts[i].After(cut) {
			i++
		}
		return ts[i:]
	}
	l.all = keep(l.all)
	for c, fails := range l.clients {
		if fails = keep(fails); len(fails) == 0 {
			delete(l.clients, c)
		} else {
			l.clients[c] = fails
		}
	}
}
