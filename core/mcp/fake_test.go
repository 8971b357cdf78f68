package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test servers. One fakeServer holds the protocol logic; it runs in a
// real subprocess (this test binary, re-executed by TestMain when
// helperEnv is set) behind the stdio transport, and in an httptest server
// behind the HTTP transport.

const (
	helperEnv        = "REASONIX_MCP_TEST_SERVER"
	helperVersionEnv = "REASONIX_MCP_TEST_VERSION" // protocol version to answer; empty echoes the client's
	helperCursorEnv  = "REASONIX_MCP_TEST_CURSOR"  // "loop": tools/list repeats its cursor forever
	helperBannerEnv  = "REASONIX_MCP_TEST_BANNER"  // non-empty: print a non-JSON line on stdout first
	// helperStubbornEnv makes the fake outlive the end of its stdin:
	// "eof" keeps running until SIGTERM, "term" also ignores SIGTERM.
	helperStubbornEnv = "REASONIX_MCP_TEST_STUBBORN"
	// helperGrandchildEnv makes the fake start a child of its own that
	// inherits its stdout and stderr and never exits; its pid goes to
	// stderr as "grandchild pid N". The child runs with helperEnv=sleep.
	helperGrandchildEnv = "REASONIX_MCP_TEST_GRANDCHILD"
)

// fakeTools are the tools the fake lists, three per page. Schema keys are
// deliberately unsorted so tests can see the client keeps them raw.
var fakeTools = []string{
	`{"name":"echo","title":"Echo","description":"Echo text back","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},"annotations":{"readOnlyHint":true,"title":"Echo tool"}}`,
	`{"name":"fail","description":"Always reports a tool error","inputSchema":{"type":"object"}}`,
	`{"name":"progress","description":"Reports progress","inputSchema":{"type":"object","properties":{"steps":{"type":"integer"}}},"annotations":{"readOnlyHint":true}}`,
	`{"name":"hang","description":"Never answers","inputSchema":{"type":"object"}}`,
	`{"name":"die","description":"Exits with status 3","inputSchema":{"type":"object"}}`,
	`{"name":"ask","description":"Sends a request to the client","inputSchema":{"type":"object"}}`,
	`{"name":"changed","description":"Announces list changes","inputSchema":{"type":"object"}}`,
	`{"name":"initparams","description":"Returns the initialize params","inputSchema":{"type":"object"}}`,
	`{"name":"env","description":"Returns an environment variable","inputSchema":{"type":"object"}}`,
	`{"name":"delete things","description":"Destructive","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true,"readOnlyHint":false}}`,
}

var fakePrompts = []string{
	`{"name":"greet","description":"Greets","arguments":[{"name":"name","required":true}]}`,
	`{"name":"plain"}`,
	`{"name":"third"}`,
	`{"name":"fourth"}`,
}

var fakeResources = []string{
	`{"uri":"fake://one","name":"one","mimeType":"text/plain"}`,
	`{"uri":"fake://two","name":"two"}`,
	`{"uri":"fake://three","name":"three"}`,
	`{"uri":"fake://four","name":"four"}`,
}

const fakePageSize = 3

// fakeServer answers requests; it is safe for concurrent use.
type fakeServer struct {
	version    string
	loopCursor bool

	mu         sync.Mutex
	initParams json.RawMessage
}

// peer is how a handler talks back while it works: send writes a message
// on the stream of the request being handled, ask sends the client a
// request and waits for its answer, note records a diagnostic line.
type peer struct {
	send func(Message) error
	ask  func(ctx context.Context, method string, params json.RawMessage) (Message, error)
	note func(string)
}

