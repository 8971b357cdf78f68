package worker

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/kernel"
	"reasonix/actors/remote"
	"reasonix/core/provider"
)

// spareIdle is how long a slot granted ahead of a request (SlotDone.Next)
// is kept for the attempt's next request before it goes back to the
// scheduler's window: longer than the tool runs between most model
// requests, short enough that an agent in a long build does not hold a
// slot its siblings could use.
const spareIdle = 250 * time.Millisecond

// borrowed is a job's provider.Lender: each model request of the attempt
// takes a slot of the scheduler's window of the endpoint (remote.SlotAsk),
// so that this worker, its peers and the scheduler itself stay under one
// limit per endpoint and key instead of each probing it with a window of
// its own. When a request ends, the job asks ahead for the next one in the
// same message that gives the slot back, so an agent's next request finds
// its slot here instead of waiting for a round trip to the scheduler.
//
// Borrow runs on the provider's goroutine; everything that crosses the
// process boundary goes through the job's mailbox (slotAsk, slotDone),
// and the answers come back to granted from there.
type borrowed struct {
	sys  *kernel.System
	job  *actor.PID
	idle time.Duration

	mu   sync.Mutex
	next uint64
	// pairOf is the endpoint and key of every id asked and not answered.
	pairOf map[uint64]string
	// waiting are the Borrows waiting for a grant, first come first
	// served, and pool the grants nobody waited for, by pair.
	waiting map[string][]chan grant
	pool    map[string][]*spare
	// refused are the pairs the scheduler keeps no window for: their
	// requests use this process's own.
	refused map[string]bool
	closed  chan struct{}
	stopped bool
}

type grant struct {
	id      uint64
	refused string
}

// spare is a grant kept for the attempt's next request.
type spare struct {
	id    uint64
	timer *time.Timer
}

// slotAsk and slotDone carry a Borrow to the job, which sends them on to
// the task's proxy.
type (
	slotAsk struct {
		id            uint64
		endpoint, key string
	}
	slotDone struct {
		id, next uint64
		out      provider.Outcome
		ttfb     time.Duration
	}
)

func newBorrowed(sys *kernel.System, job *actor.PID) *borrowed {
	return &borrowed{sys: sys, job: job, idle: spareIdle, pairOf: map[uint64]string{}, waiting: map[string][]chan grant{},
		pool: map[string][]*spare{}, refused: map[string]bool{}, closed: make(chan struct{})}
}

// Borrow implements provider.Lender: a spare slot of the endpoint if one
// is here, else the scheduler's next grant for it. It waits until ctx
// ends or the job stops; a request that gives up returns whatever grant
// it was handed, so no slot of the scheduler's is kept.
func (b *borrowed) Borrow(ctx context.Context, endpoint, key string) (func(provider.Outcome, time.Duration), bool, error) {
	pair := endpoint + "\x00" + key
	b.mu.Lock()
	if b.stopped || b.refused[pair] {
		b.mu.Unlock()
		return nil, false, nil
	}
	if n := len(b.pool[pair]); n > 0 {
		sp := b.pool[pair][0]
		b.pool[pair] = b.pool[pair][1:]
		sp.timer.Stop() // expire finds it gone from the pool if it fired
		b.mu.Unlock()
		return b.giveBack(sp.id, pair), true, nil
	}
	ch := make(chan grant, 1)
	b.waiting[pair] = append(b.waiting[pair], ch)
	id := b.newID(pair)
	b.mu.Unlock()
	b.sys.Send(b.job, &slotAsk{id: id, endpoint: endpoint, key: key})
	var end error
	select {
	case g := <-ch:
		if g.refused != "" {
			b.mu.Lock()
			b.refused[pair] = true
			b.mu.Unlock()
			return nil, false, nil
		}
		return b.giveBack(g.id, pair), true, nil
	case <-ctx.Done():
		end = ctx.Err()
	case <-b.closed:
		// The job is ending: the request goes through the local window.
	}
	// Withdrawn: the ask goes back (the scheduler stops waiting for it,
	// or returns its slot if it had granted it), and so does a grant
	// handed to this request in the meantime.
	b.mu.Lock()
	handed := !b.dropWaiter(pair, ch)
	_, open := b.pairOf[id]
	delete(b.pairOf, id)
	b.mu.Unlock()
	if open {
		b.sys.Send(b.job, &slotDone{id: id})
	}
	if handed {
		if g := <-ch; g.refused == "" {
			b.sys.Send(b.job, &slotDone{id: g.id})
		}
	}
	return nil, false, end
}

