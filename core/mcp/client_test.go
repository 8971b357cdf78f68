package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// testTimeout bounds every test's I/O so that a bug fails instead of
// hanging; nothing waits for it to pass.
const testTimeout = 30 * time.Second

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

var testClientInfo = Implementation{Name: "reasonix-test", Version: "0.0.1"}

// startFakeStdio starts the stdio fake (this binary re-executed) with
// extra environment, without the handshake.
func startFakeStdio(t *testing.T, env map[string]string, log *slog.Logger) *Stdio {
	t.Helper()
	e := map[string]string{helperEnv: "1", "GORACE": helperGORACE()}
	for k, v := range env {
		e[k] = v
	}
	tr, err := StartStdio(context.Background(), StdioCommand{Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: e}, log)
	if err != nil {
		t.Fatalf("StartStdio: %v", err)
	}
	return tr
}

// helperGORACE keeps the race detector, when on, from pausing a second at
// the helper's exit, which would slow every Close.
func helperGORACE() string {
	return strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
}

// connectFake starts the stdio fake and connects to it. The client is
// closed when the test ends.
func connectFake(t *testing.T, env map[string]string, opts Options) (*Client, *Stdio, *logRecorder) {
	t.Helper()
	rec := newLogRecorder()
	if opts.Logger == nil {
		opts.Logger = slog.New(rec)
	}
	tr := startFakeStdio(t, env, opts.Logger)
	c, err := Connect(testCtx(t), tr, testClientInfo, opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, tr, rec
}

func TestHandshakeVersions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		answer  string
		want    string
		wantErr []string
	}{
		{name: "latest", answer: "", want: LatestProtocolVersion},
		{name: "2025-06-18 fallback", answer: "2025-06-18", want: "2025-06-18"},
		{name: "2025-03-26 fallback", answer: "2025-03-26", want: "2025-03-26"},
		{name: "2024-11-05, the oldest the SDK takes", answer: "2024-11-05", want: "2024-11-05"},
		{name: "too old", answer: "2024-10-07", wantErr: []string{`"2024-10-07"`, LatestProtocolVersion}},
		{name: "unknown", answer: "2099-01-01", wantErr: []string{`"2099-01-01"`, LatestProtocolVersion}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := startFakeStdio(t, map[string]string{helperVersionEnv: tt.answer}, nil)
			c, err := Connect(testCtx(t), tr, testClientInfo, Options{})
			if tt.wantErr != nil {
				if err == nil {
					_ = c.Close()
					t.Fatal("Connect succeeded, want a version error")
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %s", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer c.Close()
			if got := c.ProtocolVersion(); got != tt.want {
				t.Errorf("ProtocolVersion = %q, want %q", got, tt.want)
			}
			if got := c.ServerInfo(); got.Name != "fake" || got.Version != "1.2.3" {
				t.Errorf("ServerInfo = %+v", got)
			}
			if c.Instructions() != "use the fake wisely" {
				t.Errorf("Instructions = %q", c.Instructions())
			}
			caps := c.Capabilities()
			if caps.Tools == nil || !caps.Tools.ListChanged || caps.Prompts == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Logging == nil {
				t.Errorf("Capabilities = %+v", caps)
			}
		})
	}
}

