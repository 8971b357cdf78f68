package agent

import (
	"context"
	"testing"

	"reasonix/actors/agent/team"
	"reasonix/actors/kernel"
	"reasonix/core/provider"
)

// TestFleetIDsContinueAfterResume: a session resumed with a history that
// already made two delegation calls numbers its next fleet f3, so task ids
// (and subagent transcript names) are never reused.
func TestFleetIDsContinueAfterResume(t *testing.T) {
	t.Parallel()
	history := []provider.Message{
		{Role: provider.RoleSystem, Content: "sys"},
		{Role: provider.RoleUser, Content: "earlier"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "a", Name: team.ToolTask, Arguments: `{"prompt":"x"}`}}},
		{Role: provider.RoleTool, ToolCallID: "a", Content: "done"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "b", Name: team.ToolFleet, Arguments: `{}`}}},
		{Role: provider.RoleTool, ToolCallID: "b", Content: "done"},
	}
	sys := kernel.NewSystem(nil)
	t.Cleanup(func() { _ = sys.Shutdown(context.Background()) })
	e := newExecutor(sys, AgentSpec{Session: "s1", History: history})
	if e.fleetSeq != 2 {
		t.Fatalf("fleet sequence after resume = %d, want 2 (next fleet f3)", e.fleetSeq)
	}
}
