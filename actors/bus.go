package actors

import (
	"context"
	"sync"
	"time"
)

// Bus is the one event stream of a process. Publish never blocks, so an
// actor can publish from Receive; each subscriber has its own unbounded
// queue and reads at its own pace.
type Bus struct {
	mu   sync.Mutex
	seq  int64
	subs map[*Subscription]struct{}
	now  func() time.Time
}

// NewBus returns an empty bus.
func NewBus() *Bus {
	return &Bus{subs: map[*Subscription]struct{}{}, now: time.Now}
}

// Publish stamps e with the next sequence number and the time and queues it
// for every subscriber.
func (b *Bus) Publish(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	m := e.meta()
	m.Seq = b.seq
	if m.Time.IsZero() {
		m.Time = b.now()
	}
	for s := range b.subs {
		s.push(e)
	}
}

// Subscribe starts receiving every event published from now on.
func (b *Bus) Subscribe() *Subscription {
	s := &Subscription{bus: b, ready: make(chan struct{}, 1)}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Subscription is one subscriber's queue.
type Subscription struct {
	bus    *Bus
	mu     sync.Mutex
	queue  []Event
	closed bool
	ready  chan struct{}
}

func (s *Subscription) push(e Event) {
	s.mu.Lock()
	if !s.closed {
		s.queue = append(s.queue, e)
	}
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Next returns the next event, waiting until one arrives or ctx ends.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			e := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return e, nil
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return nil, context.Canceled
		}
		select {
		case <-s.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close stops the subscription; a pending Next returns.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	delete(s.bus.subs, s)
	s.bus.mu.Unlock()
	s.mu.Lock()
	s.closed = true
	s.queue = nil
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}
