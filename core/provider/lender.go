package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Lender lends slots of an endpoint window that another process keeps. A
// worker's subagent borrows from the window of the scheduler that placed
// its task, so the scheduler and all its workers on one endpoint and key
// stay under one limit instead of each probing it with a window of its
// own.
type Lender interface {
	// Borrow waits for a slot of the lender's window of endpoint for the
	// API key whose fingerprint is key (KeyFingerprint). done gives the
	// slot back with the request's outcome and time to first byte, and
	// must be called exactly once. ok is false when the lender keeps no
	// shared window for that endpoint and key (or can no longer lend):
	// the caller uses its own window. err is the context's end.
	Borrow(ctx context.Context, endpoint, key string) (done func(Outcome, time.Duration), ok bool, err error)
}

type lenderKey struct{}

// WithLender returns a context whose endpoint-limited requests borrow
// their slots from l rather than from the process's own window.
func WithLender(ctx context.Context, l Lender) context.Context {
	return context.WithValue(ctx, lenderKey{}, l)
}

func lenderFrom(ctx context.Context) Lender {
	l, _ := ctx.Value(lenderKey{}).(Lender)
	return l
}

// KeyFingerprint names an API key without revealing it: the first 12 hex
// digits of its SHA-256, enough to tell two keys apart and useless for
// recovering either. The empty key has the empty fingerprint.
func KeyFingerprint(apiKey string) string {
	if apiKey == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(apiKey))
	return hex.EncodeToString(sum[:6])
}

// Lending wraps p so that every request it makes borrows its endpoint
// slot from l.
func Lending(p Provider, l Lender) Provider {
	if l == nil {
		return p
	}
	return &lending{Provider: p, lender: l}
}

type lending struct {
	Provider
	lender Lender
}

// Stream implements Provider.
func (p *lending) Stream(ctx context.Context, req Request) (<-chan Chunk, error) {
	return p.Provider.Stream(WithLender(ctx, p.lender), req)
}

// Unwrap returns the wrapped provider.
func (p *lending) Unwrap() Provider { return p.Provider }

// KnowsKey reports whether a borrower with key may share this window: a
// window no local provider has claimed for a key is shared by whoever
// borrows first.
func (l *Limiter) KnowsKey(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.keys) == 0 {
		l.keys = map[string]bool{key: true}
		return true
	}
	return l.keys[key]
}

// NoteKey records that a provider of this process whose API key has
// fingerprint key uses this window, so a borrower with another key is
// sent back to its own.
func (l *Limiter) NoteKey(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.keys == nil {
		l.keys = map[string]bool{}
	}
	l.keys[key] = true
}

// borrow asks ctx's lender for a slot of the endpoint's shared window
// for key. ok is false when there is no lender or it keeps no window for
// this endpoint and key.
func (l *Limiter) borrow(ctx context.Context, key string) (*Slot, bool, error) {
	lender := lenderFrom(ctx)
	if lender == nil || l.endpoint == "" {
		return nil, false, nil
	}
	done, ok, err := lender.Borrow(ctx, l.endpoint, key)
	if err != nil || !ok {
		return nil, false, err
	}
	return &Slot{remote: done}, true, nil
}
