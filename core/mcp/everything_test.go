package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/core/mcp/mcptest"
)

// These tests run the client against @modelcontextprotocol/server-everything
// (see core/mcp/mcptest) over stdio and over streamable HTTP.

func TestEverythingServer(t *testing.T) {
	t.Parallel()
	node, script := mcptest.Everything(t)
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
			tr, err := NewHTTP(mcptest.StartEverythingHTTP(t, node, script), HTTPOptions{Logger: log})
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