// newID numbers an ask of pair. b.mu is held.
func (b *borrowed) newID(pair string) uint64 {
	b.next++
	b.pairOf[b.next] = pair
	return b.next
}

// dropWaiter removes ch from pair's waiters; false when a grant was
// handed to it first. b.mu is held.
func (b *borrowed) dropWaiter(pair string, ch chan grant) bool {
	ws := b.waiting[pair]
	i := slices.Index(ws, ch)
	if i < 0 {
		return false
	}
	b.waiting[pair] = slices.Delete(ws, i, i+1)
	return true
}

// giveBack is the done of a granted slot: it returns the slot with the
// outcome and, unless the request was throttled (its retry should queue
// behind the others) or the job is ending, asks ahead for the next one.
func (b *borrowed) giveBack(id uint64, pair string) func(provider.Outcome, time.Duration) {
	return func(out provider.Outcome, ttfb time.Duration) {
		var next uint64
		b.mu.Lock()
		if !b.stopped && out != provider.Throttled {
			next = b.newID(pair)
		}
		b.mu.Unlock()
		b.sys.Send(b.job, &slotDone{id: id, out: out, ttfb: ttfb, next: next})
	}
}

// granted takes the scheduler's answer to an ask: to the first Borrow
// waiting for that endpoint, else into the pool for spareIdle. A grant
// nothing can use goes straight back.
func (b *borrowed) granted(id uint64, refused string) {
	b.mu.Lock()
	pair, asked := b.pairOf[id]
	delete(b.pairOf, id)
	if asked {
		if ws := b.waiting[pair]; len(ws) > 0 {
			ch := ws[0]
			b.waiting[pair] = ws[1:]
			b.mu.Unlock()
			ch <- grant{id: id, refused: refused}
			return
		}
		if refused != "" {
			b.refused[pair] = true
		}
	}
	if refused != "" {
		b.mu.Unlock()
		return
	}
	if !asked || b.stopped {
		b.mu.Unlock()
		b.sys.Send(b.job, &slotDone{id: id})
		return
	}
	sp := &spare{id: id}
	sp.timer = time.AfterFunc(b.idle, func() { b.expire(pair, sp) })
	b.pool[pair] = append(b.pool[pair], sp)
	b.mu.Unlock()
}

// expire returns a spare nobody took within b.idle.
func (b *borrowed) expire(pair string, sp *spare) {
	b.mu.Lock()
	i := slices.Index(b.pool[pair], sp)
	if i >= 0 {
		b.pool[pair] = slices.Delete(b.pool[pair], i, i+1)
	}
	b.mu.Unlock()
	if i >= 0 {
		b.sys.Send(b.job, &slotDone{id: sp.id})
	}
}

// close ends every wait and returns the spares; later Borrows use the
// local window.
func (b *borrowed) close() {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return
	}
	b.stopped = true
	close(b.closed)
	var back []uint64
	for pair, sps := range b.pool {
		for _, sp := range sps {
			sp.timer.Stop()
			back = append(back, sp.id)
		}
		delete(b.pool, pair)
	}
	b.mu.Unlock()
	for _, id := range back {
		b.sys.Send(b.job, &slotDone{id: id})
	}
}

// onSlot handles the job's side of a borrow: asks and returns go to the
// proxy, grants to the lender. It reports whether m was one.
func (j *job) onSlot(c actor.Context, m any) bool {
	switch m := m.(type) {
	case *slotAsk:
		if j.muted() || j.spec.proxy == nil {
			j.lender.granted(m.id, "the scheduler gave the attempt up")
			return true
		}
		remote.SendWorker(j.sys, c, j.spec.proxy, &remote.SlotAsk{Task: j.spec.task.ID, Attempt: j.spec.attempt, ID: m.id,
			Endpoint: m.endpoint, Key: m.key})
	case *slotDone:
		if !j.muted() && j.spec.proxy != nil {
			remote.SendWorker(j.sys, c, j.spec.proxy, &remote.SlotDone{Task: j.spec.task.ID, Attempt: j.spec.attempt, ID: m.id,
				Outcome: m.out, TTFB: m.ttfb, Next: m.next})
		}
	case *remote.SlotGrant:
		if j.lender != nil {
			j.lender.granted(m.ID, m.Refused)
		}
	default:
		return false
	}
	return true
}
