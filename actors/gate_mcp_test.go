package actors

import (
	"strings"
	"testing"

	"reasonix/actors/agent"
	"reasonix/core/mcp"
	"reasonix/core/permission"
)

// mcpTool adapts a tool of server "srv" with the given hints under cfg's
// approval settings; it is never called.
func mcpTool(cfg mcp.ServerConfig, name string, readOnly, destructive bool) mcp.Remote {
	cfg.Name = "srv"
	ro, de := readOnly, destructive
	return mcp.NewRemoteTool(nil, cfg, mcp.Tool{Name: name, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: &ro, DestructiveHint: &de}}, 0)
}

// TestMCPApprovalModes is the decision table of the MCP approval policy:
// explicit deny first, destructiveHint always a fresh approval, then the
// tool's mode, the server's, the default by where the server was declared,
// and the ordinary decision for auto.
func TestMCPApprovalModes(t *testing.T) {
	t.Parallel()
	ask := agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true}
	yolo := agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Posture: permission.PostureYolo, Interactive: true}
	headless := agent.Permissions{Policy: policy(t, "ask", nil, nil, nil)}
	sub := agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Delegated: true}
	denied := agent.Permissions{Policy: policy(t, "ask", nil, nil, []string{"mcp__srv__write"}), Interactive: true, Posture: permission.PostureYolo}
	mode := func(m string) mcp.ServerConfig { return mcp.ServerConfig{Approval: mcp.Approval{Default: m}} }
	project := mcp.ServerConfig{Project: true}
	tests := []struct {
		name     string
		perms    agent.Permissions
		tool     mcp.Remote
		want     permission.Decision
		contains string
	}{
		{"user server defaults to approve", ask, mcpTool(mcp.ServerConfig{}, "write", false, false), permission.Allow, "approves"},
		{"project server defaults to auto", ask, mcpTool(project, "write", false, false), permission.Ask, ""},
		{"project server cannot approve itself", ask, mcpTool(mcp.ServerConfig{Project: true, Approval: mcp.Approval{Default: "approve"}}, "write", false, false), permission.Ask, ""},
		{"auto under yolo", yolo, mcpTool(mode("auto"), "write", false, false), permission.Allow, ""},
		{"prompt asks even in yolo", yolo, mcpTool(mode("prompt"), "read", true, false), permission.Ask, "every call"},
		{"prompt headless fails closed", headless, mcpTool(mode("prompt"), "read", true, false), permission.Deny, "headless"},
		{"prompt in a subagent fails closed", sub, mcpTool(mode("prompt"), "read", true, false), permission.Deny, "subagent"},
		{"writes lets readers run", yolo, mcpTool(mode("writes"), "read", true, false), permission.Allow, ""},
		{"writes reviews writers", yolo, mcpTool(mode("writes"), "write", false, false), permission.Ask, "writer"},
		{"tool mode over server mode", yolo, mcpTool(mcp.ServerConfig{Approval: mcp.Approval{Default: "approve", Tools: map[string]string{"write": "prompt"}}}, "write", false, false), permission.Ask, ""},
		{"explicit deny first", denied, mcpTool(mode("approve"), "write", false, false), permission.Deny, ""},
		{"destructive asks in yolo under approve", yolo, mcpTool(mode("approve"), "wipe", false, true), permission.Ask, "asked every time"},
		{"destructive headless is refused", headless, mcpTool(mode("approve"), "wipe", false, true), permission.Deny, "headless"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := tt.perms.CheckTool(tt.tool, `{}`)
			if g.Decision != tt.want || (tt.contains != "" && !strings.Contains(g.Reason, tt.contains)) {
				t.Errorf("decision %v (%q), want %v containing %q", g.Decision, g.Reason, tt.want, tt.contains)
			}
		})
	}
}