func (f *fakeServer) handle(ctx context.Context, req Message, p peer) Message {
	ok := func(v any) Message {
		m, err := NewResponse(req.ID, v)
		if err != nil {
			return NewErrorResponse(req.ID, CodeInternalError, err.Error())
		}
		return m
	}
	switch req.Method {
	case "initialize":
		var ip struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &ip)
		f.mu.Lock()
		f.initParams = req.Params
		f.mu.Unlock()
		v := f.version
		if v == "" {
			v = ip.ProtocolVersion
		}
		return ok(map[string]any{
			"protocolVersion": v,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}, "prompts": map[string]any{}, "resources": map[string]any{"subscribe": true}, "logging": map[string]any{}},
			"serverInfo":      map[string]any{"name": "fake", "version": "1.2.3"},
			"instructions":    "use the fake wisely",
		})
	case "ping":
		return ok(struct{}{})
	case "tools/list":
		return ok(f.page(req.Params, "tools", fakeTools))
	case "prompts/list":
		return ok(f.page(req.Params, "prompts", fakePrompts))
	case "resources/list":
		return ok(f.page(req.Params, "resources", fakeResources))
	case "prompts/get":
		var gp struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		}
		_ = json.Unmarshal(req.Params, &gp)
		if gp.Name != "greet" {
			return NewErrorResponse(req.ID, CodeInvalidParams, "unknown prompt "+gp.Name)
		}
		return ok(map[string]any{"description": "a greeting", "messages": []any{
			map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Hello, " + gp.Arguments["name"] + "!"}},
		}})
	case "resources/read":
		var rp struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(req.Params, &rp)
		if !strings.HasPrefix(rp.URI, "fake://") {
			return NewErrorResponse(req.ID, -32002, "resource not found")
		}
		return ok(map[string]any{"contents": []any{map[string]any{"uri": rp.URI, "mimeType": "text/plain", "text": "contents of " + rp.URI}}})
	case "tools/call":
		return f.callTool(ctx, req, p, ok)
	}
	return NewErrorResponse(req.ID, CodeMethodNotFound, "method not found: "+req.Method)
}

func (f *fakeServer) page(params json.RawMessage, key string, items []string) map[string]any {
	var pp struct {
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(params, &pp)
	start, _ := strconv.Atoi(pp.Cursor)
	if f.loopCursor {
		start = 0
	}
	end := min(start+fakePageSize, len(items))
	raw := make([]json.RawMessage, 0, end-start)
	for _, it := range items[start:end] {
		raw = append(raw, json.RawMessage(it))
	}
	out := map[string]any{key: raw}
	switch {
	case f.loopCursor:
		out["nextCursor"] = "again"
	case end < len(items):
		out["nextCursor"] = strconv.Itoa(end)
	}
	return out
}

func textResult(text string, isError bool) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": isError}
}

func (f *fakeServer) callTool(ctx context.Context, req Message, p peer, ok func(any) Message) Message {
	var cp struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(req.Params, &cp); err != nil {
		return NewErrorResponse(req.ID, CodeInvalidParams, err.Error())
	}
	var args map[string]json.RawMessage
	_ = json.Unmarshal(cp.Arguments, &args)
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(args[k], &s)
		return s
	}
	switch cp.Name {
	case "echo":
		return ok(textResult(str("text"), false))
	case "fail":
		return ok(textResult("it failed", true))
	case "progress":
		var steps int
		_ = json.Unmarshal(args["steps"], &steps)
		if len(cp.Meta.ProgressToken) > 0 {
			for i := 1; i <= steps; i++ {
				n, _ := NewNotification("notifications/progress", map[string]any{
					"progressToken": cp.Meta.ProgressToken, "progress": i, "total": steps, "message": fmt.Sprintf("step %d", i),
				})
				if err := p.send(n); err != nil {
					return NewErrorResponse(req.ID, CodeInternalError, err.Error())
				}
			}
		}
		return ok(textResult("done", false))
	case "hang":
		p.note("started hang " + string(req.ID))
		<-ctx.Done()
		return NewErrorResponse(req.ID, CodeInternalError, "cancelled")
	case "die":
		p.note("fatal: boom")
		os.Exit(3)
	case "ask":
		resp, err := p.ask(ctx, str("method"), args["params"])
		if err != nil {
			return NewErrorResponse(req.ID, CodeInternalError, err.Error())
		}
		b, _ := json.Marshal(map[string]any{"result": resp.Result, "error": resp.Error})
		return ok(textResult(string(b), false))
	case "changed":
		for _, method := range []string{"notifications/tools/list_changed", "notifications/prompts/list_changed"} {
			n, _ := NewNotification(method, nil)
			_ = p.send(n)
		}
		n, _ := NewNotification("notifications/message", map[string]any{"level": "warning", "logger": "fake", "data": "lists changed"})
		_ = p.send(n)
		return ok(textResult("ok", false))
	case "initparams":
		f.mu.Lock()
		defer f.mu.Unlock()
		return ok(textResult(string(f.initParams), false))
	case "env":
		return ok(textResult(os.Getenv(str("name")), false))
	}
	return NewErrorResponse(req.ID, CodeInvalidParams, "unknown tool "+cp.Name)
}

