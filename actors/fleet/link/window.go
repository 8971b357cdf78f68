package link

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/remote"
	"reasonix/core/provider"
)

// lent is the scheduler's end of the endpoint slots one remote attempt
// borrows (remote.SlotAsk): each ask is admitted by this process's window
// of the endpoint, in turn with the scheduler's own requests, and held
// until the worker gives it back with the request's outcome, which the
// window learns from as from a local request. So a scheduler and all its
// workers on one endpoint and key stay under one limit.
type lent struct {
	// ctx ends the waits of asks not yet admitted; cancel runs when the
	// attempt is answered or the proxy stops.
	ctx    context.Context
	cancel context.CancelFunc
	// held are the admitted slots by ask id; waiting the asks whose
	// admission is still waited for, false once the worker gave the slot
	// back before it was granted; limOf the window and key of every ask,
	// for the asks ahead (SlotDone.Next) that follow it.
	held    map[uint64]*provider.Slot
	waiting map[uint64]bool
	limOf   map[uint64]lentFrom
}

type lentFrom struct {
	lim *provider.Limiter
	key string
}

// slotAdmitted is the end of one ask's wait for the window.
type slotAdmitted struct {
	id   uint64
	slot *provider.Slot
	err  error
}

func (p *remoteTask) lending() *lent {
	if p.lent == nil {
		ctx, cancel := context.WithCancel(context.Background())
		p.lent = &lent{ctx: ctx, cancel: cancel, held: map[uint64]*provider.Slot{}, waiting: map[uint64]bool{},
			limOf: map[uint64]lentFrom{}}
	}
	return p.lent
}

// onSlotAsk admits one request of the worker through this process's window
// of the endpoint: at once when it has room, else on a goroutine that
// waits (the mailbox never blocks), answered by slotAdmitted.
func (p *remoteTask) onSlotAsk(c actor.Context, m *remote.SlotAsk) {
	if p.done || !p.spec.Start.LendWindow {
		p.forward(c, &remote.SlotGrant{Task: p.id(), Attempt: p.attempt(), ID: m.ID, Refused: "the attempt has ended"})
		return
	}
	w := p.lending()
	if _, dup := w.held[m.ID]; dup || w.waiting[m.ID] {
		return
	}
	lim := provider.EndpointLimiter(m.Endpoint, 0)
	if !lim.KnowsKey(m.Key) {
		p.forward(c, &remote.SlotGrant{Task: p.id(), Attempt: p.attempt(), ID: m.ID, Refused: "the scheduler uses another API key for " + m.Endpoint})
		return
	}
	w.limOf[m.ID] = lentFrom{lim: lim, key: m.Key}
	if s, ok := lim.TryAcquire(); ok {
		p.grant(c, m.ID, s)
		return
	}
	w.waiting[m.ID] = true
	sys, self, ctx, id := p.sys, c.Self(), w.ctx, m.ID
	sys.Go(func() {
		s, err := lim.Acquire(ctx)
		sys.Send(self, &slotAdmitted{id: id, slot: s, err: err})
	}, func(reason any, _ []byte) {
		sys.Send(self, &slotAdmitted{id: id, err: fmt.Errorf("slot wait panicked: %v", reason)})
	})
}

func (p *remoteTask) onSlotAdmitted(c actor.Context, m *slotAdmitted) {
	w := p.lending()
	pending, asked := w.waiting[m.id]
	delete(w.waiting, m.id)
	if !asked || !pending || p.done {
		// Given back while it waited, or the attempt ended: the slot
		// goes back to the window unused.
		m.slot.Done(provider.Neutral, 0)
		return
	}
	if m.err != nil {
		delete(w.limOf, m.id)
		p.forward(c, &remote.SlotGrant{Task: p.id(), Attempt: p.attempt(), ID: m.id, Refused: m.err.Error()})
		return
	}
	p.grant(c, m.id, m.slot)
}

func (p *remoteTask) grant(c actor.Context, id uint64, s *provider.Slot) {
	p.lending().held[id] = s
	p.forward(c, &remote.SlotGrant{Task: p.id(), Attempt: p.attempt(), ID: id})
}

// onSlotDone gives a slot back with the worker's outcome (an ask still
// waiting is withdrawn), then grants the ask ahead if the window has room
// for it now; one that would have to wait is not answered, and the
// worker's next request asks for itself.
func (p *remoteTask) onSlotDone(c actor.Context, m *remote.SlotDone) {
	w := p.lending()
	from := w.limOf[m.ID]
	delete(w.limOf, m.ID)
	if s, ok := w.held[m.ID]; ok {
		delete(w.held, m.ID)
		s.Done(m.Outcome, m.TTFB)
	} else if w.waiting[m.ID] {
		w.waiting[m.ID] = false
	}
	if m.Next == 0 || p.done || from.lim == nil {
		return
	}
	if _, dup := w.held[m.Next]; dup || w.waiting[m.Next] {
		return
	}
	if s, ok := from.lim.TryAcquire(); ok {
		w.limOf[m.Next] = from
		p.grant(c, m.Next, s)
	}
}

// releaseSlots gives every held slot back unused and ends the waits: the
// attempt is over (answered, lost or stopped), so whatever the worker still
// runs of it no longer counts against the window.
func (p *remoteTask) releaseSlots() {
	if p.lent == nil {
		return
	}
	p.lent.cancel()
	for id, s := range p.lent.held {
		s.Done(provider.Neutral, 0)
		delete(p.lent.held, id)
	}
}
