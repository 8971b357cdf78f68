package doctor

import (
	"fmt"
	"log/slog"
	"time"

	"reasonix/actors/event"
	"reasonix/cmd/reasonix/internal/mcpcmd"
	"reasonix/core/text"
)

// doctorMCPTimeout bounds one server's start, handshake and tool list.
const doctorMCPTimeout = 20 * time.Second

// checkMCP starts every configured MCP server and reports, one line each,
// its state, tool count and start time, or why it did not start.
func (d *Doctor) checkMCP() []check {
	c := check{name: "mcp"}
	if d.Cfg == nil {
		return []check{c.skipped("needs a valid config")}
	}
	probes, err := mcpcmd.ProbeServers(d.f, d.Cfg, d.cwd, doctorMCPTimeout, slog.New(slog.DiscardHandler))
	if err != nil {
		c.Status, c.Detail = checkFail, err.Error()
		return []check{c}
	}
	if len(probes) == 0 {
		return []check{c.skipped("no servers configured ([[plugins]] or .mcp.json)")}
	}
	var out []check
	for _, p := range probes {
		c := check{name: "mcp", Detail: fmt.Sprintf("%s (%s): ", p.Name, p.Source)}
		switch p.State {
		case event.MCPReady:
			c.Detail += fmt.Sprintf("ready, %d tools, started in %d ms", p.Tools, p.Took.Milliseconds())
		case event.MCPDisabled:
			c.Status, c.Detail = checkSkip, c.Detail+"disabled"
		case event.MCPUntrusted:
			c.Status, c.Detail = CheckWarn, c.Detail+"not started: "+p.Err
		default:
			c.Status, c.Detail = checkFail, c.Detail+"failed after "+fmt.Sprint(p.Took.Milliseconds())+" ms: "+text.OneLine(p.Err, 300)
		}
		out = append(out, c)
	}
	return out
}
