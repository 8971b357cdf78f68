package mcpconn

import (
	"strings"
	"time"

	"reasonix/actors/event"
	"reasonix/core/mcp"
)

// Elicitation policies for sessions without a frontend to ask.
const (
	// ElicitDecline declines every elicitation request.
	ElicitDecline = "decline"
	// ElicitDefaults accepts a form with the defaults its schema gives,
	// and declines it when a required field has none.
	ElicitDefaults = "defaults"
)

// MCPServer is one MCP server a session connects to. It is spawn-time
// configuration.
type MCPServer struct {
	// Config is the server, with ${VAR} references already expanded.
	Config mcp.ServerConfig
	// Source is where it was declared (mcp.SourceUser, ...).
	Source string
	// Disabled servers are reported, never started.
	Disabled bool
	// Untrusted, when set, is why the server may not start; it is
	// reported and nothing is started or contacted.
	Untrusted string
	// Error, when set, is a configuration problem found before starting
	// (a URL that is invalid once expanded): the server is reported
	// failed and never started.
	Error string
	// Warnings are published as notices when the session starts (unset
	// variables, for instance).
	Warnings []string
}

// MCPSpec configures the MCP servers of a session.
type MCPSpec struct {
	// Servers are started in the order given, one connection actor each.
	Servers []MCPServer
	// CallTimeout is the global cap of one call ([tools]
	// mcp_call_timeout_seconds); servers and tools may override it.
	CallTimeout time.Duration
	// StartupTimeout bounds how long the first turn waits for the first
	// connection attempts; zero means 10 seconds.
	StartupTimeout time.Duration
	// ConnectTimeout bounds one handshake plus the listing that follows;
	// zero means 30 seconds.
	ConnectTimeout time.Duration
	// Backoff is the reconnection policy; zero fields take defaults.
	Backoff Backoff
	// Root is the workspace offered through roots/list and the working
	// directory of stdio servers.
	Root string
	// Client names this program in the handshake.
	Client mcp.Implementation
	// Interactive says a frontend answers elicitation requests through
	// ElicitationRequested events; otherwise Elicitation applies.
	Interactive bool
	// Elicitation is ElicitDecline (the default) or ElicitDefaults.
	Elicitation string
	// Jail rewrites the command line of a jailed stdio server
	// (ServerConfig.Jailed) so that it runs inside the bash jail that
	// server gets; nil means no jail can be had, and such a server fails
	// to start.
	Jail func(mcp.ServerConfig, mcp.StdioCommand) (mcp.StdioCommand, error)
	// Home is the reasonix home, where OAuth tokens of http servers are
	// stored; empty keeps none. A session uses stored tokens (refreshing
	// them) and never starts an authorization itself.
	Home string
}

// QueryMCP asks a session, or one connection actor, for the state of its
// MCP servers. The reply is an *MCPStatus.
type QueryMCP struct{}

// GetMCPPrompt asks for a server's prompt rendered with Args. The reply is
// an *MCPPromptResult.
type GetMCPPrompt struct {
	// ID is echoed in the reply.
	ID     string
	Server string
	Prompt string
	Args   map[string]string
}

// MCPPromptResult is the rendered prompt, or why there is none.
type MCPPromptResult struct {
	ID     string
	Server string
	Prompt string
	Text   string
	Error  string
}

// ReadMCPResource asks for a resource of a server. The reply is an
// *MCPResourceResult.
type ReadMCPResource struct {
	// ID is echoed in the reply.
	ID     string
	Server string
	URI    string
}

// MCPResourceResult is the resource's text, or why there is none.
type MCPResourceResult struct {
	ID     string
	Server string
	URI    string
	Text   string
	Error  string
}

// ElicitationResponse answers an ElicitationRequested event. Action is
// mcp.ElicitAccept, mcp.ElicitDecline or mcp.ElicitCancel; Content holds
// the form's values of an accepted request.
type ElicitationResponse struct {
	RequestID string
	Server    string
	Action    string
	Content   map[string]any
}

// McpMessage marks the messages a session hands to its MCP part.
type McpMessage interface{ isMCP() }

func (*QueryMCP) isMCP()            {}
func (*GetMCPPrompt) isMCP()        {}
func (*ReadMCPResource) isMCP()     {}
func (*MCPPromptResult) isMCP()     {}
func (*MCPResourceResult) isMCP()   {}
func (*ElicitationResponse) isMCP() {}
func (*McpUpdate) isMCP()           {}
func (*McpToolsListed) isMCP()      {}

// McpUpdate is a connection actor telling its session its new status.
// settled says the first connection attempt is over or the startup
// timeout has passed, so a held turn need not wait for this server.
type McpUpdate struct {
	Status  event.MCPServerStatus
	Settled bool
}

// McpToolsListed is a connection actor telling its session the tools its
// server lists now. The session owns the tool registry and makes it match:
// it registers these under mcp__<server>__<tool> and removes the server's
// tools that are gone, so no other actor ever writes the registry. It
// arrives before the mcpUpdate of the same change.
type McpToolsListed struct {
	Server string
	Tools  []mcp.Tool
}

// McpResync asks a connection actor to send its tools and status again;
// the session's repair uses it to rebuild what it knows of its servers
// from their own state.
type McpResync struct{}

// Messages a connection actor sends itself. epoch ties each to one
// connection attempt; those of an older attempt are stale.
type (
	// connUp: the attempt connected and listed the server.
	ConnUp struct {
		epoch     int
		info      mcp.Implementation
		pid       int
		tools     []mcp.Tool
		prompts   []mcp.Prompt
		resources []mcp.Resource
		hasPrompt bool
		hasRes    bool
	}
	// connDown: the attempt failed, or its connection ended.
	ConnDown struct {
		epoch int
		err   string
		// wasUp says the connection had been established.
		wasUp bool
	}
	// reconnect: the backoff delay has passed.
	Reconnect struct{ epoch int }
	// connStable: the connection stayed up for the stable period.
	connStable struct{ epoch int }
	// startupOver: the session's startup timeout passed.
	startupOver struct{}
	// listChanged: the server announced a changed list.
	ListChanged struct {
		epoch int
		kind  mcp.ListKind
	}
	// relisted carries a list fetched again after a change.
	Relisted struct {
		epoch     int
		kind      mcp.ListKind
		tools     []mcp.Tool
		prompts   []mcp.Prompt
		resources []mcp.Resource
		err       string
	}
)

func isTextMIME(m string) bool {
	return strings.HasPrefix(m, "text/") || strings.HasSuffix(m, "json") || strings.HasSuffix(m, "xml") ||
		strings.HasSuffix(m, "yaml") || strings.HasSuffix(m, "javascript")
}

func joinParts(parts []string) string { return strings.Join(parts, "\n\n") }
