package serve

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/actors/event"
	"reasonix/core/provider/providertest"
)

// longTurn is a reply that streams as many small deltas.
func longTurn(n int) providertest.Turn {
	return providertest.Turn{Text: strings.Repeat("ab", n), ChunkBytes: 2}
}

// seqs are the ids of msgs, which must all have one.
func seqs(t *testing.T, msgs []message) []int64 {
	t.Helper()
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		if !m.HasID {
			t.Fatalf("message %d (%s) has no id", i, m.Data)
		}
		n, err := strconv.ParseInt(m.ID, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := int64(m.field("seq").(float64)); got != n {
			t.Fatalf("message id %d, seq %d", n, got)
		}
		out[i] = n
	}
	return out
}

func TestEventsSnapshotFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	id := h.newSession()
	h.fake.Push(providertest.Turn{Text: "hello"})
	h.prompt(id, "hi")
	s := h.stream(id, "?since=0")
	snap := s.must()
	if snap.kind() != "snapshot" || snap.HasID {
		t.Fatalf("first message %+v, want the snapshot without an id", snap)
	}
	if snap.field("session") != id {
		t.Fatalf("snapshot of session %v", snap.field("session"))
	}
	msgs := s.until("turn_done")
	got := seqs(t, msgs)
	for i := range got {
		if got[i] != int64(i+1) {
			t.Fatalf("replay from 0: seqs %v, want 1, 2, 3…", got)
		}
	}
	var text strings.Builder
	for _, m := range msgs {
		if m.kind() == "text_delta" {
			text.WriteString(m.field("text").(string))
		}
	}
	if text.String() != "hello" {
		t.Fatalf("streamed text %q", text.String())
	}

	// Without since, only what follows the snapshot comes, and the
	// snapshot says where that is.
	s2 := h.stream(id, "")
	snap = s2.must()
	at := int64(snap.field("seq").(float64))
	if at < got[len(got)-1] || snap.field("running") != false {
		t.Fatalf("snapshot after the turn: %s", snap.Data)
	}
	h.fake.Push(providertest.Turn{Text: "again"})
	h.prompt(id, "once more")
	next := s2.until("turn_done")
	if first := seqs(t, next)[0]; first != at+1 {
		t.Fatalf("first event after a snapshot at %d is %d", at, first)
	}
}

func TestEventsReplayAfterReconnect(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	id := h.newSession()
	h.fake.Push(longTurn(200))

	// A page reads a few events of the turn, loses its connection, and
	// reconnects with the Last-Event-ID its EventSource kept.
	a := h.stream(id, "")
	if m := a.must(); m.kind() != "snapshot" {
		t.Fatalf("first message %s", m.Data)
	}
	h.prompt(id, "stream a lot")
	var first []message
	for range 5 {
		first = append(first, a.must())
	}
	a.close()
	last := first[len(first)-1].ID
	b := h.stream(id, "", withHeader("Last-Event-ID", last))
	if m := b.must(); m.kind() != "snapshot" {
		t.Fatalf("first message on reconnect %s", m.Data)
	}
	rest := b.until("turn_done")

	// Everything the bus published from the first event read on, as a
	// fresh replay sees it.
	all := seqs(t, h.stream(id, "?since=0").until("turn_done")[1:])
	got := append(seqs(t, first), seqs(t, rest)...)
	i := 0
	for i < len(all) && all[i] != got[0] {
		i++
	}
	wantSeqs := all[i:]
	if len(got) != len(wantSeqs) {
		t.Fatalf("read %d events across the reconnect, the bus has %d from the first: %v vs %v", len(got), len(wantSeqs), got, wantSeqs)
	}
	for j := range got {
		if got[j] != wantSeqs[j] {
			t.Fatalf("event %d: seq %d, want %d (a gap or a duplicate)", j, got[j], wantSeqs[j])
		}
	}
	deltas := 0
	for _, m := range rest {
		if m.kind() == "text_delta" {
			deltas++
		}
	}
	if deltas < 100 {
		t.Fatalf("only %d deltas after the reconnect: the turn was not streamed in pieces", deltas)
	}
}

