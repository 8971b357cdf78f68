package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests run the client against @modelcontextprotocol/server-everything,
// the reference server the MCP project maintains, over stdio and over
// streamable HTTP.
//
// everythingEnv may name the server's installed entry point (its
// dist/index.js, or the node_modules/.bin/mcp-server-everything link); CI
// installs it up front and sets it. Otherwise the tests install the pinned
// version below with npm into the user cache directory, once. They are
// skipped only when node or npm is missing.
const (
	everythingEnv     = "REASONIX_MCP_EVERYTHING"
	everythingVersion = "2026.8.31"
)

var everythingInstall struct {
	once   sync.Once
	script string
	err    error
}

// everythingServer returns node and the server's entry script.
func everythingServer(t *testing.T) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; skipping the tests against @modelcontextprotocol/server-everything")
	}
	if p := os.Getenv(everythingEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", everythingEnv, p, err)
		}
		return node, p
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed; skipping the tests against @modelcontextprotocol/server-everything")
	}
	everythingInstall.once.Do(func() {
		everythingInstall.script, everythingInstall.err = installEverything(npm)
	})
	if everythingInstall.err != nil {
		t.Fatalf("install @modelcontextprotocol/server-everything (set %s to use an installed copy): %v", everythingEnv, everythingInstall.err)
	}
	return node, everythingInstall.script
}

func installEverything(npm string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "reasonix-test", "mcp-everything-"+everythingVersion)
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err == nil {
		return script, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error",
		"@modelcontextprotocol/server-everything@"+everythingVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w\n%s", err, out)
	}
	if _, err := os.Stat(script); err != nil {
		return "", err
	}
	return script, nil
}

