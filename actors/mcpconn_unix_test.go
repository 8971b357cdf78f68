//go:build unix

package actors

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/actors/event"
	"reasonix/actors/mcpconn"
	"reasonix/core/mcp"
	"reasonix/core/mcp/mcptest"
	"reasonix/core/tool"
)

// TestMCPServerKilledMidCall kills server-everything's process group
// while a long-running tool runs: the call fails promptly, the server is
// restarted after the backoff, and the next call succeeds.
func TestMCPServerKilledMidCall(t *testing.T) {
	t.Parallel()
	node, script := mcptest.Everything(t)
	spec := testSpec(t, mcpconn.MCPServer{Config: mcp.ServerConfig{Name: "everything", Type: mcp.TypeStdio, Command: node, Args: []string{script, "stdio"}}, Source: mcp.SourceUser})
	// A backoff long enough to observe the restarting state.
	spec.Backoff = mcpconn.Backoff{Base: time.Second, Max: 2 * time.Second, GiveUp: 3}
	h := newMCPHarness(t, spec)
	h.waitServer("everything", event.MCPReady)
	pid := h.status("everything").Pid
	if pid <= 0 {
		t.Fatalf("no server pid")
	}

	type outcome struct {
		out string
		err error
		at  time.Time
	}
	done := make(chan outcome, 1)
	long, _ := h.reg.Get("mcp__everything__trigger-long-running-operation")
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		defer cancel()
		out, err := long.Execute(tool.WithCallID(ctx, "call-long"), json.RawMessage(`{"duration":60,"steps":60}`))
		done <- outcome{out, err, time.Now()}
	}()
	first := h.next("first progress", func(e event.Event) bool { _, ok := e.(*event.ToolProgress); return ok }).(*event.ToolProgress)
	if first.CallID != "call-long" {
		t.Errorf("progress call_id = %q, want the call's id", first.CallID)
	}
	killed := time.Now()
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var o outcome
	select {
	case o = <-done:
	case <-time.After(waitBound):
		t.Fatal("the in-flight call never returned")
	}
	if o.err == nil || !strings.Contains(o.err.Error(), "exited") {
		t.Errorf("in-flight call = %q, %v", o.out, o.err)
	}
	if took := o.at.Sub(killed); took > 10*time.Second {
		t.Errorf("the call took %v to fail", took)
	}

	u := h.waitServer("everything", event.MCPRestarting)
	if u.Failures != 1 {
		t.Errorf("restarting update = %+v", u)
	}
	if _, err := h.call("mcp__everything__echo", `{"message":"too early"}`); err == nil || !strings.Contains(err.Error(), "is restarting (attempt 2 of 3)") {
		t.Errorf("call while restarting: %v", err)
	}
	h.waitServer("everything", event.MCPReady)
	if out, err := h.call("mcp__everything__echo", `{"message":"back"}`); err != nil || out != "Echo: back" {
		t.Errorf("call after the restart = %q, %v", out, err)
	}
	if st := h.status("everything"); st.Pid == pid || st.Pid == 0 || st.Failures != 1 {
		t.Errorf("status after the restart = %+v", st)
	}
}

// TestMCPStopLeaksNothing stops a session whose servers need no node (the
// plugin example over stdio and an HTTP server on loopback): afterwards
// no goroutine is left, the plugin's process is gone and the HTTP session
// was ended.
func TestMCPStopLeaksNothing(t *testing.T) {
	// Not parallel: goleak must see this test's goroutines alone. The check
	// is the first cleanup registered, so it runs after the others have
	// closed the model fake and the HTTP server.
	t.Cleanup(func() { goleak.VerifyNone(t) })
	bin := pluginExample(t, t.TempDir())
	web := startHTTPMCP(t, false)
	h := newMCPHarness(t, testSpec(t,
		mcpconn.MCPServer{Config: mcp.ServerConfig{Name: "example", Type: mcp.TypeStdio, Command: bin}, Source: mcp.SourceUser},
		mcpconn.MCPServer{Config: mcp.ServerConfig{Name: "web", Type: mcp.TypeHTTP, URL: web.URL()}, Source: mcp.SourceUser}))
	ready := map[string]bool{}
	h.next("both servers ready", func(e event.Event) bool {
		if u, ok := e.(*event.MCPServerUpdated); ok && u.State == event.MCPReady {
			ready[u.Server] = true
		}
		return ready["example"] && ready["web"]
	})
	if out, err := h.call("mcp__example__wordcount", `{"text":"a b"}`); err != nil || out != "2" {
		t.Errorf("wordcount = %q, %v", out, err)
	}
	if out, err := h.call("mcp__web__echo", `{"text":"hi"}`); err != nil || out != "echo: hi" {
		t.Errorf("web echo = %q, %v", out, err)
	}
	pid := h.status("example").Pid
	if pid <= 0 || web.Open() != 1 {
		t.Fatalf("plugin pid %d, %d open http sessions", pid, web.Open())
	}
	h.close()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the plugin process %d is still there after the stop: %v", pid, err)
	}
	if n := web.Open(); n != 0 {
		t.Errorf("%d http sessions left open", n)
	}
}