func TestCapabilitiesAdvertised(t *testing.T) {
	t.Parallel()
	elicitor := func(context.Context, ElicitRequest) (ElicitResult, error) {
		return ElicitResult{Action: ElicitCancel}, nil
	}
	tests := []struct {
		name        string
		elicitor    Elicitor
		wantElicits bool
	}{
		{name: "without elicitor", elicitor: nil, wantElicits: false},
		{name: "with elicitor", elicitor: elicitor, wantElicits: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _, _ := connectFake(t, nil, Options{Elicitor: tt.elicitor})
			res, err := c.CallTool(testCtx(t), "initparams", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var p struct {
				ProtocolVersion string                     `json:"protocolVersion"`
				Capabilities    map[string]json.RawMessage `json:"capabilities"`
				ClientInfo      Implementation             `json:"clientInfo"`
			}
			if err := json.Unmarshal([]byte(res.Text()), &p); err != nil {
				t.Fatalf("initialize params %q: %v", res.Text(), err)
			}
			if p.ProtocolVersion != LatestProtocolVersion || p.ClientInfo != testClientInfo {
				t.Errorf("initialize params = %+v", p)
			}
			if got := string(p.Capabilities["roots"]); got != `{}` {
				t.Errorf("roots capability = %s", got)
			}
			if _, ok := p.Capabilities["elicitation"]; ok != tt.wantElicits {
				t.Errorf("elicitation advertised = %v, want %v", ok, tt.wantElicits)
			}
			if _, ok := p.Capabilities["sampling"]; ok {
				t.Error("sampling advertised")
			}
		})
	}
}

func TestListsFollowPagination(t *testing.T) {
	t.Parallel()
	c, _, _ := connectFake(t, nil, Options{})
	ctx := testCtx(t)

	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	wantNames := []string{"echo", "fail", "progress", "hang", "die", "ask", "changed", "initparams", "env", "delete things"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("tools = %v, want %v", names, wantNames)
	}
	echo := tools[0]
	// The schema arrives whole, in canonical (sorted) key order.
	if string(echo.InputSchema) != `{"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}` {
		t.Errorf("echo schema = %s", echo.InputSchema)
	}
	if !echo.ReadOnly() || echo.Destructive() || echo.DisplayTitle() != "Echo" || echo.Annotations.Title != "Echo tool" {
		t.Errorf("echo annotations = %+v", echo.Annotations)
	}
	if del := tools[9]; del.ReadOnly() || !del.Destructive() {
		t.Errorf("delete things: ReadOnly %v Destructive %v", del.ReadOnly(), del.Destructive())
	}
	if tools[1].ReadOnly() || tools[1].Destructive() {
		t.Error("an unannotated tool must be neither read-only nor declared destructive")
	}

	prompts, err := c.ListPrompts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts) != 4 || prompts[0].Name != "greet" || !prompts[0].Arguments[0].Required || prompts[3].Name != "fourth" {
		t.Errorf("prompts = %+v", prompts)
	}
	resources, err := c.ListResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(resources) != 4 || resources[0].URI != "fake://one" || resources[0].MIMEType != "text/plain" || resources[3].URI != "fake://four" {
		t.Errorf("resources = %+v", resources)
	}
}

func TestPaginationRepeatedCursor(t *testing.T) {
	t.Parallel()
	c, _, _ := connectFake(t, map[string]string{helperCursorEnv: "loop"}, Options{})
	_, err := c.ListTools(testCtx(t))
	if err == nil || !strings.Contains(err.Error(), "repeated cursor") {
		t.Fatalf("ListTools error = %v, want a repeated cursor error", err)
	}
}

