package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"reasonix/actors/event"
)

// DefaultStreamBound is how many unread events one event stream may hold before
// the oldest are dropped and the page is sent a lagged event. It equals
// what the bus keeps (actors.DefaultHistory), so a page replaying all of
// the retained history (?since=0) fits without lagging, while a browser
// that stops reading holds at most that many pointers to events the bus
// shares with every reader: about 80 KB of queue, never a copy of the
// stream. A lossless subscription would instead let one stalled tab grow
// the server's memory without bound.
const DefaultStreamBound = event.DefaultHistory

// streamWriteTimeout bounds each write to an event stream: a browser that
// has not taken a write in this long is cut off, and reconnects from its
// Last-Event-ID.
const streamWriteTimeout = 30 * time.Second

// snapshotTimeout bounds the wait for the session's view to catch up with
// the bus before the snapshot is taken.
const snapshotTimeout = 10 * time.Second

// handleEvents streams a session's events as Server-Sent Events: the
// snapshot first, then every event after since (Last-Event-ID, else
// ?since, else the snapshot's seq), a ping comment on every PingInterval,
// and session_closed when the session is closed.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(r.Context(), snapshotTimeout)
	e := s.live(ctx, id)
	cancel()
	if e == nil {
		writeError(w, http.StatusNotFound, "no open session "+id)
		return
	}
	since, explicit, err := streamSince(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	bus := e.live.Bus()
	ctx, cancel = context.WithTimeout(r.Context(), snapshotTimeout)
	snap, err := e.live.SnapshotAt(ctx, bus.LastSeq())
	cancel()
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "snapshot: "+err.Error())
		return
	}
	// An id past the session's last event was not given by this bus: the
	// page kept it from an earlier run of the server, whose seqs the
	// resumed session's new bus starts over. Its view is of another
	// stream, so it is told to rebuild, and the stream goes on from the
	// snapshot.
	var foreign *event.Lagged
	if explicit && since > snap.Seq {
		foreign = &event.Lagged{Meta: event.Meta{Seq: snap.Seq, Time: time.Now(), Session: id}, SinceSeq: snap.Seq, UntilSeq: snap.Seq}
	}
	if !explicit || foreign != nil {
		since = snap.Seq
	}
	sub := bus.SubscribeFrom(since, s.opts.StreamBound)
	defer sub.Close()
	// While it is open the stream is a tab following the session, there
	// to answer its approvals (tabs.go).
	defer e.attach()()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	// Proxies that buffer responses (nginx) would hold the stream back.
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := &sseWriter{rc: http.NewResponseController(w), bw: bufio.NewWriterSize(w, 32<<10), enc: e.enc}
	if err := out.snapshot(snap); err != nil {
		return
	}
	if foreign != nil && out.event(foreign, id) != nil {
		return
	}
	if out.flush() != nil {
		return
	}

	// The stream ends with the client, or when the session is closed.
	streamCtx, stop := context.WithCancel(r.Context())
	defer stop()
	defer context.AfterFunc(e.ctx, stop)()
	for {
		pingCtx, pingDone := context.WithTimeout(streamCtx, s.opts.PingInterval)
		err := s.pump(pingCtx, sub, out, id)
		pingDone()
		if err != nil {
			return // the client is gone or too slow
		}
		switch {
		case e.ctx.Err() != nil:
			// Closed: what the closing published is still queued.
			if s.pump(streamCtx, sub, out, id) == nil {
				_ = out.closed(id)
				_ = out.flush()
			}
			return
		case streamCtx.Err() != nil:
			return
		}
		if out.ping() != nil || out.flush() != nil {
			return
		}
	}
}

// pump writes events until ctx ends (nil) or a write fails. Whatever is
// queued is written in one go and flushed once, so a burst of deltas costs
// one flush rather than one each.
func (s *Server) pump(ctx context.Context, sub *event.Subscription, out *sseWriter, id string) error {
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			return nil
		}
		for ev != nil {
			if err := out.event(ev, id); err != nil {
				return err
			}
			ev = nil
			if out.bw.Buffered() < 16<<10 {
				ev, _ = sub.Next(drained)
			}
		}
		if err := out.flush(); err != nil {
			return err
		}
	}
}

