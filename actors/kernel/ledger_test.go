package kernel

import (
	"context"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// ledgerAsk and ledgerAnswer are the request and reply of ledgerProbe.
type (
	ledgerAsk    struct{}
	ledgerAnswer struct{}
)

// ledgerProbe asks its target once, through a ledger with the given
// deadline, and reports how the wait ended: failed gets the reason of the
// synthetic reply, settled the real one, stopped each Terminated once the
// ledger has had its look at it.
type ledgerProbe struct {
	l       *Ledger
	target  *actor.PID
	timeout time.Duration
	failed  chan string
	settled chan struct{}
	stopped chan struct{}
}

func (p *ledgerProbe) Receive(c actor.Context) {
	msg := c.Message()
	if p.l.Receive(c, msg) {
		return
	}
	switch msg.(type) {
	case *actor.Started:
		p.l.Request(c, "ask", p.target, &ledgerAsk{}, p.timeout, func(_ actor.Context, why string) { p.failed <- why })
	case *ledgerAnswer:
		if p.l.Settle("ask") {
			p.settled <- struct{}{}
		}
	case *actor.Terminated:
		p.stopped <- struct{}{}
	}
}

// TestLedgerEndsEachWaitOnce: a request its target never answers gets the
// failure reply once its deadline passes, and only once, even when the
// target stops afterwards; a request answered in time never gets it, even
// when its target stops afterwards.
func TestLedgerEndsEachWaitOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		answers bool
		timeout time.Duration
	}{
		{name: "silent target", timeout: 50 * time.Millisecond},
		{name: "answered in time", answers: true, timeout: time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sys := NewSystem(nil)
			target := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if _, ok := c.Message().(*ledgerAsk); ok && tc.answers {
					c.Respond(&ledgerAnswer{})
				}
			}))
			p := &ledgerProbe{l: NewLedger(sys), target: target, timeout: tc.timeout,
				failed: make(chan string, 4), settled: make(chan struct{}, 4), stopped: make(chan struct{}, 4)}
			probe := sys.Root().Spawn(actor.PropsFromProducer(func() actor.Actor { return p }))
			defer func() {
				must(t, sys.Stop(probe, 5*time.Second))
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				must(t, sys.Shutdown(ctx))
			}()
			bound := time.NewTimer(5 * time.Second)
			defer bound.Stop()
			if tc.answers {
				select {
				case <-p.settled:
				case why := <-p.failed:
					t.Fatalf("an answered request failed: %s", why)
				case <-bound.C:
					t.Fatal("the answer never settled the request")
				}
			} else {
				select {
				case why := <-p.failed:
					if want := target.Id + " got no reply in time"; why != want {
						t.Fatalf("failure reply %q, want %q", why, want)
					}
				case <-p.settled:
					t.Fatal("a silent target's request settled")
				case <-bound.C:
					t.Fatal("the deadline passed without a failure reply")
				}
			}
			// The target's end comes after the wait ended: it must not
			// end it a second time.
			must(t, sys.Stop(target, 5*time.Second))
			select {
			case <-p.stopped:
			case <-bound.C:
				t.Fatal("the probe never saw its target stop")
			}
			select {
			case why := <-p.failed:
				t.Fatalf("the wait ended again: %s", why)
			default:
			}
		})
	}
}
