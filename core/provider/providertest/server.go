package providertest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running fake endpoint. Its methods are safe for concurrent
// use.
type Server struct {
	hs        *httptest.Server
	responder func(Request) Turn
	dialect   Dialect
	models    []string
	apiKey    string
	// thinking turns on DeepSeek's reasoning send-back check.
	thinking bool
	// maxInFlight, when positive, is the concurrency limit WithMaxInFlight
	// enforces.
	maxInFlight int
	// prefixCache turns on the prompt cache model of WithPrefixCache.
	prefixCache bool
	// queuedHeaders turns on WithQueuedHeaders.
	queuedHeaders bool

	mu    sync.Mutex
	queue []Turn
	// inFlight counts chat requests being answered; peak is its highest
	// value among accepted requests, throttled the requests turned away.
	inFlight  int
	peak      int
	throttled int
	// prefixes maps a cached prompt prefix to its size in tokens.
	prefixes map[[sha256.Size]byte]int
	reqs     []Request
	changed  chan struct{} // closed and replaced whenever a request is recorded
	// reasoned holds the IDs of tool calls the fake streamed together with
	// reasoning, which a later request must send that reasoning back with.
	reasoned map[string]bool

	done      chan struct{} // closed by Close so held handlers return
	closeOnce sync.Once
}

// Option configures a Server.
type Option func(*Server)

// WithResponder answers chat requests once the Push queue is empty. f runs
// on the request's handler goroutine and must be safe for concurrent use.
func WithResponder(f func(Request) Turn) Option {
	return func(s *Server) { s.responder = f }
}

// WithDialect sets the default dialect of every turn (DeepSeek when unset).
func WithDialect(d Dialect) Option {
	return func(s *Server) { s.dialect = d }
}

// WithModels sets the model IDs listed by GET <base>/models; the default is
// a single "fake-model".
func WithModels(ids ...string) Option {
	return func(s *Server) { s.models = ids }
}

// WithAPIKey makes every request require "Authorization: Bearer key",
// answering 401 otherwise, to prove a client sends its configured key.
func WithAPIKey(key string) Option {
	return func(s *Server) { s.apiKey = key }
}

// WithThinkingMode makes the fake hold requests to the rule of DeepSeek's
// thinking mode: an assistant message whose tool calls the fake streamed
// together with reasoning must carry a non-empty reasoning_content in every
// later request, or the request is answered 400 with DeepSeek's error
// object ("Missing `reasoning_content` field in the assistant message at
// message index N"). A rejected request is recorded but consumes no
// scripted turn. Assistant messages the fake did not produce, and those it
// produced without reasoning, are not checked, as DeepSeek ignores
// reasoning where it does not need it.
func WithThinkingMode() Option {
	return func(s *Server) { s.thinking = true }
}

// WithMaxInFlight makes the fake behave like an endpoint with a hard
// concurrency limit: a chat request that arrives while n others are being
// answered gets 429 at once, with no Retry-After, and is neither recorded
// nor given a turn. Throttled counts them.
func WithMaxInFlight(n int) Option {
	return func(s *Server) { s.maxInFlight = n }
}

// WithPrefixCache makes synthesised usage report prompt cache hits the way
// DeepSeek's and OpenAI's caches do: a request's prompt is cached, prefix
// by prefix (the tools plus the first k messages, for every k), once the
// fake starts answering it, and a later request is credited with the
// longest cached prefix it begins with. Requests that arrive together,
// before the first of them is answered, all miss.
func WithPrefixCache() Option {
	return func(s *Server) { s.prefixCache = true }
}

// WithQueuedHeaders answers a streamed request the way a busy provider
// does: the response headers and a keep-alive comment go out at once,
// while the request is still queued, and a turn's Latency is then the
// time to its first token. The prompt enters the cache of WithPrefixCache
// at that first token, when its prefill is done, not when the headers
// left. A turn with an error status still gets it before any header.
func WithQueuedHeaders() Option {
	return func(s *Server) { s.queuedHeaders = true }
}

// New starts a fake on a free loopback port. The caller must Close it.
func New(opts ...Option) *Server {
	s := &Server{
		dialect:  DeepSeek,
		models:   []string{"fake-model"},
		changed:  make(chan struct{}),
		done:     make(chan struct{}),
		reasoned: map[string]bool{},
	}
	for _, o := range opts {
		o(s)
	}
	s.hs = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	return s
}

// Start is New with Close registered on tb's cleanup.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s := New(opts...)
	tb.Cleanup(s.Close)
	return s
}

// URL is the base_url to configure: chat requests go to URL()+
// "/chat/completions" and model listing to URL()+"/models".
func (s *Server) URL() string { return s.hs.URL + "/v1" }

