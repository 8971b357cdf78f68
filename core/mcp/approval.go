package mcp

import (
	"encoding/json"
	"fmt"
	"slices"

	"reasonix/core/text"
	"reasonix/core/tool"
)

// The approval modes of MCP tools ([[plugins]] default_tools_approval_mode
// and tools.<name>.approval_mode).
const (
	// ApprovalAuto leaves the call to the ordinary permission decision.
	ApprovalAuto = "auto"
	// ApprovalPrompt has every call reviewed by a person.
	ApprovalPrompt = "prompt"
	// ApprovalWrites has calls of writer tools reviewed; readers run.
	ApprovalWrites = "writes"
	// ApprovalApprove allows ordinary calls.
	ApprovalApprove = "approve"
)

// Approval is a server's approval policy for its tools.
type Approval struct {
	// Default is the server's mode; empty picks by where the server was
	// declared (see ServerConfig.ApprovalMode).
	Default string
	// Tools holds modes per raw tool name, over Default.
	Tools map[string]string
	// Reviewer is user or auto_review. There is no automatic reviewer
	// yet, so a call that needs review always goes to a person.
	Reviewer string
}

// ApprovalMode is the mode for one raw tool name: the tool's own, else the
// server's default, else approve for a server the user installed and auto
// for one the project declared. A project-declared server cannot approve
// its own tools: approve counts as auto there, since the launch grant does
// not cover the approval fields.
func (c ServerConfig) ApprovalMode(rawTool string) string {
	mode := c.Approval.Tools[rawTool]
	if mode == "" {
		mode = c.Approval.Default
	}
	switch {
	case mode == "" && c.Project:
		return ApprovalAuto
	case mode == "":
		return ApprovalApprove
	case mode == ApprovalApprove && c.Project:
		return ApprovalAuto
	}
	return mode
}

// TrustsReadOnly reports whether rawTool is one the user audited as
// read-only (trusted_read_only_tools): only those reach read-only
// subagents and the planner, whatever readOnlyHint says.
func (c ServerConfig) TrustsReadOnly(rawTool string) bool {
	return slices.Contains(c.TrustedReadOnly, rawTool)
}

// DestructiveTool is a remote tool the server marked destructiveHint: every
// call needs a person's fresh approval (tool.FreshApproval), whatever the
// posture, approval mode or earlier answers.
type DestructiveTool struct {
	*RemoteTool
}

var _ tool.FreshApproval = (*DestructiveTool)(nil)

// Preview names the tool and its arguments for the approval request.
func (d *DestructiveTool) Preview(args json.RawMessage) string {
	return fmt.Sprintf("mcp server %q marks %s destructive; arguments %s", d.server, d.info.Name, text.OneLine(string(args), 200))
}
