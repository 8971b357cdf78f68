package event

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"
)

// DefaultHistory is how many of the latest events a bus keeps for
// SubscribeFrom: enough for a frontend that reconnects after a hiccup to
// replay what it missed instead of rebuilding from a snapshot.
const DefaultHistory = 10000

// ErrClosed is what Next returns once its subscription is closed. It
// matches context.Canceled too, which is what Next returned before there
// was a name for it.
var ErrClosed = fmt.Errorf("subscription closed: %w", context.Canceled)

// Bus is the one event stream of a process. Publish never blocks, so an
// actor can publish from Receive. Each subscriber reads at its own pace from
// its own queue: unbounded for a lossless subscriber (stream-json output
// must not miss an event), bounded for an interactive one, which is told
// with a *Lagged event what it missed. The bus also keeps its latest events
// so a frontend that attaches late or reconnects can replay them.
type Bus struct {
	mu   sync.Mutex
	seq  int64
	subs map[*Subscription]struct{}
	now  func() time.Time
	// hist holds the latest published events, oldest first; their seqs are
	// consecutive and the newest is seq.
	hist ring
}

// BusOption configures a Bus.
type BusOption func(*Bus)

// WithHistory sets how many of the latest events the bus keeps for replay
// (DefaultHistory when not given). Zero keeps none: every SubscribeFrom
// into the past then starts with a *Lagged.
func WithHistory(n int) BusOption {
	return func(b *Bus) { b.hist.max = max(n, 0) }
}

// NewBus returns an empty bus.
func NewBus(opts ...BusOption) *Bus {
	b := &Bus{subs: map[*Subscription]struct{}{}, now: time.Now, hist: ring{max: DefaultHistory}}
	for _, o := range opts {
		o(b)
	}
	return b
}

// Publish stamps e with the next sequence number (and the time, unless it
// has one) and queues it for every subscriber. The stamping happens before
// any subscriber can see e, and from then on e belongs to the bus: every
// subscriber reads the same value concurrently, so neither the publisher
// nor anyone else may change it. Publishing an event that already carries
// a sequence number (a re-publish, a relayed event) stamps a shallow copy,
// so the value earlier readers hold stays as they saw it.
func (b *Bus) Publish(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e = unpublished(e)
	b.seq++
	m := e.EventMeta()
	m.Seq = b.seq
	if m.Time.IsZero() {
		m.Time = b.now()
	}
	if b.hist.max > 0 {
		b.hist.push(e)
	}
	for s := range b.subs {
		s.push(e)
	}
}

// unpublished returns e when no bus has stamped it yet, else a shallow copy
// of it with its own Meta. Every event is a pointer to a struct embedding
// Meta, so a copy of the struct is a copy of the event.
func unpublished(e Event) Event {
	if e.EventMeta().Seq == 0 {
		return e
	}
	v := reflect.ValueOf(e)
	if v.Kind() != reflect.Pointer {
		return e
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	return c.Interface().(Event)
}

// LastSeq is the sequence number of the latest published event, 0 before
// the first. A snapshot taken together with it tells a frontend where to
// SubscribeFrom so that snapshot and stream neither overlap nor leave a gap.
func (b *Bus) LastSeq() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seq
}

// Subscribe starts a lossless subscription to every event published from
// now on. Its queue has no bound, so a reader that stops reading holds
// every event since: use it where nothing may be missed, like stream-json
// output, and read it steadily.
func (b *Bus) Subscribe() *Subscription {
	return b.subscribe(-1, 0)
}

// SubscribeBounded starts a subscription to every event published from now
// on that holds at most n unread events (at least 1). When a new event
// arrives at a full queue the oldest unread one is dropped, and the next
// read returns a *Lagged counting every event dropped since the previous
// read, before the events still queued: the reader should then refresh from
// a snapshot or SubscribeFrom. Publishing never waits for it.
func (b *Bus) SubscribeBounded(n int) *Subscription {
	return b.subscribe(-1, max(n, 1))
}

// SubscribeFrom starts a subscription that first delivers every retained
// event with a sequence number above since, in order, then the live stream,
// with no gap or duplicate between the two: the history is copied and the
// subscription registered under the lock Publish holds. When events after
// since are no longer retained, the first read is a *Lagged covering them,
// so the caller knows to fall back to a snapshot. A since beyond LastSeq is
// taken as LastSeq (nothing to replay); a negative one as 0.
//
// limit bounds the queue as for SubscribeBounded, with the replayed events
// counted against it; 0 makes the subscription lossless.
func (b *Bus) SubscribeFrom(since int64, limit int) *Subscription {
	return b.subscribe(max(since, 0), max(limit, 0))
}

