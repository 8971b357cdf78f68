package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"reasonix/core/panics"
)

// The faults here are real panics raised where the client calls code it
// does not own: the user's callbacks, a transport, a logger, a response
// body. Each must end only the call or the connection it belongs to.

// panicLogger is a slog.Handler that panics on a record whose message
// contains on.
type panicLogger struct{ on string }

func (h panicLogger) Enabled(context.Context, slog.Level) bool { return true }
func (h panicLogger) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h panicLogger) WithGroup(string) slog.Handler            { return h }

func (h panicLogger) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.on) {
		panic("log handler failed on " + r.Message)
	}
	return nil
}

// wantPanic fails unless err carries a recovered panic.
func wantPanic(t *testing.T, what string, err error) {
	t.Helper()
	if _, ok := errors.AsType[*panics.Error](err); !ok {
		t.Fatalf("%s = %v, want a recovered panic", what, err)
	}
}

// waitBroken waits for c to end and checks that a panic is why.
func waitBroken(t *testing.T, c *Client) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(testTimeout):
		t.Fatal("connection did not end after the panic")
	}
	wantPanic(t, "Err", c.Err())
}

// TestCallbackPanicKeepsConnection makes each user callback panic: the call
// it belongs to fails (or, for a server request, is answered with an
// error), and the connection keeps serving calls.
func TestCallbackPanicKeepsConnection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts Options
		// call makes the callback run and checks what the caller saw.
		call func(t *testing.T, c *Client)
		log  string // a line the client logs about the panic
	}{
		{
			name: "progress",
			call: func(t *testing.T, c *Client) {
				_, err := c.CallTool(testCtx(t), "progress", json.RawMessage(`{"steps":4}`), func(p Progress) {
					if p.Progress == 2 {
						panic("progress bar broke")
					}
				})
				wantPanic(t, "CallTool", err)
				if !strings.Contains(err.Error(), "tools/call: progress callback: panic: progress bar broke") {
					t.Errorf("CallTool = %q", err)
				}
			},
			log: "mcp progress callback panicked",
		},
		{
			name: "list changed",
			opts: Options{OnListChanged: func(ListKind) { panic("refresh broke") }},
			call: func(t *testing.T, c *Client) {
				if _, err := c.CallTool(testCtx(t), "changed", nil, nil); err != nil {
					t.Fatalf("CallTool = %v, want the call unaffected", err)
				}
			},
			log: "mcp list-changed callback panicked",
		},
		{
			name: "elicitor",
			opts: Options{Elicitor: func(context.Context, ElicitRequest) (ElicitResult, error) { panic("form broke") }},
			call: func(t *testing.T, c *Client) {
				args := json.RawMessage(`{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object"}}}`)
				res, err := c.CallTool(testCtx(t), "ask", args, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := `{"error":{"code":-32603,"message":"client failed handling elicitation/create"},"result":null}`
				if res.Text() != want {
					t.Errorf("server got %s, want %s", res.Text(), want)
				}
			},
			log: "mcp server request handler panicked",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _, rec := connectFake(t, nil, tt.opts)
			tt.call(t, c)
			if line := rec.wait(t, tt.log); !strings.Contains(line, "stack=") {
				t.Errorf("panic logged without its stack: %q", line)
			}
			if err := c.Ping(testCtx(t)); err != nil {
				t.Fatalf("Ping after the panic = %v, want the connection alive", err)
			}
		})
	}
}

// TestStdioReaderPanicBreaksConnection makes the log handler panic inside
// the stdio transport's pipe readers: the server is shut down, and the
// connection, or the connecting, fails with the panic.
func TestStdioReaderPanicBreaksConnection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		panicOn string
	}{
		// The banner comes before the answer to initialize.
		{name: "stdout", env: map[string]string{helperBannerEnv: "1"}, panicOn: "not JSON-RPC"},
		{name: "stderr", panicOn: "mcp server stderr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := startFakeStdio(t, tt.env, slog.New(panicLogger{on: tt.panicOn}))
			c, err := Connect(testCtx(t), tr, testClientInfo, Options{})
			if err == nil {
				t.Cleanup(func() { _ = c.Close() })
				// The fake writes to stderr when a hang call starts.
				_, err = c.CallTool(testCtx(t), "hang", nil, nil)
				waitBroken(t, c)
			}
			wantPanic(t, "call", err)
			if !strings.Contains(err.Error(), "read mcp server "+tt.name) {
				t.Errorf("err = %q, want it to name the %s reader", err, tt.name)
			}
		})
	}
}

// TestStdioSupervisorPanic makes the stdio supervisor panic as it starts,
// with the server and both readers running: the handshake fails with the
// panic, and Close still returns with the server reaped. It sets a
// package-level hook, so it does not run in parallel.
func TestStdioSupervisorPanic(t *testing.T) {
	testHookSupervise = func() { panic("supervisor broke") }
	defer func() { testHookSupervise = nil }()
	tr := startFakeStdio(t, nil, nil)
	_, err := Connect(testCtx(t), tr, testClientInfo, Options{})
	wantPanic(t, "Connect", err)
	if !strings.Contains(err.Error(), "mcp stdio supervisor: panic: supervisor broke") {
		t.Errorf("Connect = %q", err)
	}
	closed := make(chan struct{})
	go func() {
		_ = tr.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(testTimeout):
		t.Fatal("Close did not return after the supervisor panicked")
	}
	if tr.cmd.ProcessState == nil {
		t.Error("server process was not reaped")
	}
}
