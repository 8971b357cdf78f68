package provider

import (
	"context"
	"errors"
	"testing"
	"time"
)

// windowLender lends slots of a Limiter, as a scheduler's proxy does for
// a worker, and counts what it was given back.
type windowLender struct {
	lim      *Limiter
	refuse   bool
	borrowed int
	outcomes []Outcome
}

func (w *windowLender) Borrow(ctx context.Context, endpoint, key string) (func(Outcome, time.Duration), bool, error) {
	if w.refuse {
		return nil, false, nil
	}
	if !w.lim.KnowsKey(key) {
		return nil, false, nil
	}
	s, err := w.lim.Acquire(ctx)
	if err != nil {
		return nil, false, err
	}
	w.borrowed++
	return func(o Outcome, ttfb time.Duration) {
		w.outcomes = append(w.outcomes, o)
		s.Done(o, ttfb)
	}, true, nil
}

// TestLimiterBorrowsFromTheLender: with a Lender in the context, a slot
// comes from the lender's window and its outcome goes back there; the
// local window is left alone. A lender that keeps no window sends the
// request to the local one, and a full lent window holds the request until
// its context ends.
func TestLimiterBorrowsFromTheLender(t *testing.T) {
	local := NewLimiter(4)
	local.endpoint = "https://api.example/chat/completions"
	shared := NewLimiter(1)
	lender := &windowLender{lim: shared}
	ctx := WithLender(context.Background(), lender)

	s, err := local.AcquireAs(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if st := local.Stats(); st.InFlight != 0 {
		t.Errorf("a borrowed slot counted in the local window: %+v", st)
	}
	if st := shared.Stats(); st.InFlight != 1 || lender.borrowed != 1 {
		t.Errorf("the lender's window: %+v, borrowed %d; want one in flight", st, lender.borrowed)
	}

	// The lent window (1) is full: the next request waits there, and
	// gives up with its context.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := local.AcquireAs(short, "k1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a request over the lent window: %v, want its context's end", err)
	}

	s.Done(Throttled, 0)
	s.Done(Succeeded, 0) // a second Done is ignored
	if len(lender.outcomes) != 1 || lender.outcomes[0] != Throttled {
		t.Errorf("outcomes given back: %v, want [throttled]", lender.outcomes)
	}
	if st := shared.Stats(); st.InFlight != 0 || st.Throttled != 1 {
		t.Errorf("the lender's window after the outcome: %+v", st)
	}

	// Another key does not share a window claimed for k1.
	shared.NoteKey("k1")
	if shared.KnowsKey("k2") {
		t.Error("a window bound to one API key lent a slot to another")
	}

	lender.refuse = true
	s, err = local.AcquireAs(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if st := local.Stats(); st.InFlight != 1 {
		t.Errorf("a request the lender refused is not in the local window: %+v", st)
	}
	s.Done(Succeeded, 0)
}

func TestKeyFingerprint(t *testing.T) {
	a, b := KeyFingerprint("sk-one"), KeyFingerprint("sk-two")
	if len(a) != 12 || a == b || a != KeyFingerprint("sk-one") || KeyFingerprint("") != "" {
		t.Errorf("fingerprints %q %q", a, b)
	}
}