// Close stops the server, ending held and delayed responses first. It is
// idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.hs.Close()
	})
}

// Push queues turns; each chat request consumes the oldest one.
func (s *Server) Push(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, turns...)
}

// Remaining is the number of queued turns not yet consumed.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns the chat requests recorded so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Count is the number of chat requests recorded so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// WaitRequests waits until at least n chat requests have arrived and
// returns them, or returns an error after timeout.
func (s *Server) WaitRequests(n int, timeout time.Duration) ([]Request, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if len(s.reqs) >= n {
			out := append([]Request(nil), s.reqs...)
			s.mu.Unlock()
			return out, nil
		}
		got, changed := len(s.reqs), s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			return nil, fmt.Errorf("fake: %d of %d requests after %s", got, n, timeout)
		}
	}
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if s.apiKey != "" && r.Header.Get("Authorization") != "Bearer "+s.apiKey {
		writeError(w, http.StatusUnauthorized, "fake: missing or wrong API key", "invalid_request_error")
		return
	}
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		s.serveChat(w, r)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.serveModels(w)
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("fake: no route for %s %s", r.Method, r.URL.Path), "invalid_request_error")
	}
}

func (s *Server) serveModels(w http.ResponseWriter) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range s.models {
		list.Data = append(list.Data, model{ID: id, Object: "model", Created: 1700000000, OwnedBy: "providertest"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

// Throttled is the number of requests WithMaxInFlight turned away.
func (s *Server) Throttled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.throttled
}

// PeakInFlight is the highest number of chat requests the fake was
// answering at once, counting only those it accepted.
func (s *Server) PeakInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// enter counts a chat request in and reports false when it exceeds the
// WithMaxInFlight limit; leave must follow an accepted one.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxInFlight > 0 && s.inFlight >= s.maxInFlight {
		s.throttled++
		return false
	}
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	return true
}

func (s *Server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away mid-body; nothing to answer
	}
	if !s.enter() {
		writeError(w, http.StatusTooManyRequests, "fake: too many requests in flight", "rate_limit_error")
		return
	}
	defer s.leave()
	req := Request{
		Arrived: arrived,
		Method:  r.Method,
		Path:    r.URL.Path,
		Header:  r.Header.Clone(),
		Body:    body,
	}
	req.parse()
	req = s.record(req)
	if i := s.missingReasoning(req); i >= 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(missingReasoningBody(i))
		_, _ = w.Write([]byte("\n"))
		return
	}

	turn, ok := s.next(req)
	if !ok {
		writeError(w, http.StatusInternalServerError, "fake: no scripted turn left", "server_error")
		return
	}
	ctx := r.Context()
	req.cacheHit = s.cached(req)
	if s.queuedHeaders && req.Stream && req.ParseError == "" && (turn.Status == 0 || turn.Status == http.StatusOK) {
		s.streamQueued(ctx, w, turn, req)
		return
	}
	if !s.wait(ctx, turn.Latency) {
		return
	}
	s.cache(req)
	if turn.Status != 0 && turn.Status != http.StatusOK {
		if turn.RetryAfter != "" {
			w.Header().Set("Retry-After", turn.RetryAfter)
		}
		if turn.Body != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(turn.Status)
			_, _ = io.WriteString(w, turn.Body)
			return
		}
		writeError(w, turn.Status, fmt.Sprintf("fake: scripted status %d", turn.Status), "fake_error")
		return
	}
	if req.ParseError != "" {
		writeError(w, http.StatusBadRequest, "fake: request body is not JSON: "+req.ParseError, "invalid_request_error")
		return
	}
	if turn.Dialect == "" {
		turn.Dialect = s.dialect
	}
	s.noteReasoning(turn, req)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(renderWhole(turn, req))
		return
	}
	s.stream(ctx, w, turn, req)
}

// streamQueued answers as WithQueuedHeaders says: headers and a
// keep-alive comment first, then Latency, then the turn's events.
func (s *Server) streamQueued(ctx context.Context, w http.ResponseWriter, turn Turn, req Request) {
	writeStreamHeaders(w)
	if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
		return
	}
	flushOf(w)()
	if !s.wait(ctx, turn.Latency) {
		return
	}
	s.cache(req)
	if turn.Dialect == "" {
		turn.Dialect = s.dialect
	}
	s.noteReasoning(turn, req)
	s.events(ctx, w, turn, req)
}

// flushOf is w's Flush, or nothing when w cannot flush.
func flushOf(w http.ResponseWriter) func() {
	flusher, _ := w.(http.Flusher)
	return func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// writeStreamHeaders starts an event stream and sends its headers.
func writeStreamHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flushOf(w)()
}

// stream writes the turn's events, applying its fault knobs.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, turn Turn, req Request) {
	writeStreamHeaders(w)
	s.events(ctx, w, turn, req)
}

