package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// httpFake is a streamable HTTP server on loopback around fakeServer,
// with switches for the transport behaviours the client must handle.
type httpFake struct {
	t     *testing.T
	logic *fakeServer
	srv   *httptest.Server
	path  string // request URI the client must use, query included

	sse          bool // answer requests with an event stream
	offerGET     bool // serve the GET stream (else 405)
	deleteStatus int  // status for DELETE; 0 means 200

	mu       sync.Mutex
	session  string
	expired  bool
	seq      int
	seen     []seenRequest
	waiters  map[string]chan Message // server-request answers
	replay   map[string][]string     // Last-Event-ID → events to resume with
	inflight map[string]context.CancelFunc
	pushes   chan Message  // messages for the GET stream
	getOpen  chan struct{} // a GET stream was opened
	hanging  chan struct{} // a hang call is being served
	hungUp   chan struct{} // a hang call ended
	// ignoreCancel leaves a cancelled hang call running until its
	// connection closes.
	ignoreCancel bool
	breakGET     bool // end the first GET stream after one message
}

type seenRequest struct {
	Method string // HTTP method
	RPC    string // JSON-RPC method, or "response"/"" for others
	URI    string
	Header http.Header
}

func newHTTPFake(t *testing.T, configure func(*httpFake)) *httpFake {
	t.Helper()
	f := &httpFake{
		t:        t,
		logic:    &fakeServer{},
		path:     "/custom/endpoint?tenant=a",
		waiters:  map[string]chan Message{},
		replay:   map[string][]string{},
		inflight: map[string]context.CancelFunc{},
		pushes:   make(chan Message, 16),
		getOpen:  make(chan struct{}, 16),
		hanging:  make(chan struct{}, 16),
		hungUp:   make(chan struct{}, 16),
	}
	if configure != nil {
		configure(f)
	}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *httpFake) url() string { return f.srv.URL + f.path }

func (f *httpFake) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

