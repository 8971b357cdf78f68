package actors

import (
	"slices"
	"strings"
	"sync"

	"reasonix/core/mcp"
	"reasonix/core/tool"
)

// mcpShared holds, by session id, the MCP tools a session offers its
// subagents. The session actor, which owns the registry, replaces its
// entry whenever its servers' tools change and removes it when its last
// connection actor stops; a task's subagent takes a snapshot when it is
// built. The tools call through the session's connection gates, so a
// subagent's calls follow the same reconnection, timeouts and gates.
var mcpShared = struct {
	sync.Mutex
	m map[string][]mcp.Remote
}{m: map[string][]mcp.Remote{}}

// shareMCPTools publishes the MCP tools currently registered in s.
func (s *sessionActor) shareMCPTools() {
	m := s.mcp
	var tools []mcp.Remote
	for _, names := range m.registered {
		for _, n := range names {
			if t, ok := s.spec.Agent.Tools.Get(n); ok {
				if rt, ok := t.(mcp.Remote); ok {
					tools = append(tools, rt)
				}
			}
		}
	}
	slices.SortFunc(tools, func(a, b mcp.Remote) int { return strings.Compare(a.Name(), b.Name()) })
	mcpShared.Lock()
	defer mcpShared.Unlock()
	mcpShared.m[s.spec.Agent.Session] = tools
}

// unshareMCPTools withdraws the session's MCP tools from new subagents.
func unshareMCPTools(session string) {
	mcpShared.Lock()
	defer mcpShared.Unlock()
	delete(mcpShared.m, session)
}

// subagentMCPTools are the MCP tools of session a task's subagent gets: a
// writer every one, under the same gates; a reader (and the planner) only
// those a server lists in trusted_read_only_tools that also claim
// readOnlyHint, since a server's own hint grants no trust there.
func SubagentMCPTools(session string, writer bool) []tool.Tool {
	mcpShared.Lock()
	defer mcpShared.Unlock()
	var out []tool.Tool
	for _, t := range mcpShared.m[session] {
		if writer || (t.TrustedReadOnly() && t.ReadOnly()) {
			out = append(out, t)
		}
	}
	return out
}
