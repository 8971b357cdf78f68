package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/actors"
	"reasonix/actors/event"
	"reasonix/assemble"
	"reasonix/core/config"
	"reasonix/core/provider/providertest"
	"reasonix/core/session"
)

// TestMain fails the package when a test leaves a goroutine behind: every
// session, stream and connection the server started must be gone once the
// tests and their cleanups have run.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// harness is one server on a real loopback listener, whose sessions are
// real Lives over the model fake.
type harness struct {
	t    testing.TB
	fake *providertest.Server
	srv  *Server
	// base is http://127.0.0.1:port; host is 127.0.0.1:port.
	base, host string
	home, cwd  string
	cfg        *config.Config
	// busOpts are given to every session's bus.
	busOpts []event.BusOption
	// entered and release hold Open (harnessOpts).
	entered, release chan struct{}

	mu     sync.Mutex
	opened int
}

type harnessOpts struct {
	mode, token, hash string
	behindProxy       bool
	ping              time.Duration
	now               func() time.Time
	busOpts           []event.BusOption
	// entered, when set, is told each time Open starts; Open then waits
	// for release.
	entered, release chan struct{}
	streamBound      int
	// config is TOML added to the user config.
	config string
}

func newHarness(t testing.TB, o harnessOpts) *harness {
	t.Helper()
	fake := providertest.Start(t)
	h := &harness{t: t, fake: fake, home: t.TempDir(), cwd: t.TempDir(), busOpts: o.busOpts, entered: o.entered, release: o.release}
	text := providertest.ConfigText(fake.URL(), o.config)
	if err := os.WriteFile(config.UserConfigPath(h.home), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Options{Home: h.home, ProjectDir: h.cwd})
	if err != nil {
		t.Fatal(err)
	}
	h.cfg = cfg
	if o.mode == "" {
		o.mode = AuthNone
	}
	srv, err := New(Options{
		Open:     h.open,
		Sessions: func() ([]session.Summary, error) { return session.List(session.ProjectDir(h.home, h.cwd)) },
		Cwd:      h.cwd, Home: h.home,
		AuthMode: o.mode, Token: o.token, PasswordHash: o.hash, BehindProxy: o.behindProxy,
		PingInterval: o.ping, Now: o.now, StreamBound: o.streamBound,
		Assets: testAssets(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.srv, h.host = srv, ln.Addr().String()
	h.base = "http://" + h.host
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return h
}

// testAssets is a page directory of the test's own.
func testAssets(t testing.TB) fs.FS {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "assets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!doctype html><title>test page</title>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "assets", "app.js"), []byte("// app"), 0o644); err != nil {
		t.Fatal(err)
	}
	return os.DirFS(dir)
}

// open is the server's Open: a new session, or a saved one resumed as
// `run --resume` does.
func (h *harness) open(ctx context.Context, req OpenRequest) (*actors.Live, []string, error) {
	if h.entered != nil {
		h.entered <- struct{}{}
		<-h.release
	}
	o := assemble.BuildOptions{Cwd: h.cwd, Model: req.Model, Interactive: true, PlanMode: req.Plan, PermissionMode: req.Posture}
	if req.Resume != "" {
		path := filepath.Join(session.ProjectDir(h.home, h.cwd), req.Resume+".jsonl")
		hd, msgs, _, err := session.Load(path)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		repaired, _ := session.Repair(msgs)
		store, err := session.Reopen(path)
		if err != nil {
			return nil, nil, err
		}
		o.Resume = &assemble.Resume{ID: hd.ID, Transcript: store, History: repaired}
	}
	b, err := assemble.Build(h.cfg, o)
	if err != nil {
		if o.Resume != nil {
			_ = o.Resume.Transcript.Close()
		}
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	live, err := actors.StartLive(b, nil, h.busOpts...)
	if err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	h.opened++
	h.mu.Unlock()
	return live, b.Warnings, nil
}

// req makes a request to the server with the page's Origin; opts change
// it before it is sent.
func (h *harness) req(method, path string, body any, opts ...func(*http.Request)) *http.Response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	h.t.Cleanup(cancel)
	r, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	r.Header.Set("Origin", h.base)
	for _, o := range opts {
		o(r)
	}
	resp, err := noRedirect.Do(r)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	h.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// noRedirect is a client that shows redirects instead of following them
// and keeps no connections, so no goroutine outlives a test.
var noRedirect = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Transport:     &http.Transport{DisableKeepAlives: true},
}

func withHeader(k, v string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set(k, v) }
}

func withCookie(c *http.Cookie) func(*http.Request) {
	return func(r *http.Request) { r.AddCookie(c) }
}

// body reads and closes resp's body.
func body(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return string(b)
}

// want checks resp's status and returns its body.
func want(t testing.TB, resp *http.Response, status int) string {
	t.Helper()
	b := body(t, resp)
	if resp.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d: %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, b)
	}
	return b
}

