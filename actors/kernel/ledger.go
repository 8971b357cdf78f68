package kernel

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Ledger is an actor's record of the requests it is waiting on: for each,
// the target, a deadline, and how to make the reply the actor uses when the
// real one can never come. An entry ends exactly once: by its reply
// (settle), by the target's termination (the ledger watches every target),
// by a dead letter (a request that reached no actor), or by its deadline.
// It is what OTP's monitored call and Akka's ask-with-timeout give, so
// that a request to a dead or silent actor never waits forever.
//
// A ledger belongs to one actor and is used only from its Receive.
type Ledger struct {
	sys     *System
	entries map[string]*pendingRequest
}

// pendingRequest is one entry of a ledger.
type pendingRequest struct {
	id     string
	target *actor.PID
	timer  *time.Timer
	// fail builds and handles the synthetic reply; why says what ended the
	// wait ("stopped", "timed out after 5s", …).
	fail func(c actor.Context, why string)
}

// noReplyInTime is how a wait that reached its deadline ends.
const noReplyInTime = "got no reply in time"

// Expired reports whether why, the reason a ledger gave a failed wait,
// says it reached its deadline (rather than that the target stopped).
func Expired(why string) bool { return strings.HasSuffix(why, noReplyInTime) }

// requestExpired is the ledger's own deadline message.
type requestExpired struct{ id string }

// NewLedger is an empty ledger whose checks of liveness use sys.
func NewLedger(sys *System) *Ledger {
	return &Ledger{sys: sys, entries: map[string]*pendingRequest{}}
}

// Request sends msg to target as a request and records it under id. When
// timeout is positive the wait ends after it; fail runs (on the actor's
// mailbox) if the wait ends without a reply. An id already pending is a
// bug in the caller: the old entry is failed first so it still ends once.
func (l *Ledger) Request(c actor.Context, id string, target *actor.PID, msg any, timeout time.Duration, fail func(c actor.Context, why string)) {
	if old, ok := l.entries[id]; ok {
		l.end(c, old, "replaced by a newer request with the same id")
	}
	p := &pendingRequest{id: id, target: target, fail: fail}
	l.entries[id] = p
	if target == nil {
		l.end(c, p, "no actor to ask")
		return
	}
	c.Watch(target)
	if timeout > 0 {
		sys, self := l.sys, c.Self()
		p.timer = time.AfterFunc(timeout, func() { sys.Send(self, &requestExpired{id: id}) })
	}
	c.Request(target, msg)
}

// Settle records that id's reply arrived. It reports false for a reply
// that is no longer awaited (late, duplicate, or already failed), which
// the caller must then ignore.
func (l *Ledger) Settle(id string) bool {
	p, ok := l.entries[id]
	if !ok {
		return false
	}
	delete(l.entries, id)
	if p.timer != nil {
		p.timer.Stop()
	}
	return true
}

// Pending reports whether id is still awaited.
func (l *Ledger) Pending(id string) bool {
	_, ok := l.entries[id]
	return ok
}

// Receive handles the messages that end waits: the ledger's deadlines, the
// termination of a target and dead letters. It reports whether msg was a
// deadline or a dead letter, which belong to the ledger alone; a
// Terminated is still the actor's to handle as well.
func (l *Ledger) Receive(c actor.Context, msg any) bool {
	switch m := msg.(type) {
	case *requestExpired:
		if p, ok := l.entries[m.id]; ok {
			l.end(c, p, noReplyInTime)
		}
		return true
	case *actor.Terminated:
		if m.Who != nil {
			l.endWhere(c, func(p *pendingRequest) bool { return p.target.Equal(m.Who) }, "stopped before replying")
		}
		return false
	case *actor.DeadLetterResponse:
		// protoactor does not say which target was missing: end every
		// wait whose target is no longer registered.
		l.endWhere(c, func(p *pendingRequest) bool { return !l.alive(p.target) }, "is not running")
		return true
	}
	return false
}

// Reconcile ends every wait whose target is no longer running: a repair
// calls it because the Terminated that would have ended them may be the
// very message whose handler crashed.
func (l *Ledger) Reconcile(c actor.Context) {
	l.endWhere(c, func(p *pendingRequest) bool { return !l.alive(p.target) }, "is not running")
}

// DropAll forgets every wait without failing it (the actor is going away
// and its own repair already answered everyone).
func (l *Ledger) DropAll() {
	for id, p := range l.entries {
		if p.timer != nil {
			p.timer.Stop()
		}
		delete(l.entries, id)
	}
}

func (l *Ledger) endWhere(c actor.Context, match func(*pendingRequest) bool, why string) {
	var ids []string
	for id, p := range l.entries {
		if match(p) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		if p, ok := l.entries[id]; ok {
			l.end(c, p, why)
		}
	}
}

func (l *Ledger) end(c actor.Context, p *pendingRequest, why string) {
	delete(l.entries, p.id)
	if p.timer != nil {
		p.timer.Stop()
	}
	who := "the target"
	if p.target != nil {
		who = p.target.Id
	}
	p.fail(c, fmt.Sprintf("%s %s", who, why))
}

func (l *Ledger) alive(pid *actor.PID) bool {
	if pid == nil {
		return false
	}
	return l.sys.Alive(pid.Id)
}
