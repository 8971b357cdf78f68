package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"reasonix/core/tool"
)

// ToolCaller runs a tool on a server. *Client is one; a connection owner
// that restarts its Client can be another, so that adapted tools survive
// reconnection.
type ToolCaller interface {
	CallTool(ctx context.Context, name string, args json.RawMessage, onProgress ProgressFunc) (*CallToolResult, error)
}

// RemoteTool adapts one server tool to tool.Tool under the name ToolName
// gives it.
type RemoteTool struct {
	caller   ToolCaller
	server   string
	info     Tool
	timeout  time.Duration
	approval string
	trusted  bool
}

var _ tool.Tool = (*RemoteTool)(nil)

// Remote is what every adapted MCP tool offers beyond tool.Tool.
type Remote interface {
	tool.Tool
	// Server is the name of the server the tool belongs to.
	Server() string
	// Info is the tool as the server listed it.
	Info() Tool
	// ApprovalMode is the tool's approval mode (Approval* constants).
	ApprovalMode() string
	// TrustedReadOnly reports that the user audited the tool as
	// read-only (trusted_read_only_tools).
	TrustedReadOnly() bool
}

// NewRemoteTool adapts t, listed by the server cfg describes. Calls are
// capped by cfg.Timeout(t.Name, global); zero means no cap. A tool the
// server marks destructive comes back as a *DestructiveTool.
func NewRemoteTool(caller ToolCaller, cfg ServerConfig, t Tool, global time.Duration) Remote {
	rt := &RemoteTool{caller: caller, server: cfg.Name, info: t, timeout: cfg.Timeout(t.Name, global),
		approval: cfg.ApprovalMode(t.Name), trusted: cfg.TrustsReadOnly(t.Name)}
	if t.Destructive() {
		return &DestructiveTool{RemoteTool: rt}
	}
	return rt
}

// ApprovalMode is the tool's approval mode.
func (r *RemoteTool) ApprovalMode() string { return r.approval }

// TrustedReadOnly reports that the user audited the tool as read-only.
func (r *RemoteTool) TrustedReadOnly() bool { return r.trusted }

// Name is mcp__<server>__<tool>.
func (r *RemoteTool) Name() string { return ToolName(r.server, r.info.Name) }

// Description is the server's description, or its title when it gave
// none.
func (r *RemoteTool) Description() string {
	if r.info.Description != "" {
		return r.info.Description
	}
	return r.info.DisplayTitle()
}

// Schema is the server's input schema as sent; the registry canonicalises
// it.
func (r *RemoteTool) Schema() json.RawMessage { return r.info.InputSchema }

// ReadOnly is true only when the server declared readOnlyHint true.
func (r *RemoteTool) ReadOnly() bool { return r.info.ReadOnly() }

// Timeout is the cap this tool applies to its own calls (zero: none), so
// the runtime can give it room instead of cutting it off first.
func (r *RemoteTool) Timeout() time.Duration { return r.timeout }

// Server is the name of the server the tool belongs to.
func (r *RemoteTool) Server() string { return r.server }

// Info is the tool as the server listed it, annotations included.
func (r *RemoteTool) Info() Tool { return r.info }

// Execute calls the tool and renders its result for the model. A failure
// the tool reports becomes the returned error, whose text the model reads.
func (r *RemoteTool) Execute(ctx context.Context, args json.RawMessage) (string, error) {
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.timeout, fmt.Errorf("mcp tool %s timed out after %s", r.Name(), r.timeout))
		defer cancel()
	}
	res, err := r.caller.CallTool(ctx, r.info.Name, args, nil)
	if err != nil {
		return "", fmt.Errorf("mcp server %q tool %q: %w", r.server, r.info.Name, err)
	}
	text := res.Text()
	if res.IsError {
		if text == "" {
			text = "the tool reported an error without details"
		}
		return "", errors.New(text)
	}
	return text, nil
}
