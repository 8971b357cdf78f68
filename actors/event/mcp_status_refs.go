package event

import (
	"slices"

	"reasonix/core/mcp"
)

// MCPResourceRef is a resource with the reference that names it.
type MCPResourceRef struct {
	Ref      MCPRef
	Resource mcp.Resource
}

// MCPRef is one @<server>:<uri> reference in a user message.
type MCPRef struct {
	// Server is the MCP server; URI the resource it serves.
	Server string
	URI    string
}

// String is the reference as written, without the @.
func (r MCPRef) String() string { return r.Server + ":" + r.URI }

// MCPPrompts lists every prompt of the ready servers as slash commands,
// sorted by command name.
func (st *MCPStatus) MCPPrompts() []MCPPromptRef {
	var out []MCPPromptRef
	for _, s := range st.Servers {
		if s.State != MCPReady {
			continue
		}
		for _, p := range s.Prompts {
			out = append(out, MCPPromptRef{Server: s.Name, Prompt: p})
		}
	}
	slices.SortFunc(out, func(a, b MCPPromptRef) int {
		switch {
		case a.Command() < b.Command():
			return -1
		case a.Command() > b.Command():
			return 1
		}
		return 0
	})
	return out
}

// Resources lists every resource of the ready servers with its
// reference, as @ completion offers them.
func (st *MCPStatus) Resources() []MCPResourceRef {
	var out []MCPResourceRef
	for _, s := range st.Servers {
		if s.State != MCPReady {
			continue
		}
		for _, r := range s.Resources {
			out = append(out, MCPResourceRef{Ref: MCPRef{Server: s.Name, URI: r.URI}, Resource: r})
		}
	}
	return out
}

// MCPPromptRef is a prompt as a slash command: its server and prompt.
type MCPPromptRef struct {
	Server string
	Prompt mcp.Prompt
}

// Command is the slash command name of the prompt, without the slash:
// mcp__<server>__<prompt>, normalised as tool names are.
func (p MCPPromptRef) Command() string { return mcp.ToolName(p.Server, p.Prompt.Name) }