func TestEventsLaggedWhenHistoryIsGone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{busOpts: []event.BusOption{event.WithHistory(4)}})
	id := h.newSession()
	h.fake.Push(longTurn(50))
	// The stream is attached before the prompt, so it sees the turn end.
	first := h.stream(id, "")
	first.must()
	h.prompt(id, "stream")
	first.until("turn_done")

	s := h.stream(id, "?since=0")
	if m := s.must(); m.kind() != "snapshot" {
		t.Fatalf("first message %s", m.Data)
	}
	lag := s.must()
	if lag.kind() != "lagged" || lag.field("since_seq") != float64(1) || lag.field("session") != id {
		t.Fatalf("second message %s, want lagged from seq 1", lag.Data)
	}
	until := int64(lag.field("until_seq").(float64))
	if lag.ID != strconv.FormatInt(until, 10) {
		t.Fatalf("lagged id %q, want its until_seq %d", lag.ID, until)
	}
	// What the bus still holds follows, without a gap.
	rest := seqs(t, s.until("turn_done"))
	if rest[0] != until+1 || len(rest) != 4 {
		t.Fatalf("after the lag: %v, want the 4 retained events from %d", rest, until+1)
	}
}

func TestEventsEndWithTheSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	id := h.newSession()
	s := h.stream(id, "")
	s.must()
	want(t, h.req("DELETE", "/api/sessions/"+id, nil), http.StatusNoContent)
	var last message
	for {
		m, err := s.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		last = m
	}
	if last.kind() != "session_closed" || last.field("session") != id {
		t.Fatalf("last message %+v, want session_closed", last)
	}
	want(t, h.req("GET", "/api/sessions/"+id+"/events", nil), http.StatusNotFound)
}

func TestEventsPing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{ping: 20 * time.Millisecond})
	id := h.newSession()
	s := h.stream(id, "")
	s.must()
	// An idle stream gets a ping comment on every interval; the read is
	// bounded by the stream's own deadline.
	for pings := 0; pings < 2; {
		line, err := s.rd.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		switch {
		case line == ": ping\n":
			pings++
		case line == "\n":
		case strings.HasPrefix(line, "id: ") || strings.HasPrefix(line, "data: "):
			// The session's own start-up events may follow the snapshot.
		default:
			t.Fatalf("idle stream sent %q", line)
		}
	}
}

func TestEventsBadSince(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	id := h.newSession()
	want(t, h.req("GET", "/api/sessions/"+id+"/events?since=x", nil), http.StatusBadRequest)
	want(t, h.req("GET", "/api/sessions/"+id+"/events", nil, withHeader("Last-Event-ID", "-3")), http.StatusBadRequest)
	want(t, h.req("GET", "/api/sessions/nope/events", nil), http.StatusNotFound)
}

// stalledWriter is a browser that stops reading: its first write blocks
// until the test lets it go.
type stalledWriter struct {
	header  http.Header
	entered chan struct{}
	release chan struct{}
	once    sync.Once

	mu  sync.Mutex
	out bytes.Buffer
}

func (w *stalledWriter) Header() http.Header { return w.header }
func (w *stalledWriter) WriteHeader(int)     {}
func (w *stalledWriter) Flush()              {}

