package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"reasonix/core/mcp"
)

// The end-to-end tests drive the built binary through Reasonix's own MCP
// client, over stdio and over streamable HTTP.

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var clientInfo = mcp.Implementation{Name: "reasonix-test", Version: "0"}

// startHTTP runs the binary with --http on a free loopback port and
// returns its endpoint URL, read from the first line of its stdout.
func startHTTP(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(pluginBinary, "--http", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("read endpoint: %v", err)
	}
	return strings.TrimSpace(line)
}

func TestPluginThroughClient(t *testing.T) {
	t.Parallel()
	transports := []struct {
		name string
		open func(t *testing.T) mcp.Transport
	}{
		{name: "stdio", open: func(t *testing.T) mcp.Transport {
			tr, err := mcp.StartStdio(context.Background(), mcp.StdioCommand{Command: pluginBinary}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return tr
		}},
		{name: "http", open: func(t *testing.T) mcp.Transport {
			tr, err := mcp.NewHTTP(startHTTP(t), mcp.HTTPOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return tr
		}},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			c, err := mcp.Connect(testCtx(t), tr.open(t), clientInfo, mcp.Options{})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer c.Close()
			ctx := testCtx(t)
			if c.ProtocolVersion() != mcp.LatestProtocolVersion || c.ServerInfo().Name != "reasonix-plugin-example" {
				t.Errorf("handshake: %q %+v", c.ProtocolVersion(), c.ServerInfo())
			}
			tools, err := c.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools) != 2 || tools[0].Name != "echo" || tools[1].Name != "wordcount" {
				t.Fatalf("tools = %+v", tools)
			}
			for _, tl := range tools {
				if !tl.ReadOnly() || tl.Destructive() {
					t.Errorf("%s: ReadOnly %v Destructive %v", tl.Name, tl.ReadOnly(), tl.Destructive())
				}
			}
			calls := []struct {
				name, tool, args, want string
				isError                bool
			}{
				{name: "echo", tool: "echo", args: `{"text":"hello, plugin"}`, want: "hello, plugin"},
				{name: "wordcount", tool: "wordcount", args: `{"text":"the quick  brown fox"}`, want: "4"},
				{name: "empty text", tool: "wordcount", args: `{"text":""}`, want: "0"},
				{name: "bad arguments", tool: "echo", args: `{"text":3}`, want: `argument "text" must be a string`, isError: true},
			}
			for _, cl := range calls {
				t.Run(cl.name, func(t *testing.T) {
					res, err := c.CallTool(ctx, cl.tool, json.RawMessage(cl.args), nil)
					if err != nil {
						t.Fatal(err)
					}
					if res.Text() != cl.want || res.IsError != cl.isError {
						t.Errorf("result %q isError %v", res.Text(), res.IsError)
					}
				})
			}
			t.Run("unknown tool", func(t *testing.T) {
				var rpcErr *mcp.Error
				if _, err := c.CallTool(ctx, "nope", nil, nil); !errors.As(err, &rpcErr) || rpcErr.Code != -32602 {
					t.Errorf("error = %v", err)
				}
			})
			t.Run("ping", func(t *testing.T) {
				if err := c.Ping(ctx); err != nil {
					t.Error(err)
				}
			})
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// TestHTTPSession checks the session life cycle from the outside: an id
// issued at initialize, 405 for GET, and DELETE ending the session.
func TestHTTPSession(t *testing.T) {
	t.Parallel()
	url := startHTTP(t)
	tr, err := mcp.NewHTTP(url, mcp.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := mcp.Connect(testCtx(t), tr, clientInfo, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sid := tr.SessionID()
	if len(sid) != 32 {
		t.Errorf("session id %q", sid)
	}
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	send := func(method, body string, header map[string]string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(testCtx(t), method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if got := send(http.MethodGet, "", map[string]string{"Mcp-Session-Id": sid}); got != http.StatusMethodNotAllowed {
		t.Errorf("GET = %d, want 405", got)
	}
	if got := send(http.MethodPost, ping, map[string]string{"Mcp-Session-Id": sid}); got != http.StatusOK {
		t.Errorf("ping in session = %d", got)
	}
	if got := send(http.MethodPost, ping, nil); got != http.StatusBadRequest {
		t.Errorf("ping without session = %d, want 400", got)
	}
	if got := send(http.MethodPost, ping, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "1999-01-01"}); got != http.StatusBadRequest {
		t.Errorf("ping with a bad protocol version = %d, want 400", got)
	}
	if got := send(http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid}); got != http.StatusAccepted {
		t.Errorf("notification = %d, want 202", got)
	}
	// Close sends DELETE; the session is gone afterwards.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := send(http.MethodPost, ping, map[string]string{"Mcp-Session-Id": sid}); got != http.StatusNotFound {
		t.Errorf("ping after DELETE = %d, want 404", got)
	}
}

// TestHTTPRejectsForeignOriginAndHost is the DNS-rebinding protection: a
// request from a web page elsewhere, or through a DNS name rebound to
// loopback, is refused with 403.
func TestHTTPRejectsForeignOriginAndHost(t *testing.T) {
	t.Parallel()
	url := startHTTP(t)
	tests := []struct {
		name    string
		headers map[string]string
		host    string
		want    int
	}{
		{name: "foreign origin", headers: map[string]string{"Origin": "http://evil.example"}, want: http.StatusForbidden},
		{name: "null origin", headers: map[string]string{"Origin": "null"}, want: http.StatusForbidden},
		{name: "rebound host", host: "evil.example:80", want: http.StatusForbidden},
		{name: "loopback origin", headers: map[string]string{"Origin": "http://localhost:5173"}, want: http.StatusOK},
		{name: "no origin", want: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hc := &http.Client{Transport: &http.Transport{}}
			defer hc.CloseIdleConnections()
			req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url,
				strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	t.Run("through the client", func(t *testing.T) {
		t.Parallel()
		tr, err := mcp.NewHTTP(url, mcp.HTTPOptions{Headers: map[string]string{"Origin": "http://evil.example"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = mcp.Connect(testCtx(t), tr, clientInfo, mcp.Options{})
		var se *mcp.StatusError
		if !errors.As(err, &se) || se.StatusCode != http.StatusForbidden {
			t.Errorf("Connect error = %v, want 403", err)
		}
	})
}

func TestRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
		code int
	}{
		{name: "all interfaces", args: []string{"--http", "0.0.0.0:0"}, want: "only loopback", code: 1},
		{name: "stray argument", args: []string{"serve"}, want: "unexpected argument", code: 2},
		{name: "unknown flag", args: []string{"--bogus"}, want: "flag provided but not defined", code: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr strings.Builder
			code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("run(%v) = %d, stderr %q", tt.args, code, stderr.String())
			}
		})
	}
}

func TestStdioServesUntilEOF(t *testing.T) {
	t.Parallel()
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
	var out, errOut strings.Builder
	if code := run(nil, in, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"jsonrpc":"2.0","id":1,"result":{}}`) || !strings.Contains(lines[1], `"readOnlyHint":true`) {
		t.Errorf("stdout = %q", out.String())
	}
}
