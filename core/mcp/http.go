package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"reasonix/core/panics"
	"reasonix/core/sse"
)

const (
	// maxJSONReply caps an application/json reply body.
	maxJSONReply = 64 << 20
	// maxErrorBody is how much of a failed reply's body an error quotes.
	maxErrorBody = 512
	// maxReconnectDelay caps the delay a server may ask for with retry.
	maxReconnectDelay = 30 * time.Second
)

// ErrSessionExpired is returned once the server answers 404 to a request
// carrying its session id: the session is gone and the caller must
// connect again. The transport is unusable afterwards.
var ErrSessionExpired = errors.New("mcp session expired (the server answered 404 to the session id)")

// StatusError is an HTTP reply outside 2xx.
type StatusError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Body is the start of the reply body, for the error message.
	Body string
}

// Error names the status and quotes the body.
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("mcp server answered http %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// HTTPOptions configure an HTTP transport.
type HTTPOptions struct {
	// Headers are sent on every request, e.g. Authorization.
	Headers map[string]string
	// Client replaces the transport's own HTTP client.
	Client *http.Client
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// MaxReconnects bounds consecutive reconnections of a broken event
	// stream; zero means 5.
	MaxReconnects int
	// ReconnectDelay is the wait before reconnecting when the server
	// announced no retry delay; zero means one second.
	ReconnectDelay time.Duration
	// CloseTimeout bounds the DELETE that ends the session; zero means
	// five seconds.
	CloseTimeout time.Duration
}

// HTTP is the streamable HTTP transport. Every message is POSTed to the
// configured URL; a reply is one JSON message or an event stream that
// carries the response and whatever the server sends meanwhile. After the
// handshake it also listens on the optional GET stream for messages the
// server starts. A broken stream is resumed with GET and Last-Event-ID.
type HTTP struct {
	url            string
	headers        http.Header
	client         *http.Client
	own            *http.Transport // closed with the transport when ours
	log            *slog.Logger
	maxReconnects  int
	reconnectDelay time.Duration
	closeTimeout   time.Duration

	mu              sync.Mutex
	sessionID       string
	protocolVersion string
	closed          bool
	listening       bool
	streams         map[uint64]context.CancelFunc
	nextStream      uint64
	// answering maps a request id to the end of the event stream that
	// carries its response, so that cancelling the request stops it.
	answering map[string]func()
	wg        sync.WaitGroup

	incoming chan Message
	closing  chan struct{}
	failOnce sync.Once
	failed   chan struct{}
	failErr  error
}

// NewHTTP returns a transport for the server at rawURL, which is used
// exactly as given for every request. It does no I/O.
func NewHTTP(rawURL string, opts HTTPOptions) (*HTTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("mcp server url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcp server url %q: want an absolute http or https url", rawURL)
	}
	h := &HTTP{
		url:            rawURL,
		headers:        make(http.Header),
		client:         opts.Client,
		log:            logger(opts.Logger),
		maxReconnects:  opts.MaxReconnects,
		reconnectDelay: opts.ReconnectDelay,
		closeTimeout:   opts.CloseTimeout,
		streams:        make(map[uint64]context.CancelFunc),
		answering:      make(map[string]func()),
		incoming:       make(chan Message, 64),
		closing:        make(chan struct{}),
		failed:         make(chan struct{}),
	}
	for k, v := range opts.Headers {
		h.headers.Set(k, v)
	}
	if h.client == nil {
		h.own = http.DefaultTransport.(*http.Transport).Clone()
		h.client = &http.Client{Transport: h.own}
	}
	if h.maxReconnects <= 0 {
		h.maxReconnects = 5
	}
	if h.reconnectDelay <= 0 {
		h.reconnectDelay = time.Second
	}
	if h.closeTimeout <= 0 {
		h.closeTimeout = 5 * time.Second
	}
	return h, nil
}

// SessionID is the session id the server assigned, or "".
func (h *HTTP) SessionID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessionID
}

// Negotiated records the protocol version, sent from now on in the
// MCP-Protocol-Version header.
func (h *HTTP) Negotiated(version string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.protocolVersion = version
}

// Initialized opens the GET stream on which a server may send messages
// of its own. A server that does not offer it answers 405 (or 400/404),
// which is not an error.
func (h *HTTP) Initialized() {
	h.mu.Lock()
	start := !h.listening
	h.listening = true
	h.mu.Unlock()
	if !start {
		return
	}
	ctx, done, ok := h.track()
	if !ok {
		return
	}
	go func() {
		defer done()
		defer panics.Recover(h.crashed("mcp event stream"))
		h.listen(ctx)
	}()
}