// lineWatcher is a Writer that closes found once a line containing substr
// has been written.
type lineWatcher struct {
	substr string
	found  chan struct{}
	mu     sync.Mutex
	buf    bytes.Buffer
	done   bool
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.buf.Write(p)
		if strings.Contains(w.buf.String(), w.substr) {
			w.done = true
			close(w.found)
		}
	}
	return len(p), nil
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// startEverythingHTTP runs the server in streamableHttp mode on a free
// loopback port and returns its endpoint. A port taken between choosing
// and binding it is retried.
func startEverythingHTTP(t *testing.T, node, script string) string {
	t.Helper()
	for attempt := 0; attempt < 3; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		_ = ln.Close()

		cmd := exec.Command(node, script, "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+port)
		w := &lineWatcher{substr: "listening on port", found: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = io.Discard, w
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		deadline := time.NewTimer(testTimeout)
		select {
		case <-w.found:
			deadline.Stop()
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
			return "http://127.0.0.1:" + port + "/mcp"
		case err := <-exited:
			deadline.Stop()
			if strings.Contains(w.String(), "EADDRINUSE") || strings.Contains(w.String(), "already in use") {
				continue
			}
			t.Fatalf("server-everything exited: %v\n%s", err, w.String())
		case <-deadline.C:
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("server-everything did not start:\n%s", w.String())
		}
	}
	t.Fatal("no free port for server-everything")
	return ""
}

func TestEverythingServer(t *testing.T) {
	t.Parallel()
	node, script := everythingServer(t)
	tests := []struct {
		name string
		open func(t *testing.T, log *slog.Logger) Transport
		// listChanged: the announcement of the tools registered after the
		// handshake reaches a stdio client; over HTTP it is sent before the
		// client can open its GET stream, and the server drops it.
		listChanged bool
	}{
		{name: "stdio", listChanged: true, open: func(t *testing.T, log *slog.Logger) Transport {
			tr, err := StartStdio(context.Background(), StdioCommand{Command: node, Args: []string{script, "stdio"}}, log)
			if err != nil {
				t.Fatal(err)
			}
			return tr
		}},
		{name: "streamable http", open: func(t *testing.T, log *slog.Logger) Transport {
			tr, err := NewHTTP(startEverythingHTTP(t, node, script), HTTPOptions{Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			return tr
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := newLogRecorder()
			root := t.TempDir()
			changed := make(chan ListKind, 16)
			var elicited []ElicitRequest
			var emu sync.Mutex
			c, err := Connect(testCtx(t), tt.open(t, slog.New(rec)), testClientInfo, Options{
				Logger:        slog.New(rec),
				Root:          root,
				OnListChanged: func(k ListKind) { changed <- k },
				Elicitor: func(_ context.Context, req ElicitRequest) (ElicitResult, error) {
					emu.Lock()
					elicited = append(elicited, req)
					emu.Unlock()
					return ElicitResult{Action: ElicitAccept, Content: map[string]any{"name": "Ada Lovelace", "check": true}}, nil
				},
			})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer c.Close()
			ctx := testCtx(t)
			if c.ProtocolVersion() != LatestProtocolVersion || c.ServerInfo().Name == "" || c.Instructions() == "" {
				t.Errorf("handshake: version %q server %+v instructions %d bytes", c.ProtocolVersion(), c.ServerInfo(), len(c.Instructions()))
			}
			call := func(t *testing.T, name, args string, onProgress ProgressFunc) string {
				t.Helper()
				res, err := c.CallTool(ctx, name, json.RawMessage(args), onProgress)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if res.IsError {
					t.Fatalf("%s reported an error: %s", name, res.Text())
				}
				return res.Text()
			}

			t.Run("ping", func(t *testing.T) {
				if err := c.Ping(ctx); err != nil {
					t.Fatal(err)
				}
			})
			t.Run("tools/list", func(t *testing.T) {
				tools, err := c.ListTools(ctx)
				if err != nil {
					t.Fatal(err)
				}
				byName := map[string]Tool{}
				for _, tl := range tools {
					byName[tl.Name] = tl
				}
				for _, want := range []string{"echo", "get-sum", "trigger-long-running-operation", "get-roots-list", "trigger-elicitation-request"} {
					if _, ok := byName[want]; !ok {
						t.Errorf("tool %q missing from %d tools", want, len(tools))
					}
				}
				if lr := byName["trigger-long-running-operation"]; !lr.ReadOnly() || len(lr.InputSchema) == 0 {
					t.Errorf("trigger-long-running-operation: ReadOnly %v schema %s", lr.ReadOnly(), lr.InputSchema)
				}
			})
			t.Run("echo", func(t *testing.T) {
				if got := call(t, "echo", `{"message":"hello from reasonix"}`, nil); got != "Echo: hello from reasonix" {
					t.Errorf("echo = %q", got)
				}
			})
			t.Run("get-sum", func(t *testing.T) {
				if got := call(t, "get-sum", `{"a":2,"b":3}`, nil); !strings.Contains(got, "is 5") {
					t.Errorf("get-sum = %q", got)
				}
			})
			t.Run("progress", func(t *testing.T) {
				var got []Progress
				text := call(t, "trigger-long-running-operation", `{"duration":0.3,"steps":3}`, func(p Progress) { got = append(got, p) })
				if !strings.Contains(text, "completed") {
					t.Errorf("result = %q", text)
				}
				if len(got) != 3 || got[2].Progress != 3 || got[2].Total != 3 {
					t.Errorf("progress = %+v", got)
				}
			})
			t.Run("prompts", func(t *testing.T) {
				prompts, err := c.ListPrompts(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(prompts, func(p Prompt) bool { return p.Name == "args-prompt" }) {
					t.Errorf("args-prompt missing from %+v", prompts)
				}
				p, err := c.GetPrompt(ctx, "args-prompt", map[string]string{"city": "Paris"})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(p.Text(), "Paris") {
					t.Errorf("args-prompt = %q", p.Text())
				}
			})
			t.Run("resources", func(t *testing.T) {
				resources, err := c.ListResources(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(resources) == 0 {
					t.Fatal("no resources")
				}
				r, err := c.ReadResource(ctx, resources[0].URI)
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Contents) == 0 || r.Contents[0].URI != resources[0].URI || r.Text() == "" {
					t.Errorf("read %s = %+v", resources[0].URI, r)
				}
			})
			t.Run("roots", func(t *testing.T) {
				if got := call(t, "get-roots-list", `{}`, nil); !strings.Contains(got, fileURI(root)) {
					t.Errorf("get-roots-list = %q, want it to name %s", got, fileURI(root))
				}
			})
			t.Run("elicitation", func(t *testing.T) {
				got := call(t, "trigger-elicitation-request", `{}`, nil)
				if !strings.Contains(got, "Ada Lovelace") {
					t.Errorf("result = %q", got)
				}
				emu.Lock()
				defer emu.Unlock()
				if len(elicited) != 1 || elicited[0].Message == "" || len(elicited[0].RequestedSchema) == 0 {
					t.Errorf("elicitor saw %+v", elicited)
				}
			})
			if tt.listChanged {
				t.Run("list_changed", func(t *testing.T) {
					timer := time.NewTimer(testTimeout)
					defer timer.Stop()
					for {
						select {
						case k := <-changed:
							if k == ListTools {
								return
							}
						case <-timer.C:
							t.Fatal("no tools list_changed notification")
						}
					}
				})
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}
