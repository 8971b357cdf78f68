package openai

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Retry and stall defaults, used when the provider config leaves them zero.
const (
	defaultMaxRetries = 4
	defaultRetryBase  = 500 * time.Millisecond
	// retryCap bounds one computed backoff delay.
	retryCap = 20 * time.Second
	// maxRetryAfter bounds how long a server's Retry-After can hold us.
	maxRetryAfter = 60 * time.Second
	defaultStall  = 120 * time.Second
)

// clock is the provider's view of time, replaceable in tests so that
// backoff and Retry-After handling can be checked without waiting.
type clock struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

var realClock = clock{now: time.Now, sleep: sleepCtx}

// sleepCtx waits for d or until ctx ends, whichever is first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backoff is the full-jitter delay before retry number attempt+1: uniform
// in [0, min(limit, base·2^attempt)], which spreads a crowd of clients
// that failed together.
func backoff(attempt int, base, limit time.Duration) time.Duration {
	ceil := limit
	if attempt < 62 {
		if c := base << attempt; c > 0 && c < limit && c>>attempt == base {
			ceil = c
		}
	}
	if ceil <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(ceil) + 1))
}

// parseRetryAfter reads a Retry-After value in either of its forms, delay
// seconds or an HTTP date, capped at maxRetryAfter. ok is false when the
// header is absent or unusable.
func parseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter, true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), maxRetryAfter), true
}

// retryableStatus reports whether a status may succeed on a later try.
func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || (code >= 500 && code <= 599)
}

// retryableError reports whether a transport error (no response at all)
// may succeed on a later try. Certificate problems and unknown hosts will
// not fix themselves in seconds, so they fail at once.
func retryableError(err error) bool {
	var certErr *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &certErr), errors.As(err, &unknownAuthority),
		errors.As(err, &hostname), errors.As(err, &invalid):
		return false
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return false
	}
	return true
}

// gate is the shared backoff of one endpoint: no request is sent to it
// before until.
type gate struct {
	mu    sync.Mutex
	until time.Time
}

// holdUntil closes the gate until t, never shortening an existing hold.
func (g *gate) holdUntil(t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.After(g.until) {
		g.until = t
	}
}

func (g *gate) deadline() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.until
}

// wait blocks until the gate is open or ctx ends. It re-reads the deadline
// after every sleep because another request may have extended it.
func (g *gate) wait(ctx context.Context, clk clock) error {
	for {
		d := g.deadline().Sub(clk.now())
		if d <= 0 {
			return ctx.Err()
		}
		if err := clk.sleep(ctx, d); err != nil {
			return err
		}
	}
}

// gateSet maps a chat URL to its gate. Entries are tiny and a process
// talks to a handful of endpoints, so they are never removed.
type gateSet struct {
	mu    sync.Mutex
	gates map[string]*gate
}

// endpointGates is shared by every Provider in the process, which is what
// makes a fleet of subagents back off together.
var endpointGates = &gateSet{gates: map[string]*gate{}}

func (s *gateSet) get(key string) *gate {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.gates[key]
	if !ok {
		g = &gate{}
		s.gates[key] = g
	}
	return g
}