// runHelperServer is the stdio fake: it runs in the re-executed test
// binary, reads one message per line and answers each request on its own
// goroutine, so that hang and ask can wait while other requests proceed.
func runHelperServer() int {
	if os.Getenv(helperEnv) == "sleep" {
		time.Sleep(time.Hour)
		return 0
	}
	if os.Getenv(helperGrandchildEnv) != "" {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=sleep", helperGrandchildEnv+"=")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "start grandchild:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "grandchild pid %d\n", cmd.Process.Pid)
	}
	switch os.Getenv(helperStubbornEnv) {
	case "term":
		signal.Ignore(syscall.SIGTERM)
		defer time.Sleep(time.Hour)
	case "eof":
		defer time.Sleep(time.Hour)
	}
	f := &fakeServer{version: os.Getenv(helperVersionEnv), loopCursor: os.Getenv(helperCursorEnv) == "loop"}
	if os.Getenv(helperBannerEnv) != "" {
		fmt.Println("fake server starting (this line is not JSON)")
	}
	var wmu sync.Mutex
	write := func(m Message) error {
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		wmu.Lock()
		defer wmu.Unlock()
		_, err = os.Stdout.Write(append(b, '\n'))
		return err
	}
	note := func(s string) { fmt.Fprintln(os.Stderr, s) }

	var mu sync.Mutex
	inflight := map[string]context.CancelFunc{}
	waiters := map[string]chan Message{}
	seq := 0
	ask := func(ctx context.Context, method string, params json.RawMessage) (Message, error) {
		mu.Lock()
		seq++
		id := json.RawMessage(fmt.Sprintf(`"srv-%d"`, seq))
		ch := make(chan Message, 1)
		waiters[idKey(id)] = ch
		mu.Unlock()
		if err := write(Message{ID: id, Method: method, Params: params}); err != nil {
			return Message{}, err
		}
		select {
		case m := <-ch:
			return m, nil
		case <-ctx.Done():
			return Message{}, ctx.Err()
		}
	}
	p := peer{send: write, ask: ask, note: note}

	var wg sync.WaitGroup
	r := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			m, derr := DecodeMessage(line)
			switch {
			case derr != nil:
				note("bad message: " + derr.Error())
			case m.Kind() == KindResponse:
				mu.Lock()
				ch := waiters[idKey(m.ID)]
				delete(waiters, idKey(m.ID))
				mu.Unlock()
				if ch != nil {
					ch <- m
				}
			case m.Method == "notifications/cancelled":
				var cp struct {
					RequestID json.RawMessage `json:"requestId"`
					Reason    string          `json:"reason"`
				}
				_ = json.Unmarshal(m.Params, &cp)
				mu.Lock()
				cancel := inflight[idKey(cp.RequestID)]
				mu.Unlock()
				if cancel != nil {
					cancel()
				}
				note(fmt.Sprintf("cancelled request %s: %s", cp.RequestID, cp.Reason))
			case m.Kind() == KindRequest:
				ctx, cancel := context.WithCancel(context.Background())
				key := idKey(m.ID)
				mu.Lock()
				inflight[key] = cancel
				mu.Unlock()
				wg.Go(func() {
					resp := f.handle(ctx, m, p)
					mu.Lock()
					delete(inflight, key)
					mu.Unlock()
					if ctx.Err() == nil {
						_ = write(resp)
					}
					cancel()
				})
			}
		}
		if err != nil {
			break
		}
	}
	mu.Lock()
	for _, cancel := range inflight {
		cancel()
	}
	mu.Unlock()
	wg.Wait()
	return 0
}

// logRecorder is a slog.Handler that keeps every record's message and
// attributes as one line, and lets a test wait for a line.
type logRecorder struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{}
}

func newLogRecorder() *logRecorder { return &logRecorder{changed: make(chan struct{})} }

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecorder) WithGroup(string) slog.Handler            { return l }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, b.String())
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
	return nil
}

// wait blocks until a line containing substr is logged, failing the test
// after a generous bound.
func (l *logRecorder) wait(t *testing.T, substr string) string {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		for _, line := range l.lines {
			if strings.Contains(line, substr) {
				l.mu.Unlock()
				return line
			}
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("no log line containing %q; got:\n%s", substr, strings.Join(l.snapshot(), "\n"))
		}
	}
}

func (l *logRecorder) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}