func TestCallTool(t *testing.T) {
	t.Parallel()
	c, _, _ := connectFake(t, nil, Options{})
	tests := []struct {
		name     string
		tool     string
		args     string
		want     string
		isError  bool
		wantCode int64
	}{
		{name: "echo", tool: "echo", args: `{"text":"hello there"}`, want: "hello there"},
		{name: "nil args", tool: "echo", args: "", want: ""},
		{name: "tool error", tool: "fail", args: `{}`, want: "it failed", isError: true},
		{name: "unknown tool", tool: "nope", args: `{}`, wantCode: CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := c.CallTool(testCtx(t), tt.tool, json.RawMessage(tt.args), nil)
			if tt.wantCode != 0 {
				var rpcErr *Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != tt.wantCode {
					t.Fatalf("error = %v, want json-rpc code %d", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Text() != tt.want || res.IsError != tt.isError {
				t.Errorf("result = %q isError=%v, want %q isError=%v", res.Text(), res.IsError, tt.want, tt.isError)
			}
		})
	}
}

func TestCallToolInvalidArguments(t *testing.T) {
	t.Parallel()
	c, _, _ := connectFake(t, nil, Options{})
	if _, err := c.CallTool(testCtx(t), "echo", json.RawMessage(`{"text":`), nil); err == nil {
		t.Fatal("CallTool accepted invalid JSON arguments")
	}
}

func TestPromptsAndResources(t *testing.T) {
	t.Parallel()
	c, _, _ := connectFake(t, nil, Options{})
	ctx := testCtx(t)
	p, err := c.GetPrompt(ctx, "greet", map[string]string{"name": "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Text() != "Hello, Ada!" || p.Messages[0].Role != "user" {
		t.Errorf("prompt = %+v", p)
	}
	if _, err := c.GetPrompt(ctx, "missing", nil); err == nil {
		t.Error("GetPrompt of an unknown prompt succeeded")
	}
	r, err := c.ReadResource(ctx, "fake://two")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Contents) != 1 || r.Contents[0].Text != "contents of fake://two" {
		t.Errorf("resource = %+v", r)
	}
	if got := r.Text(); got != "[resource: fake://two]\ncontents of fake://two" {
		t.Errorf("resource text = %q", got)
	}
	var rpcErr *Error
	if _, err := c.ReadResource(ctx, "other://x"); !errors.As(err, &rpcErr) || rpcErr.Code != -32002 {
		t.Errorf("ReadResource of unknown uri: %v", err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func TestProgress(t *testing.T) {
	t.Parallel()
	c, _, _ := connectFake(t, nil, Options{})
	var got []Progress
	res, err := c.CallTool(testCtx(t), "progress", json.RawMessage(`{"steps":4}`), func(p Progress) { got = append(got, p) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "done" {
		t.Errorf("result = %q", res.Text())
	}
	if len(got) != 4 {
		t.Fatalf("got %d progress updates, want 4: %+v", len(got), got)
	}
	for i, p := range got {
		if p.Progress != float64(i+1) || p.Total != 4 || p.Message != fmt.Sprintf("step %d", i+1) || len(p.Token) == 0 {
			t.Errorf("update %d = %+v", i, p)
		}
	}
	// Without a callback no token is sent, so the fake reports nothing.
	if _, err := c.CallTool(testCtx(t), "progress", json.RawMessage(`{"steps":2}`), nil); err != nil {
		t.Fatal(err)
	}
}

func TestServerRequestsAreAnswered(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	accept := func(_ context.Context, req ElicitRequest) (ElicitResult, error) {
		if req.Message != "your name?" {
			return ElicitResult{}, fmt.Errorf("unexpected message %q", req.Message)
		}
		return ElicitResult{Action: ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
	}
	failing := func(context.Context, ElicitRequest) (ElicitResult, error) {
		return ElicitResult{}, errors.New("user went away")
	}
	elicitParams := `{"message":"your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`
	tests := []struct {
		name     string
		elicitor Elicitor
		method   string
		params   string
		want     string
	}{
		{name: "ping", method: "ping", want: `{"error":null,"result":{}}`},
		{name: "roots", method: "roots/list", want: fmt.Sprintf(`{"error":null,"result":{"roots":[{"name":%q,"uri":%q}]}}`, filepath.Base(root), fileURI(root))},
		{name: "elicitation accepted", elicitor: accept, method: "elicitation/create", params: elicitParams, want: `{"error":null,"result":{"action":"accept","content":{"name":"Ada"}}}`},
		{name: "elicitation without elicitor", method: "elicitation/create", params: elicitParams, want: `{"error":{"code":-32602,"message":"client does not support elicitation"},"result":null}`},
		{name: "elicitor fails", elicitor: failing, method: "elicitation/create", params: elicitParams, want: `{"error":{"code":-32603,"message":"elicitation failed: user went away"},"result":null}`},
		{name: "sampling refused", method: "sampling/createMessage", params: `{"messages":[],"maxTokens":10}`, want: `{"error":{"code":-31001,"message":"client does not support CreateMessage"},"result":null}`},
		{name: "unknown method", method: "bogus/method", want: `{"error":{"code":-32601,"message":"method not found: \"bogus/method\""},"result":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _, _ := connectFake(t, nil, Options{Root: root, Elicitor: tt.elicitor})
			args, _ := json.Marshal(map[string]any{"method": tt.method, "params": json.RawMessage(orJSON(tt.params))})
			res, err := c.CallTool(testCtx(t), "ask", args, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Text(); got != tt.want {
				t.Errorf("answer = %s\nwant     %s", got, tt.want)
			}
		})
	}
}

func orJSON(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

func TestNotifications(t *testing.T) {
	t.Parallel()
	changed := make(chan ListKind, 8)
	c, _, rec := connectFake(t, nil, Options{OnListChanged: func(k ListKind) { changed <- k }})
	if _, err := c.CallTool(testCtx(t), "changed", nil, nil); err != nil {
		t.Fatal(err)
	}
	// The SDK handles notifications in order, apart from the response
	// that follows them, so they may still be on their way.
	var kinds []ListKind
	for len(kinds) < 2 {
		select {
		case k := <-changed:
			kinds = append(kinds, k)
		case <-time.After(testTimeout):
			t.Fatalf("list_changed kinds = %v, want two", kinds)
		}
	}
	if !slices.Equal(kinds, []ListKind{ListTools, ListPrompts}) {
		t.Errorf("list_changed kinds = %v", kinds)
	}
	line := rec.wait(t, "mcp server log")
	if !strings.Contains(line, "WARN") || !strings.Contains(line, "lists changed") || !strings.Contains(line, "logger=fake") {
		t.Errorf("server log line = %q", line)
	}
}

func TestStderrGoesToLogger(t *testing.T) {
	t.Parallel()
	c, _, rec := connectFake(t, nil, Options{})
	ctx, cancel := context.WithTimeout(testCtx(t), 200*time.Millisecond)
	defer cancel()
	_, _ = c.CallTool(ctx, "hang", nil, nil)
	line := rec.wait(t, "started hang")
	if !strings.Contains(line, "mcp server stderr") {
		t.Errorf("stderr line logged as %q", line)
	}
}

func TestNonJSONOutputIsSkipped(t *testing.T) {
	t.Parallel()
	c, _, rec := connectFake(t, map[string]string{helperBannerEnv: "1"}, Options{})
	if err := c.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, "not JSON-RPC")
}

func TestEnvIsMergedOverInherited(t *testing.T) {
	t.Setenv("REASONIX_MCP_INHERITED", "from parent")
	c, _, _ := connectFake(t, map[string]string{"REASONIX_MCP_OWN": "own", "REASONIX_MCP_INHERITED": "overridden"}, Options{})
	tests := []struct{ name, want string }{
		{"REASONIX_MCP_OWN", "own"},
		{"REASONIX_MCP_INHERITED", "overridden"},
		{"PATH", os.Getenv("PATH")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.CallTool(testCtx(t), "env", json.RawMessage(fmt.Sprintf(`{"name":%q}`, tt.name)), nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text() != tt.want {
				t.Errorf("%s = %q, want %q", tt.name, res.Text(), tt.want)
			}
		})
	}
}

// The tests below run alone, each checking for leaked goroutines itself.

func TestCallTimesOutByContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	c, _, rec := connectFake(t, nil, Options{})
	defer c.Close()
	ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
	defer cancel()
	_, err := c.CallTool(ctx, "hang", nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want context.DeadlineExceeded", err)
	}
	// The server was told, with the request id and the reason.
	line := rec.wait(t, "cancelled request")
	if !strings.Contains(line, "context deadline exceeded") {
		t.Errorf("cancellation reached the server as %q", line)
	}
	// The connection is still usable.
	if err := c.Ping(testCtx(t)); err != nil {
		t.Errorf("Ping after a timed-out call: %v", err)
	}
}

func TestServerExitFailsPendingCalls(t *testing.T) {
	defer goleak.VerifyNone(t)
	c, _, rec := connectFake(t, nil, Options{})
	defer c.Close()
	hung := make(chan error, 1)
	go func() {
		_, err := c.CallTool(testCtx(t), "hang", nil, nil)
		hung <- err
	}()
	rec.wait(t, "started hang")

	_, err := c.CallTool(testCtx(t), "die", nil, nil)
	var exit *ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("error = %v, want an *ExitError", err)
	}
	if exit.Code != 3 || exit.Status != "exit status 3" || !slices.Contains(exit.Stderr, "fatal: boom") {
		t.Errorf("ExitError = %+v", exit)
	}
	if !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "fatal: boom") {
		t.Errorf("error text %q lacks the status or the stderr tail", err)
	}
	if err := <-hung; !errors.As(err, &exit) {
		t.Errorf("pending call error = %v, want the same *ExitError", err)
	}
	<-c.Done()
	if !errors.As(c.Err(), &exit) {
		t.Errorf("Err = %v", c.Err())
	}
	if err := c.Ping(testCtx(t)); !errors.As(err, &exit) {
		t.Errorf("Ping after exit = %v, want the *ExitError", err)
	}
}

func TestServerKilledMidCall(t *testing.T) {
	defer goleak.VerifyNone(t)
	c, tr, rec := connectFake(t, nil, Options{})
	defer c.Close()
	hung := make(chan error, 1)
	go func() {
		_, err := c.CallTool(testCtx(t), "hang", nil, nil)
		hung <- err
	}()
	rec.wait(t, "started hang")
	p, err := os.FindProcess(tr.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	err = <-hung
	var exit *ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("error = %v, want an *ExitError", err)
	}
	if runtime.GOOS != "windows" && exit.Status != "signal: killed" {
		t.Errorf("status = %q, want signal: killed", exit.Status)
	}
}

func TestCloseFailsPendingCalls(t *testing.T) {
	defer goleak.VerifyNone(t)
	c, _, rec := connectFake(t, nil, Options{})
	hung := make(chan error, 1)
	go func() {
		_, err := c.CallTool(testCtx(t), "hang", nil, nil)
		hung <- err
	}()
	rec.wait(t, "started hang")
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-hung; !errors.Is(err, ErrClosed) {
		t.Errorf("pending call error = %v, want ErrClosed", err)
	}
	if err := c.Ping(testCtx(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("Ping after Close = %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestStarterContextStopsServer(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	tr, err := StartStdio(ctx, StdioCommand{Command: os.Args[0], Env: map[string]string{helperEnv: "1", "GORACE": helperGORACE()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	c, err := Connect(testCtx(t), tr, testClientInfo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cancel()
	<-c.Done()
	if err := c.Err(); !errors.Is(err, ErrClosed) || !errors.Is(err, context.Canceled) {
		t.Errorf("Err = %v, want ErrClosed and context.Canceled", err)
	}
}

func TestStartStdioErrors(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		cmd  StdioCommand
	}{
		{name: "no command", ctx: context.Background(), cmd: StdioCommand{}},
		{name: "missing program", ctx: context.Background(), cmd: StdioCommand{Command: filepath.Join(t.TempDir(), "no-such-server")}},
		{name: "cancelled context", ctx: cancelled, cmd: StdioCommand{Command: os.Args[0]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, err := StartStdio(tt.ctx, tt.cmd, nil)
			if err == nil {
				_ = tr.Close()
				t.Fatal("StartStdio succeeded")
			}
		})
	}
}

func TestCloseEscalatesOnStubbornServers(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct{ name, mode string }{
		{name: "ignores end of stdin", mode: "eof"},
		{name: "ignores SIGTERM too", mode: "term"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := StartStdio(context.Background(), StdioCommand{
				Command: os.Args[0],
				Env:     map[string]string{helperEnv: "1", "GORACE": helperGORACE(), helperStubbornEnv: tt.mode},
				Grace:   50 * time.Millisecond,
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Connect(testCtx(t), tr, testClientInfo, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// Close returns only once the process has been waited for; a
			// missing escalation step would hang here.
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