// decode reads resp's JSON body into v after checking its status.
func decode(t testing.TB, resp *http.Response, status int, v any) {
	t.Helper()
	b := want(t, resp, status)
	if err := json.Unmarshal([]byte(b), v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
}

// newSession opens a new session and returns its id.
func (h *harness) newSession(opts ...func(*http.Request)) string {
	h.t.Helper()
	var out struct{ ID string }
	decode(h.t, h.req("POST", "/api/sessions", map[string]any{}, opts...), http.StatusCreated, &out)
	if out.ID == "" {
		h.t.Fatal("no session id")
	}
	return out.ID
}

// prompt sends a prompt command.
func (h *harness) prompt(id, text string, opts ...func(*http.Request)) {
	h.t.Helper()
	want(h.t, h.req("POST", "/api/sessions/"+id+"/commands", map[string]any{"type": "prompt", "text": text}, opts...), http.StatusAccepted)
}

// sse is one event stream read by the test.
type sse struct {
	t      testing.TB
	resp   *http.Response
	rd     *bufio.Reader
	cancel context.CancelFunc
	// pings counts the ping comments seen.
	pings int
}

// message is one SSE message.
type message struct {
	ID    string
	HasID bool
	Data  string
}

// kind is the message's "type".
func (m message) kind() string {
	var v struct{ Type string }
	_ = json.Unmarshal([]byte(m.Data), &v)
	return v.Type
}

// field reads one top-level field of the message's JSON.
func (m message) field(name string) any {
	var v map[string]any
	_ = json.Unmarshal([]byte(m.Data), &v)
	return v[name]
}

// stream connects to a session's events; query is appended to the path.
func (h *harness) stream(id, query string, opts ...func(*http.Request)) *sse {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	r, err := http.NewRequestWithContext(ctx, "GET", h.base+"/api/sessions/"+id+"/events"+query, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, o := range opts {
		o(r)
	}
	resp, err := noRedirect.Do(r)
	if err != nil {
		cancel()
		h.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		h.t.Fatalf("events: status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		h.t.Fatalf("events: content type %q", ct)
	}
	s := &sse{t: h.t, resp: resp, rd: bufio.NewReader(resp.Body), cancel: cancel}
	h.t.Cleanup(s.close)
	return s
}

func (s *sse) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next reads the next message; io.EOF when the stream ended.
func (s *sse) next() (message, error) {
	var m message
	var data []string
	for {
		line, err := s.rd.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" && len(data) == 0 {
				return m, io.EOF
			}
			return m, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if len(data) == 0 && !m.HasID {
				continue
			}
			m.Data = strings.Join(data, "\n")
			return m, nil
		case strings.HasPrefix(line, ":"):
			if strings.TrimSpace(line[1:]) == "ping" {
				s.pings++
			}
		case strings.HasPrefix(line, "id: "):
			m.ID, m.HasID = line[len("id: "):], true
		case strings.HasPrefix(line, "data: "):
			data = append(data, line[len("data: "):])
		default:
			s.t.Fatalf("unexpected SSE line %q", line)
		}
	}
}

// must reads the next message or fails.
func (s *sse) must() message {
	s.t.Helper()
	m, err := s.next()
	if err != nil {
		s.t.Fatalf("read event: %v", err)
	}
	return m
}

// until reads messages up to and including the first of kind.
func (s *sse) until(kind string) []message {
	s.t.Helper()
	var out []message
	for {
		m := s.must()
		out = append(out, m)
		if m.kind() == kind {
			return out
		}
	}
}
