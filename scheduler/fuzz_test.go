package scheduler_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"reasonix/scheduler"
)

// fuzzSegments are the path pieces fuzzed write paths are built from; they
// include the separators and dot forms that normalisation must get right.
var fuzzSegments = []string{"a", "b", "ab", "..", ".", "", "c.go", "ws", "..a"}

// fuzzOps reads bytes one at a time and yields zero past the end, so every
// input decodes to some operation sequence.
type fuzzOps struct {
	data []byte
	pos  int
}

func (f *fuzzOps) more() bool { return f.pos < len(f.data) }

func (f *fuzzOps) byte() byte {
	if f.pos >= len(f.data) {
		return 0
	}
	b := f.data[f.pos]
	f.pos++
	return b
}

// path builds one write path: an optional prefix (root, "/", "./") and one
// to three segments.
func (f *fuzzOps) path() string {
	b := f.byte()
	var parts []string
	for range 1 + int(b>>6)%3 {
		parts = append(parts, fuzzSegments[int(f.byte())%len(fuzzSegments)])
	}
	p := strings.Join(parts, "/")
	switch b % 4 {
	case 1:
		return "/ws/" + p
	case 2:
		return "/" + p
	case 3:
		return "./" + p
	}
	return p
}

// FuzzQueue decodes bytes into a sequence of Submit, Next, Finish, Cancel,
// CancelFleet, Expired and clock steps, checks the harness invariants after
// every call, then drains the queue by finishing whatever runs and checks
// that every accepted task ended exactly once.
func FuzzQueue(f *testing.F) {
	f.Add([]byte{0x00})
	f.Add([]byte{0x15, 0, 0x01, 0x40, 1, 3, 0, 0x03, 0x40, 1, 2, 3, 4, 5, 3})
	f.Add([]byte("\x0a\x00\x01\x00\x03\x00\x01\x00\x03\x04\x05\x00\x06\x07\x08\x09\x03"))
	f.Add([]byte{0x3f, 0, 0x81, 0x01, 0x02, 0, 0x81, 0x01, 0x42, 0x03, 0x03, 0x07, 0x08, 0x0a, 0x30, 0x09, 0x03, 0x05})
	f.Add([]byte("fleet of writers on overlapping paths, cancelled midway"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, h, fail := newFuzzRun(t, data)
		now := t0
		fleets := []string{"", "f1", "f2"}
		anyID := func() string { return fuzzID(ops, h) }

		for n := 0; ops.more() && n < 400; n++ {
			switch op := ops.byte() % 11; op {
			case 0, 1, 2:
				fail(h.submit(fuzzTask(ops, h, fleets), now))
			case 3, 4:
				_, err := h.next(now)
				fail(err)
			case 5:
				if len(h.running) > 0 {
					_, err := h.finish(h.running[int(ops.byte())%len(h.running)].task.ID, now)
					fail(err)
				}
			case 6:
				_, err := h.finish(anyID(), now)
				fail(err)
			case 7:
				_, err := h.cancel(anyID(), now)
				fail(err)
			case 8:
				_, err := h.cancelFleet(fleets[int(ops.byte())%len(fleets)], now)
				fail(err)
			case 9:
				_, err := h.expired(now)
				fail(err)
			case 10:
				now = now.Add(time.Duration(ops.byte()%16) * time.Second)
			}
			fail(h.checkStatus())
		}

		fail(fuzzDrain(h, now))
	})
}

