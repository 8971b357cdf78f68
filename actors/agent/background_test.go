package agent

import (
	"context"
	"testing"
	"time"

	"reasonix/actors/agent/team"
	"reasonix/actors/kernel"
	"reasonix/core/tool"
)

// TestIdleSubagentGivesAMessageBack: a message that reaches a subagent
// after its turn ended is not dropped: the subagent answers the sender
// with Undelivered, carrying the message, so its scheduler can start a
// follow-up with it.
func TestIdleSubagentGivesAMessageBack(t *testing.T) {
	t.Parallel()
	sys := kernel.NewSystem(nil)
	t.Cleanup(func() { _ = sys.Shutdown(context.Background()) })
	reg, err := tool.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	pid := sys.Root().Spawn(ExecutorProps(sys, AgentSpec{Session: "s1", Task: "f1.2", Tools: reg, System: "sub"}))
	msg := &team.Deliver{From: "f1.1", FromName: "a", Text: "hello"}
	got, err := sys.Root().RequestFuture(pid, msg, 5*time.Second).Result()
	if err != nil {
		t.Fatalf("no answer from an idle subagent: %v", err)
	}
	back, ok := got.(*team.Undelivered)
	if !ok || back.Task != "f1.2" || back.Message != msg {
		t.Fatalf("answer = %#v, want Undelivered for f1.2 carrying the message", got)
	}
}
