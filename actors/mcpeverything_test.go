package actors

import (
	"strings"
	"testing"
	"time"

	"reasonix/actors/event"
	"reasonix/actors/mcpconn"
	"reasonix/core/mcp"
	"reasonix/core/mcp/mcptest"
	"reasonix/core/provider/providertest"
)

// TestMCPEverything runs the session's MCP part against
// @modelcontextprotocol/server-everything over stdio and streamable HTTP.
func TestMCPEverything(t *testing.T) {
	t.Parallel()
	node, script := mcptest.Everything(t)
	tests := []struct {
		name   string
		server func(t *testing.T) mcp.ServerConfig
	}{
		{"stdio", func(t *testing.T) mcp.ServerConfig {
			return mcp.ServerConfig{Name: "everything", Type: mcp.TypeStdio, Command: node, Args: []string{script, "stdio"}}
		}},
		{"streamable http", func(t *testing.T) mcp.ServerConfig {
			return mcp.ServerConfig{Name: "everything", Type: mcp.TypeHTTP, URL: mcptest.StartEverythingHTTP(t, node, script)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newMCPHarness(t, testSpec(t, mcpconn.MCPServer{Config: tt.server(t), Source: mcp.SourceUser}))
			h.waitServer("everything", event.MCPReady)

			for name, ro := range map[string]bool{
				"mcp__everything__echo":                           true,
				"mcp__everything__get-sum":                        true,
				"mcp__everything__trigger-long-running-operation": true,
				"mcp__everything__toggle-simulated-logging":       false,
			} {
				tl, ok := h.reg.Get(name)
				if !ok {
					t.Fatalf("%s missing from %v", name, h.reg.Names())
				}
				if tl.ReadOnly() != ro {
					t.Errorf("%s ReadOnly = %v, want %v", name, tl.ReadOnly(), ro)
				}
			}
			if out, err := h.call("mcp__everything__echo", `{"message":"through the registry"}`); err != nil || out != "Echo: through the registry" {
				t.Errorf("echo = %q, %v", out, err)
			}

			t.Run("progress", func(t *testing.T) {
				out, err := h.call("mcp__everything__trigger-long-running-operation", `{"duration":0.3,"steps":3}`)
				if err != nil || !strings.Contains(out, "completed") {
					t.Fatalf("long-running operation = %q, %v", out, err)
				}
				var last *event.ToolProgress
				for range 3 {
					last = h.next("progress", func(e event.Event) bool { _, ok := e.(*event.ToolProgress); return ok }).(*event.ToolProgress)
				}
				if last.Server != "everything" || last.Tool != "mcp__everything__trigger-long-running-operation" || last.Progress != 3 || last.Total != 3 || last.Session != h.id {
					t.Errorf("last progress = %+v", last)
				}
			})

			st := h.status("everything")
			if len(st.Prompts) == 0 || len(st.Resources) == 0 {
				t.Fatalf("status lists no prompts or resources: %+v", st)
			}
			uri := st.Resources[0].URI

			t.Run("prompt command", func(t *testing.T) {
				h.srv.Push(providertest.Turn{Text: "sunny"})
				done := h.turn("/mcp__everything__args-prompt Paris")
				if done.Status != event.StatusOK {
					t.Fatalf("turn = %+v", done)
				}
				reqs := h.srv.Requests()
				if got := reqs[len(reqs)-1].LastUser(); !strings.Contains(got, "weather in Paris") {
					t.Errorf("user message = %q", got)
				}
			})
			t.Run("resource reference", func(t *testing.T) {
				text, err := h.sess.ReadMCPResource("everything", uri, 10*time.Second)
				if err != nil || text == "" {
					t.Fatalf("read %s = %q, %v", uri, text, err)
				}
				h.srv.Push(providertest.Turn{Text: "read it"})
				done := h.turn("what is in @everything:" + uri + "?")
				if done.Status != event.StatusOK {
					t.Fatalf("turn = %+v", done)
				}
				reqs := h.srv.Requests()
				got := reqs[len(reqs)-1].LastUser()
				if !strings.HasPrefix(got, `<resource ref="everything:`+uri+`">`) || !strings.HasSuffix(got, "what is in @everything:"+uri+"?") {
					t.Errorf("user message = %q", got)
				}
			})
		})
	}
}
