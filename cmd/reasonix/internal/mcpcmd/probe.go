package mcpcmd

import (
	"log/slog"
	"sync"
	"time"

	"reasonix/actors/event"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/config"
	"reasonix/core/panics"
)

// ServerProbe is what starting one configured MCP server found, for
// `reasonix doctor`.
type ServerProbe struct {
	Name, Source string
	// State is event.MCPReady, MCPFailed, MCPDisabled or MCPUntrusted.
	State string
	// Tools counts the tools a ready server lists; Took is how long it
	// took to start, connect and list them.
	Tools int
	Took  time.Duration
	// Err is why it is not ready (for a stdio server that exited, with
	// the last lines it wrote to stderr).
	Err string
}

// ProbeServers starts each MCP server cfg declares for cwd, as a session
// would (the launch grants decide, no new grant is recorded), lists its
// tools and stops it again, all side by side, each within timeout.
func ProbeServers(f *cmdutil.Factory, cfg *config.Config, cwd string, timeout time.Duration, logger *slog.Logger) ([]ServerProbe, error) {
	set, err := resolveMCP(f, cfg, cwd, false)
	if err != nil {
		return nil, err
	}
	m := &mcpContext{cfg: cfg, cwd: cwd, logger: logger}
	defer func() {
		for _, c := range m.closers {
			c()
		}
	}()
	out := make([]ServerProbe, len(set.Servers))
	var wg sync.WaitGroup
	for i, srv := range set.Servers {
		out[i] = ServerProbe{Name: srv.Config.Name, Source: set.Declared[i].Source}
		switch {
		case srv.Disabled:
			out[i].State = event.MCPDisabled
		case srv.Untrusted != "":
			out[i].State, out[i].Err = event.MCPUntrusted, srv.Untrusted
		case srv.Error != "":
			out[i].State, out[i].Err = event.MCPFailed, srv.Error
		default:
			panics.GoGroup(&wg, func() {
				start := time.Now()
				p := m.probe(f, srv.Config, timeout)
				out[i].State, out[i].Tools, out[i].Err, out[i].Took = p.state, p.tools, p.err, time.Since(start)
			}, func(err error) {
				out[i].State, out[i].Err = event.MCPFailed, "probe: "+err.Error()
			})
		}
	}
	wg.Wait()
	return out, nil
}