// track registers a stream: the returned context ends when Close is
// called, and done must be called when the stream's work is over. It
// reports false once the transport is closed.
func (h *HTTP) track() (context.Context, func(), bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, false
	}
	ctx, cancel := context.WithCancel(context.Background())
	id := h.nextStream
	h.nextStream++
	h.streams[id] = cancel
	h.wg.Add(1)
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.streams, id)
			h.mu.Unlock()
			cancel()
			h.wg.Done()
		})
	}, true
}

// Send POSTs msg. ctx bounds the request until the reply's headers
// arrive; an event-stream reply is then read by the transport, and what it
// carries arrives through Receive.
func (h *HTTP) Send(ctx context.Context, msg Message) error {
	body, err := msg.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode %s: %w", msg.Kind(), err)
	}
	select {
	case <-h.failed:
		return h.failErr
	default:
	}
	if msg.Method == "notifications/cancelled" {
		h.stopAnswering(msg.Params)
	}
	streamCtx, done, ok := h.track()
	if !ok {
		return ErrClosed
	}
	stop := context.AfterFunc(ctx, done)
	req, err := h.newRequest(streamCtx, http.MethodPost, body)
	if err != nil {
		stop()
		done()
		return err
	}
	resp, err := h.client.Do(req)
	if !stop() {
		if err == nil {
			_ = resp.Body.Close()
		}
		return ctx.Err()
	}
	if err != nil {
		done()
		select {
		case <-h.closing:
			return ErrClosed
		default:
		}
		return fmt.Errorf("post to mcp server: %w", err)
	}
	expect := map[string]json.RawMessage{}
	if msg.Kind() == KindRequest {
		expect[idKey(msg.ID)] = msg.ID
	}
	return h.reply(streamCtx, resp, req.Header.Get("Mcp-Session-Id") != "", expect, done)
}

// reply handles the answer to a POST. It takes over done: it calls it
// itself, or hands it to the goroutine that reads an event stream.
func (h *HTTP) reply(ctx context.Context, resp *http.Response, hadSession bool, expect map[string]json.RawMessage, done func()) error {
	h.noteSession(resp)
	if resp.StatusCode == http.StatusNotFound && hadSession {
		_ = resp.Body.Close()
		done()
		h.fail(ErrSessionExpired)
		return ErrSessionExpired
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer done()
		return statusError(resp)
	}
	if resp.StatusCode == http.StatusAccepted || resp.ContentLength == 0 {
		_ = resp.Body.Close()
		done()
		if len(expect) > 0 {
			// Only the legacy transport answered requests elsewhere.
			return fmt.Errorf("mcp server acknowledged a request without answering it (http %d, empty body)", resp.StatusCode)
		}
		return nil
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mediaType {
	case "text/event-stream":
		keys := slices.Collect(maps.Keys(expect))
		h.mu.Lock()
		for _, key := range keys {
			h.answering[key] = done
		}
		h.mu.Unlock()
		go func() {
			defer func() {
				h.mu.Lock()
				for _, key := range keys {
					delete(h.answering, key)
				}
				h.mu.Unlock()
				done()
			}()
			defer panics.Recover(h.crashed("mcp reply stream"))
			h.readPostStream(ctx, resp.Body, expect)
		}()
		return nil
	case "application/json", "":
		defer done()
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONReply+1))
		if err != nil {
			return fmt.Errorf("read mcp reply: %w", err)
		}
		msgs, err := ParseJSONReply(data)
		if err != nil {
			return err
		}
		if len(msgs) == 0 && len(expect) > 0 {
			return fmt.Errorf("mcp server acknowledged a request without answering it (http %d, empty body)", resp.StatusCode)
		}
		for _, m := range msgs {
			if !h.deliver(m) {
				return ErrClosed
			}
		}
		return nil
	}
	defer done()
	_ = resp.Body.Close()
	return fmt.Errorf("mcp server replied with unexpected content type %q", resp.Header.Get("Content-Type"))
}

