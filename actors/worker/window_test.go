package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"

	"reasonix/actors/kernel"
	"reasonix/core/provider"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// mailbox stands in for the job: it hands every slotAsk and slotDone the
// lender sends to the test.
func mailbox(t *testing.T) (*kernel.System, *actor.PID, chan any) {
	t.Helper()
	sys := kernel.NewSystem(nil)
	got := make(chan any, 64)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *slotAsk, *slotDone:
			got <- m
		}
	}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return sys, pid, got
}

func next[T any](t *testing.T, got chan any) T {
	t.Helper()
	select {
	case m := <-got:
		v, ok := m.(T)
		if !ok {
			t.Fatalf("the job got %T %+v, want %T", m, m, v)
		}
		return v
	case <-time.After(10 * time.Second):
		var v T
		t.Fatalf("the job got no %T", v)
		return v
	}
}

// TestBorrowAsksAheadAndKeepsASpare: a request asks the scheduler for a
// slot and waits for the grant; giving it back asks ahead for the next,
// and that grant is kept so the next request takes it without asking.
// A spare nobody takes goes back after the idle time, and closing the
// lender returns what it holds.
func TestBorrowAsksAheadAndKeepsASpare(t *testing.T) {
	sys, pid, got := mailbox(t)
	b := newBorrowed(sys, pid)
	const ep, key = "https://api.example/chat/completions", "k1"

	type borrowed struct {
		done func(provider.Outcome, time.Duration)
		ok   bool
		err  error
	}
	res := make(chan borrowed, 1)
	go func() {
		d, ok, err := b.Borrow(context.Background(), ep, key)
		res <- borrowed{d, ok, err}
	}()
	ask := next[*slotAsk](t, got)
	if ask.endpoint != ep || ask.key != key {
		t.Fatalf("ask %+v", ask)
	}
	b.granted(ask.id, "")
	r := <-res
	if !r.ok || r.err != nil {
		t.Fatalf("borrow: ok %v, %v", r.ok, r.err)
	}
	r.done(provider.Succeeded, time.Millisecond)
	back := next[*slotDone](t, got)
	if back.id != ask.id || back.out != provider.Succeeded || back.next == 0 {
		t.Fatalf("given back %+v, want the slot with an ask ahead", back)
	}

	b.granted(back.next, "")
	done, ok, err := b.Borrow(context.Background(), ep, key)
	if !ok || err != nil {
		t.Fatalf("borrow of the spare: ok %v, %v", ok, err)
	}
	select {
	case m := <-got:
		t.Fatalf("the spare was there, yet the job got %T %+v", m, m)
	default:
	}
	done(provider.Throttled, 0)
	if back := next[*slotDone](t, got); back.id != 2 || back.next != 0 {
		t.Fatalf("a throttled request's slot came back as %+v, want no ask ahead", back)
	}

	// An ask ahead granted while nobody needs it returns after the idle
	// time.
	b.idle = 20 * time.Millisecond
	b.mu.Lock()
	id := b.newID(ep + "\x00" + key)
	b.mu.Unlock()
	b.granted(id, "")
	if back := next[*slotDone](t, got); back.id != id || back.out != provider.Neutral {
		t.Fatalf("an idle spare came back as %+v", back)
	}

	// A request whose context ends gives back the grant it was handed.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _, err := b.Borrow(ctx, ep, key)
		res <- borrowed{err: err}
	}()
	ask = next[*slotAsk](t, got)
	cancel()
	if r := <-res; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("a cancelled borrow: %v", r.err)
	}
	if back := next[*slotDone](t, got); back.id != ask.id {
		t.Fatalf("the cancelled ask was given back as %+v", back)
	}

	// A refusal sends the endpoint to the local window for good.
	go func() {
		d, ok, err := b.Borrow(context.Background(), ep, "k2")
		res <- borrowed{d, ok, err}
	}()
	ask = next[*slotAsk](t, got)
	b.granted(ask.id, "another key")
	if r := <-res; r.ok || r.err != nil {
		t.Fatalf("a refused borrow: ok %v, %v", r.ok, r.err)
	}
	if _, ok, _ := b.Borrow(context.Background(), ep, "k2"); ok {
		t.Fatal("a refused endpoint was asked again")
	}

	// Close returns the spares and lets later requests go local.
	b.idle = time.Hour
	b.mu.Lock()
	id = b.newID(ep + "\x00" + key)
	b.mu.Unlock()
	b.granted(id, "")
	b.close()
	if back := next[*slotDone](t, got); back.id != id {
		t.Fatalf("close gave back %+v, want the spare %d", back, id)
	}
	if _, ok, _ := b.Borrow(context.Background(), ep, key); ok {
		t.Fatal("a closed lender lent a slot")
	}
}