// subscribe registers a subscription with the given queue bound (0: none),
// first queueing the retained events after since unless since is negative.
func (b *Bus) subscribe(since int64, limit int) *Subscription {
	s := &Subscription{bus: b, ready: make(chan struct{}, 1)}
	s.queue.max = limit
	b.mu.Lock()
	defer b.mu.Unlock()
	if since >= 0 && since < b.seq {
		oldest := b.seq - int64(b.hist.len()) + 1
		if since+1 < oldest {
			s.dropped(since+1, oldest-1, b.now())
		}
		for i := max(since+1-oldest, 0); i < int64(b.hist.len()); i++ {
			s.enqueue(b.hist.at(int(i)))
		}
	}
	b.subs[s] = struct{}{}
	return s
}

// Subscription is one subscriber's queue. Its methods are safe to call from
// any goroutine, but the events come in order only to one reader at a time.
type Subscription struct {
	bus   *Bus
	mu    sync.Mutex
	queue ring
	// lag accounts for the events dropped since the last read; nil when
	// none were. Drops are always of the oldest queued events, so what was
	// dropped is one run of consecutive seqs just before the queue's head.
	lag    *Lagged
	closed bool
	ready  chan struct{}
}

// push queues e; the bus holds its lock, so pushes arrive in seq order.
func (s *Subscription) push(e Event) {
	s.mu.Lock()
	if !s.closed {
		s.enqueue(e)
	}
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// enqueue adds e to the queue, dropping the oldest queued event when the
// queue is at its bound. The caller holds s.mu or owns s alone.
func (s *Subscription) enqueue(e Event) {
	if old := s.queue.push(e); old != nil {
		seq := old.EventMeta().Seq
		s.dropped(seq, seq, s.bus.now())
	}
}

// dropped records that the events from seq since to until were not
// delivered.
func (s *Subscription) dropped(since, until int64, at time.Time) {
	if s.lag == nil {
		s.lag = &Lagged{SinceSeq: since}
	}
	s.lag.UntilSeq = until
	s.lag.Dropped = s.lag.UntilSeq - s.lag.SinceSeq + 1
	s.lag.Time = at
}

// Next returns the next event, waiting until one arrives, ctx ends or the
// subscription is closed (ErrClosed). After a drop it returns a *Lagged
// first; its Seq is its UntilSeq, so seqs still increase along the stream.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		if l := s.lag; l != nil {
			s.lag = nil
			s.mu.Unlock()
			l.Seq = l.UntilSeq
			return l, nil
		}
		if s.queue.len() > 0 {
			e := s.queue.pop()
			s.mu.Unlock()
			return e, nil
		}
		s.mu.Unlock()
		select {
		case <-s.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close stops the subscription and discards what it had queued; a pending
// Next returns ErrClosed. Closing twice is harmless.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	delete(s.bus.subs, s)
	s.bus.mu.Unlock()
	s.mu.Lock()
	s.closed = true
	s.queue = ring{}
	s.lag = nil
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// ring is a FIFO of events in a circular buffer. It grows on demand up to
// max events (0: without bound), so an idle subscriber costs a few words and
// a bounded one never more than max slots.
type ring struct {
	buf  []Event
	head int
	n    int
	max  int
}

func (r *ring) len() int { return r.n }

// at is the i-th event from the oldest.
func (r *ring) at(i int) Event { return r.buf[(r.head+i)%len(r.buf)] }

// push appends e. When the ring already holds max events it first removes
// the oldest and returns it.
func (r *ring) push(e Event) (evicted Event) {
	if r.max > 0 && r.n == r.max {
		evicted = r.pop()
	}
	if r.n == len(r.buf) {
		size := max(8, 2*len(r.buf))
		if r.max > 0 {
			size = min(size, r.max)
		}
		buf := make([]Event, size)
		for i := range r.n {
			buf[i] = r.at(i)
		}
		r.buf, r.head = buf, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = e
	r.n++
	return evicted
}

// pop removes and returns the oldest event. An unbounded ring that empties
// lets its buffer go, so a reader that once fell far behind does not keep
// the memory of that backlog.
func (r *ring) pop() Event {
	e := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	if r.n == 0 && r.max == 0 && len(r.buf) > 64 {
		r.buf, r.head = nil, 0
	}
	return e
}