// stopAnswering ends the event stream of a request the client cancels:
// its response is no longer wanted, and a stream the server then closes
// must not be resumed.
func (h *HTTP) stopAnswering(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	h.mu.Lock()
	stop := h.answering[idKey(p.RequestID)]
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// ParseJSONReply decodes an application/json reply body: one message, a
// batch, or nothing at all (an empty body acknowledges a notification).
func ParseJSONReply(data []byte) ([]Message, error) {
	if len(data) > maxJSONReply {
		return nil, fmt.Errorf("mcp reply exceeds %d bytes", maxJSONReply)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	msgs, err := DecodeMessages(data)
	if err != nil {
		return nil, fmt.Errorf("mcp reply: %w", err)
	}
	return msgs, nil
}

// readPostStream reads the event stream that answers a POST until every
// response it owes has arrived. A stream that breaks first is resumed
// with GET and Last-Event-ID after the server's retry delay, a bounded
// number of times; if that fails, each owed request gets an error
// response so that its caller does not wait forever.
func (h *HTTP) readPostStream(ctx context.Context, body io.ReadCloser, expect map[string]json.RawMessage) {
	untilAnswered := len(expect) > 0
	var lastID string
	var retry time.Duration
	failures := 0
	for {
		before := lastID
		err := h.readEvents(body, &lastID, &retry, func(m Message) bool {
			if m.Kind() == KindResponse {
				delete(expect, idKey(m.ID))
			}
			if !h.deliver(m) {
				return false
			}
			return !untilAnswered || len(expect) > 0
		})
		_ = body.Close()
		if !untilAnswered || len(expect) == 0 || ctx.Err() != nil {
			return
		}
		if lastID == "" {
			h.failRequests(expect, fmt.Errorf("event stream ended before the response and cannot be resumed (no event id): %v", streamEnd(err)))
			return
		}
		if lastID != before {
			failures = 0
		}
		failures++
		if failures > h.maxReconnects {
			h.failRequests(expect, fmt.Errorf("event stream ended before the response; gave up after %d reconnections: %v", h.maxReconnects, streamEnd(err)))
			return
		}
		for {
			if !h.wait(ctx, retry) {
				return
			}
			body, err = h.get(ctx, lastID)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
			var se *StatusError
			if errors.As(err, &se) || failures >= h.maxReconnects {
				h.failRequests(expect, fmt.Errorf("resume event stream: %w", err))
				return
			}
			failures++
		}
	}
}

// listen reads the GET stream for messages the server starts, reopening
// it when it ends, until Close or until it keeps failing.
func (h *HTTP) listen(ctx context.Context) {
	var lastID string
	var retry time.Duration
	failures := 0
	for {
		body, err := h.get(ctx, lastID)
		if ctx.Err() != nil {
			if body != nil {
				_ = body.Close()
			}
			return
		}
		var se *StatusError
		switch {
		case errors.As(err, &se) && (se.StatusCode == http.StatusMethodNotAllowed || se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusBadRequest):
			h.log.Debug("mcp server offers no event stream", "status", se.StatusCode)
			return
		case err != nil:
			failures++
			h.log.Debug("mcp event stream", "err", err)
		default:
			got := 0
			err = h.readEvents(body, &lastID, &retry, func(m Message) bool {
				got++
				return h.deliver(m)
			})
			_ = body.Close()
			if ctx.Err() != nil {
				return
			}
			if got > 0 {
				failures = 0
			} else {
				failures++
			}
			h.log.Debug("mcp event stream ended", "err", streamEnd(err))
		}
		if failures > h.maxReconnects {
			h.log.Warn("mcp event stream keeps failing; no longer listening", "attempts", failures)
			return
		}
		if !h.wait(ctx, retry) {
			return
		}
	}
}

// readEvents decodes the messages an event stream carries and hands them
// to fn until fn returns false or the stream ends. It records the last
// event id and retry delay so that the stream can be resumed. Events with
// empty data, which servers send to prime resumption, carry no message.
func (h *HTTP) readEvents(r io.Reader, lastID *string, retry *time.Duration, fn func(Message) bool) error {
	return ReadEventStream(r, func(ev sse.Event, msgs []Message, err error) bool {
		if ev.HasID {
			*lastID = ev.ID
		}
		if ev.Retry > 0 {
			*retry = ev.Retry
		}
		if err != nil {
			h.log.Warn("mcp server sent an event that is not JSON-RPC", "err", err)
			return true
		}
		for _, m := range msgs {
			if !fn(m) {
				return false
			}
		}
		return true
	})
}

// ReadEventStream reads Server-Sent Events from r and decodes the JSON-RPC
// messages in their data. fn sees every dispatched event (so that callers
// can track ids and retry delays) with its messages, or with the decoding
// error of an event whose data is not JSON-RPC; returning false stops the
// reading. Only events of type "message" (or untyped) carry messages, and
// an event with empty data carries none. ReadEventStream returns nil when
// fn stopped it, io.EOF at a clean end and the reader's error otherwise.
func ReadEventStream(r io.Reader, fn func(ev sse.Event, msgs []Message, err error) bool) error {
	sr := sse.NewReader(r)
	for {
		ev, err := sr.Next()
		if err != nil {
			return err
		}
		if d := sr.Retry(); d > 0 && ev.Retry == 0 {
			ev.Retry = d
		}
		var msgs []Message
		var derr error
		if (ev.Event == "" || ev.Event == "message") && strings.TrimSpace(ev.Data) != "" {
			msgs, derr = DecodeMessages([]byte(ev.Data))
		}
		if !fn(ev, msgs, derr) {
			return nil
		}
	}
}

func streamEnd(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

// get opens a GET event stream, resuming after lastID when it is set.
func (h *HTTP) get(ctx context.Context, lastID string) (io.ReadCloser, error) {
	req, err := h.newRequest(ctx, http.MethodGet, nil)
	if err != nil {
		return nil, err
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("open mcp event stream: %w", err)
	}
	h.noteSession(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(resp)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		_ = resp.Body.Close()
		return nil, &StatusError{StatusCode: http.StatusMethodNotAllowed, Body: "GET answered with " + mt}
	}
	return resp.Body, nil
}

// wait sleeps for the reconnection delay, or returns false when ctx ends.
func (h *HTTP) wait(ctx context.Context, retry time.Duration) bool {
	d := retry
	if d <= 0 {
		d = h.reconnectDelay
	}
	d = min(d, maxReconnectDelay)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// failRequests answers each owed request with an error response, so its
// caller learns that the response will not come.
func (h *HTTP) failRequests(expect map[string]json.RawMessage, err error) {
	h.log.Warn("mcp event stream lost", "err", err)
	for _, id := range expect {
		if !h.deliver(NewErrorResponse(id, CodeConnectionClosed, err.Error())) {
			return
		}
	}
}

// deliver queues m for Receive; it reports false once the transport is
// closed.
func (h *HTTP) deliver(m Message) bool {
	select {
	case h.incoming <- m:
		return true
	case <-h.closing:
		return false
	}
}

// crashed is the report of a stream reader that panicked: the transport
// fails with the panic, so the Client sees the connection broken and its
// calls, the one whose answer was lost among them, end with that error.
// It runs before the stream's done, which ends the stream's request and
// so its connection, and which Close waits for.
func (h *HTTP) crashed(what string) func(error) {
	return func(err error) { h.fail(fmt.Errorf("%s: %w", what, err)) }
}

func (h *HTTP) fail(err error) {
	h.failOnce.Do(func() {
		h.failErr = err
		close(h.failed)
	})
}

// newRequest builds a request to the server URL with the static headers,
// the session id and the protocol version.
func (h *HTTP) newRequest(ctx context.Context, method string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.url, rd)
	if err != nil {
		return nil, fmt.Errorf("mcp request: %w", err)
	}
	for k, v := range h.headers {
		req.Header[k] = v
	}
	h.mu.Lock()
	sid, pv := h.sessionID, h.protocolVersion
	h.mu.Unlock()
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if pv != "" {
		req.Header.Set("Mcp-Protocol-Version", pv)
	}
	switch method {
	case http.MethodPost:
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
	case http.MethodGet:
		req.Header.Set("Accept", "text/event-stream")
	}
	return req, nil
}

// noteSession remembers the first session id the server assigns.
func (h *HTTP) noteSession(resp *http.Response) {
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessionID == "" {
		h.sessionID = sid
	}
}

// statusError reads the start of a failed reply's body and closes it.
func statusError(resp *http.Response) error {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return &StatusError{StatusCode: resp.StatusCode, Body: strings.TrimSpace(string(b))}
}

// Receive returns the next message from any reply or stream.
func (h *HTTP) Receive(ctx context.Context) (Message, error) {
	select {
	case m := <-h.incoming:
		return m, nil
	case <-h.closing:
		return Message{}, ErrClosed
	case <-h.failed:
		select {
		case m := <-h.incoming:
			return m, nil
		default:
		}
		return Message{}, h.failErr
	case <-ctx.Done():
		return Message{}, ctx.Err()
	}
}

// Close stops every stream, waits for their readers, and ends the session
// with DELETE (a server that answers 405 keeps it; that is its choice).
func (h *HTTP) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	cancels := slices.Collect(maps.Values(h.streams))
	sid := h.sessionID
	h.mu.Unlock()
	close(h.closing)
	for _, cancel := range cancels {
		cancel()
	}
	h.wg.Wait()
	var err error
	if sid != "" {
		err = h.deleteSession()
	}
	if h.own != nil {
		h.own.CloseIdleConnections()
	}
	return err
}

func (h *HTTP) deleteSession() error {
	ctx, cancel := context.WithTimeout(context.Background(), h.closeTimeout)
	defer cancel()
	req, err := h.newRequest(ctx, http.MethodDelete, nil)
	if err != nil {
		return err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return fmt.Errorf("end mcp session: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed, resp.StatusCode == http.StatusNotFound:
		return nil
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return fmt.Errorf("end mcp session: %w", &StatusError{StatusCode: resp.StatusCode})
	}
	return nil
}
