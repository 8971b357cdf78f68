// Package assemble builds a session from configuration: its provider,
// sandbox, permissions, tools, MCP servers, planner and scheduler, with the
// subagent factory the scheduler and a worker host build each task's agent
// with. Everything that turns config into actors lives here, so cmd, the
// worker host and the fleet share one way of doing it.
package assemble

import (
	// Built-in providers and tools register themselves; a session built
	// here has them whoever imports this package.
	_ "reasonix/core/history"
	_ "reasonix/core/memory"
	_ "reasonix/core/provider/openai"
	_ "reasonix/core/tool/builtin"
)