// FuzzNodes decodes bytes into node changes (workers added, updated, up
// and down, with fuzzed write paths and slot counts, valid or not; the
// local node's slots) mixed with Submit, Next, Requeue, Finish, Cancel and
// Expired, checks the harness invariants after every call (per-node
// slots, writer eligibility, the placement choice, the caps and overlap
// across nodes, attempts, exactly once), then drains the queue through the
// local node and checks that every accepted task ended exactly once.
func FuzzNodes(f *testing.F) {
	f.Add([]byte{0x00})
	f.Add([]byte{0x05, 3, 1, 9, 0x81, 2, 0x41, 0, 1, 0, 0x09, 0, 2, 2, 7, 0, 2, 6, 0})
	f.Add([]byte{0x3f, 4, 1, 3, 0, 20, 0x81, 1, 0x40, 2, 0, 0x11, 0x40, 2, 2, 7, 1, 2, 7, 1, 2})
	f.Add([]byte{0x21, 3, 2, 65, 0x82, 1, 3, 1, 0, 3, 3, 4, 0, 0, 0x09, 2, 1, 1, 2})
	f.Add([]byte("workers going down while writers on their paths are requeued twice"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, h, fail := newFuzzRun(t, data)
		now := t0
		fleets := []string{"", "f1", "f2"}
		anyID := func() string { return fuzzID(ops, h) }
		for n := 0; ops.more() && n < 400; n++ {
			switch op := ops.byte() % 12; op {
			case 0, 1:
				fail(h.submit(fuzzTask(ops, h, fleets), now))
			case 2:
				_, err := h.next(now)
				fail(err)
			case 3:
				b := ops.byte()
				nd := scheduler.Node{Name: fmt.Sprintf("w%d", b%4), Up: b&0x10 == 0, Slots: int(ops.byte())%70 - 2}
				for range int(b>>5) % 4 {
					nd.Writes = append(nd.Writes, ops.path())
				}
				fail(h.setNode(nd))
			case 4:
				fail(h.setNode(scheduler.Node{Slots: int(ops.byte())%68 - 1}))
			case 5:
				if len(h.running) > 0 {
					_, err := h.finish(h.running[int(ops.byte())%len(h.running)].task.ID, now)
					fail(err)
				}
			case 6:
				_, err := h.requeue(anyID(), now)
				fail(err)
			case 7:
				if len(h.running) > 0 {
					id := h.running[int(ops.byte())%len(h.running)].task.ID
					_, err := h.requeue(id, now)
					fail(err)
					if h.lookup(id).state == scheduler.Running && h.lookup(id).attempt >= scheduler.MaxAttempts {
						_, err := h.finish(id, now)
						fail(err)
					}
				}
			case 8:
				_, err := h.cancel(anyID(), now)
				fail(err)
			case 9:
				_, err := h.expired(now)
				fail(err)
			case 10:
				now = now.Add(time.Duration(ops.byte()%16) * time.Second)
			case 11:
				_, err := h.cancelFleet(fleets[int(ops.byte())%len(fleets)], now)
				fail(err)
			}
			fail(h.checkStatus())
		}

		// Drain through the local node, which covers every writer.
		if h.nodes[0].slots == 0 {
			fail(h.setNode(scheduler.Node{Slots: 1}))
		}
		fail(fuzzDrain(h, now))
	})
}

// newFuzzRun starts both fuzz targets the same way: the first byte picks
// the caps and whether there is a root, and fail reports an error with
// the end of the harness's trace.
func newFuzzRun(t *testing.T, data []byte) (*fuzzOps, *harness, func(error)) {
	t.Helper()
	ops := &fuzzOps{data: data}
	head := ops.byte()
	cfg := scheduler.Config{MaxRunning: 1 + int(head)%4, MaxWriters: 1 + int(head>>2)%3}
	if head&0x10 == 0 {
		cfg.Root = "/ws"
	}
	q, err := scheduler.New(cfg)
	if err != nil {
		t.Fatalf("new %+v: %v", cfg, err)
	}
	h := newHarness(q, cfg, 0)
	fail := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%v\ntrace:\n%s", err, tail(h.trace.String(), 60))
		}
	}
	return ops, h, fail
}

// fuzzTask decodes a task to submit from the next bytes: its fleet, an id
// some task already has (most likely a duplicate), a writer's fuzzed
// write paths and a timeout.
func fuzzTask(ops *fuzzOps, h *harness, fleets []string) scheduler.Task {
	flags := ops.byte()
	tk := scheduler.Task{ID: fmt.Sprintf("t%d", len(h.all)), Fleet: fleets[int(flags>>1)%len(fleets)]}
	if flags&0x80 != 0 {
		tk.ID = fuzzID(ops, h)
	}
	if flags&1 != 0 {
		tk.Writer = true
		for range int(flags>>3) % 4 {
			tk.WritePaths = append(tk.WritePaths, ops.path())
		}
	}
	if flags&0x40 != 0 {
		tk.Timeout = time.Duration(int(ops.byte())%8) * time.Second
	}
	return tk
}

// fuzzDrain empties the queue: with every slot freed before each Next,
// the head of the queue can always start, so each round starts at least
// one task. It then checks that every accepted task ended exactly once.
func fuzzDrain(h *harness, now time.Time) error {
	for range len(h.all) + 1 {
		if h.live() == 0 {
			break
		}
		for len(h.running) > 0 {
			if _, err := h.finish(h.running[0].task.ID, now); err != nil {
				return err
			}
		}
		if _, err := h.next(now); err != nil {
			return err
		}
		if err := h.checkStatus(); err != nil {
			return err
		}
	}
	if h.live() != 0 {
		return violation("queue did not drain: %d live", h.live())
	}
	return h.checkAllEnded()
}

// fuzzID picks the id of a task the harness knows from the next byte, or
// one no task has.
func fuzzID(ops *fuzzOps, h *harness) string {
	b := int(ops.byte())
	if len(h.all) == 0 || b == 0xff {
		return "nope"
	}
	return h.all[b%len(h.all)].task.ID
}