// drained is a context that has ended: Next with it returns what is queued
// and never waits.
var drained = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// streamSince is where a stream resumes: the Last-Event-ID a reconnecting
// EventSource sends, else ?since. explicit is false when neither is given.
func streamSince(r *http.Request) (since int64, explicit bool, err error) {
	v, name := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, name = r.URL.Query().Get("since"), "since"
	}
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, false, errors.New(name + " must be an event seq, a whole number ≥ 0")
	}
	return n, true, nil
}

// sseWriter frames Server-Sent Events.
type sseWriter struct {
	rc *http.ResponseController
	bw *bufio.Writer
	// enc is the session's shared encodings; nil encodes every event.
	enc *encodeCache
}

func (o *sseWriter) deadline() {
	_ = o.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
}

// message writes one message; id is left out when empty.
func (o *sseWriter) message(id string, data []byte) error {
	if o.bw.Available() < len(data)+32 {
		o.deadline()
	}
	if id != "" {
		o.bw.WriteString("id: ")
		o.bw.WriteString(id)
		o.bw.WriteByte('\n')
	}
	o.bw.WriteString("data: ")
	o.bw.Write(data)
	_, err := o.bw.WriteString("\n\n")
	return err
}

// event writes one bus event with its seq as the message id. A lagged
// event is made for this stream alone, so it can be given the session.
func (o *sseWriter) event(ev event.Event, session string) error {
	if l, ok := ev.(*event.Lagged); ok {
		if l.Session == "" {
			l.Session = session
		}
		x, err := encode(ev)
		if err != nil {
			return nil
		}
		return o.message(x.id, x.data)
	}
	x, err := o.enc.get(ev)
	if err != nil {
		return nil // an event that cannot be encoded is left out, not fatal
	}
	return o.message(x.id, x.data)
}

// encoded is an event's wire form and its message id.
type encoded struct {
	data []byte
	id   string
}

func encode(ev event.Event) (encoded, error) {
	data, err := event.Encode(ev)
	if err != nil {
		return encoded{}, err
	}
	return encoded{data: data, id: strconv.FormatInt(event.MetaOf(ev).Seq, 10)}, nil
}

// encodeCacheSize is how many recent events of a session keep their wire
// form: enough for every stream of a session that keeps up to find the
// event it is writing, a few hundred KB at most.
const encodeCacheSize = 4096

// encodeCache keeps the wire form of a session's recent events, so that
// the streams of many tabs encode each event once rather than once each.
// Events are immutable once published and shared by pointer between the
// subscribers, so the pointer is the key. A nil cache encodes every time.
type encodeCache struct {
	mu   sync.Mutex
	m    map[event.Event]encoded
	ring []event.Event
	next int
}

func newEncodeCache() *encodeCache {
	return &encodeCache{m: make(map[event.Event]encoded, encodeCacheSize), ring: make([]event.Event, encodeCacheSize)}
}

// get returns ev's wire form, encoding it on its first request. Two
// streams asking at once may both encode it; the result is the same.
func (c *encodeCache) get(ev event.Event) (encoded, error) {
	if c == nil {
		return encode(ev)
	}
	c.mu.Lock()
	x, ok := c.m[ev]
	c.mu.Unlock()
	if ok {
		return x, nil
	}
	x, err := encode(ev)
	if err != nil {
		return x, err
	}
	c.mu.Lock()
	if _, ok := c.m[ev]; !ok {
		if old := c.ring[c.next]; old != nil {
			delete(c.m, old)
		}
		c.ring[c.next] = ev
		c.next = (c.next + 1) % len(c.ring)
		c.m[ev] = x
	}
	c.mu.Unlock()
	return x, nil
}

// snapshot writes the snapshot message, which has no id: the browser's
// Last-Event-ID stays that of the last event it got.
func (o *sseWriter) snapshot(snap event.Snapshot) error {
	body, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	data := append([]byte(`{"type":"snapshot",`), body[1:]...)
	return o.message("", data)
}

func (o *sseWriter) closed(session string) error {
	data, _ := json.Marshal(map[string]string{"type": "session_closed", "session": session})
	return o.message("", data)
}

func (o *sseWriter) ping() error {
	_, err := o.bw.WriteString(": ping\n\n")
	return err
}

func (o *sseWriter) flush() error {
	o.deadline()
	if err := o.bw.Flush(); err != nil {
		return err
	}
	return o.rc.Flush()
}
