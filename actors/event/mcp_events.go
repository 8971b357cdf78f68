package event

import "encoding/json"

// The states of an MCP server, as QueryMCP and the mcp_server event report
// them.
const (
	// MCPConnecting: the first connection attempt is running.
	MCPConnecting = "connecting"
	// MCPReady: connected; its tools are registered.
	MCPReady = "ready"
	// MCPRestarting: the connection failed and a new attempt is due; its
	// tools stay registered and fail fast meanwhile.
	MCPRestarting = "restarting"
	// MCPFailed: the connection failed too often in a row; no more
	// attempts are made.
	MCPFailed = "failed"
	// MCPDisabled: the configuration disables the server.
	MCPDisabled = "disabled"
	// MCPUntrusted: a project-declared server without a launch grant for
	// its identity; nothing was started or contacted.
	MCPUntrusted = "untrusted"
)

// ToolProgress reports progress of a running MCP tool call.
type ToolProgress struct {
	Meta
	// CallID is the tool call, when known.
	CallID   string  `json:"call_id,omitempty"`
	Server   string  `json:"server"`
	Tool     string  `json:"tool"`
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// ElicitationRequested asks the frontend to fill in a form (or visit a
// URL) for an MCP server; it answers with an ElicitationResponse.
type ElicitationRequested struct {
	Meta
	RequestID string          `json:"request_id"`
	Server    string          `json:"server"`
	Message   string          `json:"message"`
	Mode      string          `json:"mode,omitempty"`
	Schema    json.RawMessage `json:"schema,omitempty"`
	URL       string          `json:"url,omitempty"`
}

// MCPServerUpdated reports an MCP server's new state or lists.
type MCPServerUpdated struct {
	Meta
	Server    string `json:"server"`
	Source    string `json:"source"`
	State     string `json:"state"`
	Tools     int    `json:"tools"`
	Prompts   int    `json:"prompts"`
	Resources int    `json:"resources"`
	Error     string `json:"error,omitempty"`
	Failures  int    `json:"failures,omitempty"`
}

// Kind implementations of the MCP events.
func (*ToolProgress) Kind() string { return "tool_progress" }

func (*ElicitationRequested) Kind() string { return "elicitation_requested" }

func (*MCPServerUpdated) Kind() string { return "mcp_server" }