func (w *stalledWriter) Write(p []byte) (int, error) {
	w.once.Do(func() {
		close(w.entered)
		<-w.release
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(p)
}

// TestEventsSlowReaderLags: a stream whose browser stops reading holds no
// more than its bound; once it reads again it is told with a lagged event
// what it lost, and the events it still holds follow in order.
func TestEventsSlowReaderLags(t *testing.T) {
	t.Parallel()
	const bound = 8
	h := newHarness(t, harnessOpts{streamBound: bound})
	id := h.newSession()
	e := h.srv.live(context.Background(), id)
	w := &stalledWriter{header: http.Header{}, entered: make(chan struct{}), release: make(chan struct{})}
	r := httptest.NewRequest("GET", "/api/sessions/"+id+"/events", nil)
	r.SetPathValue("id", id)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.srv.handleEvents(w, r)
	}()
	<-w.entered // the snapshot is being written, the subscription is in place
	bus := e.live.Bus()
	from := bus.LastSeq() + 1
	const published = 50
	for i := range published {
		bus.Publish(&event.Notice{Meta: event.Meta{Session: id}, Level: "info", Message: "n" + strconv.Itoa(i)})
	}
	close(w.release)
	if err := e.close(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	<-done

	s := &sse{t: t, rd: bufio.NewReader(bytes.NewReader(w.out.Bytes()))}
	snap := s.must()
	if snap.kind() != "snapshot" {
		t.Fatalf("first message %s", snap.Data)
	}
	// The stream follows its snapshot: an event the session itself
	// published after the snapshot and before the test read LastSeq is
	// among those lost.
	if at := int64(snap.field("seq").(float64)) + 1; at < from {
		from = at
	}
	lag := s.must()
	if lag.kind() != "lagged" || int64(lag.field("since_seq").(float64)) != from {
		t.Fatalf("after the stall: %s, want lagged from %d", lag.Data, from)
	}
	until := int64(lag.field("until_seq").(float64))
	var kept []message
	for {
		m := s.must()
		if m.kind() == "session_closed" {
			break
		}
		kept = append(kept, m)
	}
	got := seqs(t, kept)
	if len(got) == 0 || got[0] != until+1 {
		t.Fatalf("after the lag: %v, want them from %d", got, until+1)
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Fatalf("a gap after the lag: %v", got)
		}
	}
	// What the stream held while stalled is its bound; only the events
	// the closing published came after.
	notices := 0
	for _, m := range kept {
		if m.kind() == "notice" {
			notices++
		}
	}
	if notices > bound || until < from+published-bound-1 {
		t.Fatalf("held %d notices with a bound of %d (lagged until %d)", notices, bound, until)
	}
}

// TestEncodeCacheIsBounded: the shared encodings keep only the latest
// events, each encoded once, and give each its own seq as the id.
func TestEncodeCacheIsBounded(t *testing.T) {
	t.Parallel()
	bus := event.NewBus()
	sub := bus.Subscribe()
	defer sub.Close()
	c := newEncodeCache()
	const n = encodeCacheSize + 100
	for i := range n {
		bus.Publish(&event.TextDelta{Meta: event.Meta{Session: "s"}, Text: strconv.Itoa(i)})
	}
	var first event.Event
	for i := range n {
		ev, err := sub.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = ev
		}
		x, err := c.get(ev)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := c.get(ev)
		if x.id != strconv.Itoa(i+1) || &again.data[0] != &x.data[0] {
			t.Fatalf("event %d: id %q, cached %v", i, x.id, &again.data[0] == &x.data[0])
		}
	}
	if len(c.m) != encodeCacheSize {
		t.Fatalf("the cache holds %d events, want %d", len(c.m), encodeCacheSize)
	}
	if _, ok := c.m[first]; ok {
		t.Fatal("the oldest event is still cached")
	}
}

// TestEventsForeignLastEventID: a Last-Event-ID this session's bus never
// gave (the page kept it across a restart of the server) is answered with
// a lagged event whose id is the snapshot's seq, and the stream goes on
// from there.
func TestEventsForeignLastEventID(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	id := h.newSession()
	s := h.stream(id, "", withHeader("Last-Event-ID", "999999"))
	snap := s.must()
	at := int64(snap.field("seq").(float64))
	lag := s.must()
	if lag.kind() != "lagged" || lag.ID != strconv.FormatInt(at, 10) || lag.field("session") != id {
		t.Fatalf("after a foreign id: %+v, want lagged with id %d", lag, at)
	}
	h.fake.Push(providertest.Turn{Text: "fresh"})
	h.prompt(id, "go on")
	if got := seqs(t, s.until("turn_done")); got[0] != at+1 {
		t.Fatalf("the stream went on from %d, want %d", got[0], at+1)
	}
}