// events writes the turn's events after the headers, applying its fault
// knobs.
func (s *Server) events(ctx context.Context, w http.ResponseWriter, turn Turn, req Request) {
	flush := flushOf(w)

	events := renderStream(turn, req)
	last := len(events) - 1 // index of [DONE]
	cutAt := -1
	if turn.CutAfterEvents != 0 {
		cutAt = min(max(turn.CutAfterEvents, 0), last)
	}
	faultAt := min(max(turn.FaultAfterEvents, 0), last)

	for i := 0; ; i++ {
		if i == cutAt {
			flush()
			// ErrAbortHandler makes net/http drop the connection without
			// the terminating chunk, which is what a client sees when a
			// real connection breaks.
			panic(http.ErrAbortHandler)
		}
		if i == faultAt && turn.Hold != nil {
			flush()
			if !s.hold(ctx, turn.Hold) {
				return
			}
		}
		if i == faultAt {
			switch {
			case turn.Stall:
				flush()
				s.wait(ctx, -1)
				return
			case turn.StreamError != "":
				_, _ = w.Write(errorEvent(turn.StreamError))
				flush()
				return
			case turn.Malformed:
				if _, err := w.Write(malformedEvent(req.Seq)); err != nil {
					return
				}
			}
		}
		if i > last {
			flush()
			return
		}
		if i > 0 && !s.wait(ctx, turn.ChunkDelay) {
			return
		}
		if _, err := w.Write(events[i]); err != nil {
			return
		}
		flush()
	}
}

// wait sleeps for d, or forever when d is negative, and reports false when
// the client went away or the server closed first.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d == 0 {
		return true
	}
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// hold waits until ch is closed and reports false when the client went
// away or the server closed first.
func (s *Server) hold(ctx context.Context, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// record stores req, assigning its sequence number, and wakes waiters.
func (s *Server) record(req Request) Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Seq = len(s.reqs)
	s.reqs = append(s.reqs, req)
	close(s.changed)
	s.changed = make(chan struct{})
	return req
}

// missingReasoning returns the index of the first message in req that
// thinking mode rejects for lacking its reasoning, or -1.
func (s *Server) missingReasoning(req Request) int {
	if !s.thinking {
		return -1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range req.Messages {
		if m.Role != "assistant" || m.ReasoningContent != "" {
			continue
		}
		for _, tc := range m.ToolCalls {
			if s.reasoned[tc.ID] {
				return i
			}
		}
	}
	return -1
}

// noteReasoning remembers the tool calls a turn streams with reasoning.
func (s *Server) noteReasoning(t Turn, req Request) {
	if !s.thinking || t.Reasoning == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, tc := range t.ToolCalls {
		s.reasoned[callID(req, i, tc)] = true
	}
}

// next picks the reply for req: the oldest queued turn, else the responder.
func (s *Server) next(req Request) (Turn, bool) {
	s.mu.Lock()
	if len(s.queue) > 0 {
		t := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return t, true
	}
	s.mu.Unlock()
	if s.responder == nil {
		return Turn{}, false
	}
	return s.responder(req), true
}

// prefixKeys returns the hash and token size of each prompt prefix of req:
// the model and the tools (which a provider renders before the messages,
// so every prefix holds them) with the first k messages, k = 1..n.
func prefixKeys(req Request) ([][sha256.Size]byte, []int) {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q ", req.Model, req.Tools)
	h.Write(req.tools)
	size := len(req.tools)
	var keys [][sha256.Size]byte
	var sizes []int
	for _, m := range req.Messages {
		b, _ := json.Marshal(m)
		h.Write(b)
		size += len(b)
		var k [sha256.Size]byte
		copy(k[:], h.Sum(nil))
		keys = append(keys, k)
		sizes = append(sizes, size/4)
	}
	return keys, sizes
}

// cached is the size of the longest cached prefix of req.
func (s *Server) cached(req Request) int {
	if !s.prefixCache {
		return 0
	}
	keys, _ := prefixKeys(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(keys) - 1; i >= 0; i-- {
		if n, ok := s.prefixes[keys[i]]; ok {
			return n
		}
	}
	return 0
}

// cache stores every prefix of req.
func (s *Server) cache(req Request) {
	if !s.prefixCache {
		return
	}
	keys, sizes := prefixKeys(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prefixes == nil {
		s.prefixes = map[[sha256.Size]byte]int{}
	}
	for i, k := range keys {
		s.prefixes[k] = sizes[i]
	}
}

// writeError answers with an OpenAI-style error object.
func writeError(w http.ResponseWriter, status int, msg, typ string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorBody(msg, typ))
	_, _ = w.Write([]byte("\n"))
}
