//go:build unix

package actors

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

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
	spec := testSpec(t, MCPServer{Config: mcp.ServerConfig{Name: "everything", Type: mcp.TypeStdio, Command: node, Args: []string{script, "stdio"}}, Source: mcp.SourceUser})
	// A backoff long enough to observe the restarting state.
	spec.Backoff = Backoff{Base: time.Second, Max: 2 * time.Second, GiveUp: 3}
	h := newMCPHarness(t, spec)
	h.waitServer("everything", MCPReady)
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
	first := h.next("first progress", func(e Event) bool { _, ok := e.(*ToolProgress); return ok }).(*ToolProgress)
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

	u := h.waitServer("everything", MCPRestarting)
	if u.Failures != 1 {
		t.Errorf("restarting update = %+v", u)
	}
	if _, err := h.call("mcp__everything__echo", `{"message":"too early"}`); err == nil || !strings.Contains(err.Error(), "is restarting (attempt 2 of 3)") {
		t.Errorf("call while restarting: %v", err)
	}
	h.waitServer("everything", MCPReady)
	if out, err := h.call("mcp__everything__echo", `{"message":"back"}`); err != nil || out != "Echo: back" {
		t.Errorf("call after the restart = %q, %v", out, err)
	}
	if st := h.status("everything"); st.Pid == pid || st.Pid == 0 || st.Failures != 1 {
		t.Errorf("status after the restart = %+v", st)
	}
}