func (f *httpFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
	}
	var msg Message
	var rpc string
	if len(body) > 0 {
		m, err := DecodeMessage(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		msg, rpc = m, m.Method
		if m.Kind() == KindResponse {
			rpc = "response"
		}
	}
	f.mu.Lock()
	f.seen = append(f.seen, seenRequest{Method: r.Method, RPC: rpc, URI: r.URL.RequestURI(), Header: r.Header.Clone()})
	session, expired := f.session, f.expired
	f.mu.Unlock()

	if r.URL.RequestURI() != f.path {
		http.NotFound(w, r)
		return
	}
	if rpc != "initialize" && (expired || r.Header.Get("Mcp-Session-Id") != session) {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodPost:
		f.post(w, r, msg)
	case http.MethodGet:
		f.get(w, r)
	case http.MethodDelete:
		if f.deleteStatus != 0 {
			w.WriteHeader(f.deleteStatus)
		}
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (f *httpFake) post(w http.ResponseWriter, r *http.Request, msg Message) {
	switch msg.Kind() {
	case KindResponse:
		f.mu.Lock()
		ch := f.waiters[idKey(msg.ID)]
		delete(f.waiters, idKey(msg.ID))
		f.mu.Unlock()
		if ch != nil {
			ch <- msg
		}
		w.WriteHeader(http.StatusAccepted)
		return
	case KindNotification:
		if msg.Method == "notifications/cancelled" && !f.ignoreCancel {
			var cp struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(msg.Params, &cp)
			f.mu.Lock()
			if cancel := f.inflight[idKey(cp.RequestID)]; cancel != nil {
				cancel()
			}
			f.mu.Unlock()
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if msg.Method == "initialize" {
		f.mu.Lock()
		f.session = "session-1"
		f.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", "session-1")
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	f.mu.Lock()
	f.inflight[idKey(msg.ID)] = cancel
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.inflight, idKey(msg.ID))
		f.mu.Unlock()
	}()

	tool := toolName(msg)
	if tool == "hang" {
		f.hanging <- struct{}{}
		defer func() { f.hungUp <- struct{}{} }()
	}
	if tool == "expire" {
		// The server forgets the session while the client still uses it.
		f.mu.Lock()
		f.expired = true
		f.mu.Unlock()
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	if !f.sse {
		resp := f.logic.handle(ctx, msg, peer{
			send: func(Message) error { return errors.New("no stream in json mode") },
			ask: func(context.Context, string, json.RawMessage) (Message, error) {
				return Message{}, errors.New("no stream in json mode")
			},
			note: func(string) {},
		})
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(resp)
		_, _ = w.Write(b)
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	stream := f.nextStream()
	ev := 0
	writeEvent := func(data string) error {
		ev++
		_, err := fmt.Fprintf(w, "id: %s-%d\ndata: %s\n\n", stream, ev, data)
		w.(http.Flusher).Flush()
		return err
	}
	// Prime resumption, as servers of 2025-11-25 do: an id, a retry
	// delay, empty data.
	primeID := stream + "-0"
	if tool != "noid" {
		fmt.Fprintf(w, "id: %s\nretry: 10\ndata: \n\n", primeID)
		w.(http.Flusher).Flush()
	}
	switch tool {
	case "resume":
		// The stream ends at once; the response waits to be fetched
		// with GET and Last-Event-ID.
		resp := f.logic.handle(ctx, echoCall(msg), peer{})
		b, _ := json.Marshal(resp)
		f.mu.Lock()
		f.replay[primeID] = []string{fmt.Sprintf("id: %s-1\ndata: %s\n\n", stream, b)}
		f.mu.Unlock()
		return
	case "resumefail", "noid":
		return
	}
	p := peer{
		send: func(m Message) error {
			b, _ := json.Marshal(m)
			return writeEvent(string(b))
		},
		ask: func(ctx context.Context, method string, params json.RawMessage) (Message, error) {
			f.mu.Lock()
			f.seq++
			id := json.RawMessage(fmt.Sprintf(`{"srv":%d}`, f.seq))
			ch := make(chan Message, 1)
			f.waiters[idKey(id)] = ch
			f.mu.Unlock()
			b, _ := json.Marshal(Message{ID: id, Method: method, Params: params})
			if err := writeEvent(string(b)); err != nil {
				return Message{}, err
			}
			select {
			case m := <-ch:
				return m, nil
			case <-ctx.Done():
				return Message{}, ctx.Err()
			}
		},
		note: func(string) {},
	}
	resp := f.logic.handle(ctx, msg, p)
	if ctx.Err() != nil {
		return
	}
	b, _ := json.Marshal(resp)
	_ = writeEvent(string(b))
}

func (f *httpFake) nextStream() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	return fmt.Sprintf("s%d", f.seq)
}

// get resumes a POST stream when Last-Event-ID names one, and otherwise
// serves the standalone stream (when offered) from f.pushes.
func (f *httpFake) get(w http.ResponseWriter, r *http.Request) {
	last := r.Header.Get("Last-Event-ID")
	f.mu.Lock()
	events, resuming := f.replay[last]
	f.mu.Unlock()
	if resuming || strings.HasPrefix(last, "s") {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			_, _ = io.WriteString(w, e)
		}
		return
	}
	if !f.offerGET {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "retry: 10\n\n")
	w.(http.Flusher).Flush()
	f.getOpen <- struct{}{}
	for n := 1; ; n++ {
		select {
		case m := <-f.pushes:
			b, _ := json.Marshal(m)
			fmt.Fprintf(w, "id: g-%d\ndata: %s\n\n", n, b)
			w.(http.Flusher).Flush()
			f.mu.Lock()
			brk := f.breakGET
			f.breakGET = false
			f.mu.Unlock()
			if brk {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}

// toolName is the tool a tools/call names, or "".
func toolName(m Message) string {
	if m.Method != "tools/call" {
		return ""
	}
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.Name
}

// echoCall turns a call of a transport-test tool into an echo of its name.
func echoCall(m Message) Message {
	params, _ := json.Marshal(map[string]any{"name": "echo", "arguments": map[string]string{"text": "resumed " + toolName(m)}})
	return Message{ID: m.ID, Method: "tools/call", Params: params}
}

func connectHTTP(t *testing.T, f *httpFake, opts HTTPOptions, copts Options) (*Client, *HTTP) {
	t.Helper()
	if opts.Headers == nil {
		opts.Headers = map[string]string{"authorization": "Bearer secret"}
	}
	tr, err := NewHTTP(f.url(), opts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Connect(testCtx(t), tr, testClientInfo, copts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, tr
}

func TestHTTPBasics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sse  bool
	}{
		{name: "json replies", sse: false},
		{name: "event-stream replies", sse: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newHTTPFake(t, func(f *httpFake) { f.sse = tt.sse })
			c, tr := connectHTTP(t, f, HTTPOptions{}, Options{})
			ctx := testCtx(t)
			if tr.SessionID() != "session-1" {
				t.Errorf("SessionID = %q", tr.SessionID())
			}
			tools, err := c.ListTools(ctx)
			if err != nil || len(tools) != len(fakeTools) {
				t.Fatalf("ListTools = %d tools, %v", len(tools), err)
			}
			res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"over http"}`), nil)
			if err != nil || res.Text() != "over http" {
				t.Fatalf("echo = %v, %v", res, err)
			}
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.ReadResource(ctx, "fake://one"); err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			checkHTTPRequests(t, f.requests())
		})
	}
}

// checkHTTPRequests checks the headers of every request a session made.
func checkHTTPRequests(t *testing.T, reqs []seenRequest) {
	t.Helper()
	if len(reqs) < 3 || reqs[0].RPC != "initialize" || reqs[1].RPC != "notifications/initialized" {
		t.Fatalf("requests start %+v", reqs[:min(len(reqs), 2)])
	}
	if last := reqs[len(reqs)-1]; last.Method != http.MethodDelete {
		t.Errorf("last request is %s %s, want DELETE", last.Method, last.RPC)
	}
	for i, r := range reqs {
		where := fmt.Sprintf("request %d (%s %s)", i, r.Method, r.RPC)
		if r.URI != "/custom/endpoint?tenant=a" {
			t.Errorf("%s went to %q", where, r.URI)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer secret" {
			t.Errorf("%s: Authorization = %q", where, got)
		}
		if r.Method == http.MethodPost {
			if got := r.Header.Get("Accept"); got != "application/json, text/event-stream" {
				t.Errorf("%s: Accept = %q", where, got)
			}
			if got := r.Header.Get("Content-Type"); got != "application/json" {
				t.Errorf("%s: Content-Type = %q", where, got)
			}
		}
		sid, pv := r.Header.Get("Mcp-Session-Id"), r.Header.Get("Mcp-Protocol-Version")
		if i == 0 {
			if sid != "" || pv != "" {
				t.Errorf("initialize carried session %q version %q", sid, pv)
			}
			continue
		}
		if sid != "session-1" || pv != LatestProtocolVersion {
			t.Errorf("%s: session %q version %q", where, sid, pv)
		}
	}
}

func TestHTTPStreamFeatures(t *testing.T) {
	t.Parallel()
	f := newHTTPFake(t, func(f *httpFake) { f.sse = true })
	changed := make(chan ListKind, 8)
	c, _ := connectHTTP(t, f, HTTPOptions{}, Options{
		OnListChanged: func(k ListKind) { changed <- k },
		Elicitor: func(context.Context, ElicitRequest) (ElicitResult, error) {
			return ElicitResult{Action: ElicitAccept, Content: map[string]any{"ok": true}}, nil
		},
	})
	t.Run("progress", func(t *testing.T) {
		var got []float64
		_, err := c.CallTool(testCtx(t), "progress", json.RawMessage(`{"steps":3}`), func(p Progress) { got = append(got, p.Progress) })
		if err != nil || !slices.Equal(got, []float64{1, 2, 3}) {
			t.Errorf("progress = %v, %v", got, err)
		}
	})
	t.Run("server request with an object id", func(t *testing.T) {
		res, err := c.CallTool(testCtx(t), "ask", json.RawMessage(`{"method":"elicitation/create","params":{"message":"ok?"}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"error":null,"result":{"action":"accept","content":{"ok":true}}}`; res.Text() != want {
			t.Errorf("answer = %s, want %s", res.Text(), want)
		}
	})
	t.Run("notifications on the reply stream", func(t *testing.T) {
		if _, err := c.CallTool(testCtx(t), "changed", nil, nil); err != nil {
			t.Fatal(err)
		}
		if k := <-changed; k != ListTools {
			t.Errorf("first change = %q", k)
		}
	})
	t.Run("cancellation", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
		defer cancel()
		if _, err := c.CallTool(ctx, "hang", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error = %v", err)
		}
		reqs := f.requests()
		last := reqs[len(reqs)-1]
		if last.RPC != "notifications/cancelled" {
			t.Errorf("last request = %s, want notifications/cancelled", last.RPC)
		}
	})
}

// TestHTTPCancelStopsStream checks that cancelling a call also drops the
// event stream that would carry its response, rather than keep reading
// (and resuming) it for nothing.
func TestHTTPCancelStopsStream(t *testing.T) {
	t.Parallel()
	f := newHTTPFake(t, func(f *httpFake) { f.sse, f.ignoreCancel = true, true })
	c, _ := connectHTTP(t, f, HTTPOptions{}, Options{})
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() {
		<-f.hanging
		cancel()
	}()
	if _, err := c.CallTool(ctx, "hang", nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v", err)
	}
	// The server ignores the cancellation; only the client hanging up
	// ends the call there.
	timer := time.NewTimer(testTimeout)
	defer timer.Stop()
	select {
	case <-f.hungUp:
	case <-timer.C:
		t.Fatal("the response stream of a cancelled call stayed open")
	}
}

func TestHTTPResumesBrokenStream(t *testing.T) {
	t.Parallel()
	f := newHTTPFake(t, func(f *httpFake) { f.sse = true })
	c, _ := connectHTTP(t, f, HTTPOptions{}, Options{})
	res, err := c.CallTool(testCtx(t), "resume", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "resumed resume" {
		t.Errorf("result = %q", res.Text())
	}
	var resumed []seenRequest
	for _, r := range f.requests() {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			resumed = append(resumed, r)
		}
	}
	if len(resumed) != 1 || !strings.HasSuffix(resumed[0].Header.Get("Last-Event-ID"), "-0") || resumed[0].Header.Get("Accept") != "text/event-stream" {
		t.Errorf("resuming requests = %+v", resumed)
	}
}

func TestHTTPStreamLost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tool string
		want string
	}{
		{name: "cannot resume without an id", tool: "noid", want: "cannot be resumed"},
		{name: "gives up after bounded attempts", tool: "resumefail", want: "gave up after 2 reconnections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newHTTPFake(t, func(f *httpFake) { f.sse = true })
			c, _ := connectHTTP(t, f, HTTPOptions{MaxReconnects: 2}, Options{})
			_, err := c.CallTool(testCtx(t), tt.tool, nil, nil)
			var rpcErr *Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != CodeConnectionClosed || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want a connection-closed error saying %q", err, tt.want)
			}
			// The connection itself survives a lost reply stream.
			if err := c.Ping(testCtx(t)); err != nil {
				t.Errorf("Ping: %v", err)
			}
		})
	}
}

func TestHTTPGetStream(t *testing.T) {
	t.Parallel()
	f := newHTTPFake(t, func(f *httpFake) { f.offerGET, f.breakGET = true, true })
	changed := make(chan ListKind, 8)
	connectHTTP(t, f, HTTPOptions{}, Options{OnListChanged: func(k ListKind) { changed <- k }})
	<-f.getOpen
	for _, m := range []string{"notifications/tools/list_changed", "notifications/resources/list_changed"} {
		n, _ := NewNotification(m, nil)
		f.pushes <- n
	}
	// The first GET stream ends after one message; the second message
	// arrives on the stream reopened with Last-Event-ID.
	if a, b := <-changed, <-changed; a != ListTools || b != ListResources {
		t.Errorf("changes = %q, %q", a, b)
	}
	var gets []string
	for _, r := range f.requests() {
		if r.Method == http.MethodGet {
			gets = append(gets, r.Header.Get("Last-Event-ID"))
		}
	}
	if !slices.Equal(gets, []string{"", "g-1"}) {
		t.Errorf("GET requests carried Last-Event-ID %q", gets)
	}
}

func TestHTTPSessionExpired(t *testing.T) {
	t.Parallel()
	f := newHTTPFake(t, nil)
	c, _ := connectHTTP(t, f, HTTPOptions{}, Options{})
	if _, err := c.CallTool(testCtx(t), "expire", nil, nil); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("error = %v, want ErrSessionExpired", err)
	}
	<-c.Done()
	if !errors.Is(c.Err(), ErrSessionExpired) {
		t.Errorf("Err = %v", c.Err())
	}
}

func TestHTTPErrors(t *testing.T) {
	t.Parallel()
	t.Run("status error", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "no token", http.StatusUnauthorized)
		}))
		defer srv.Close()
		tr, err := NewHTTP(srv.URL, HTTPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Connect(testCtx(t), tr, testClientInfo, Options{})
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized || !strings.Contains(err.Error(), "no token") {
			t.Fatalf("error = %v, want a 401 StatusError", err)
		}
	})
	t.Run("unexpected content type", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html>")
		}))
		defer srv.Close()
		tr, err := NewHTTP(srv.URL, HTTPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Connect(testCtx(t), tr, testClientInfo, Options{}); err == nil || !strings.Contains(err.Error(), "text/html") {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("request acknowledged but not answered", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusAccepted)
		}))
		defer srv.Close()
		tr, err := NewHTTP(srv.URL, HTTPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Connect(testCtx(t), tr, testClientInfo, Options{}); err == nil || !strings.Contains(err.Error(), "without answering") {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("bad urls", func(t *testing.T) {
		t.Parallel()
		for _, u := range []string{"", "ftp://x/mcp", "/relative", "http://"} {
			if _, err := NewHTTP(u, HTTPOptions{}); err == nil {
				t.Errorf("NewHTTP(%q) succeeded", u)
			}
		}
	})
}

func TestHTTPDeleteOnClose(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
	}{
		{name: "accepted", status: http.StatusNoContent},
		{name: "method not allowed is ignored", status: http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newHTTPFake(t, func(f *httpFake) { f.deleteStatus = tt.status })
			c, _ := connectHTTP(t, f, HTTPOptions{}, Options{})
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			reqs := f.requests()
			if last := reqs[len(reqs)-1]; last.Method != http.MethodDelete || last.Header.Get("Mcp-Session-Id") != "session-1" {
				t.Errorf("last request %s with session %q", last.Method, last.Header.Get("Mcp-Session-Id"))
			}
		})
	}
}

func TestHTTPCloseDuringStream(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newHTTPFake(t, func(f *httpFake) { f.sse, f.offerGET = true, true })
	tr, err := NewHTTP(f.url(), HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Connect(testCtx(t), tr, testClientInfo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	<-f.getOpen
	hung := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "hang", nil, nil)
		hung <- err
	}()
	<-f.hanging
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-hung; !errors.Is(err, ErrClosed) {
		t.Errorf("pending call = %v, want ErrClosed", err)
	}
	f.srv.Close()
}
