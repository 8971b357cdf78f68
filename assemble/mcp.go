package assemble

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"reasonix/actors/mcpconn"
	"reasonix/core/config"
	"reasonix/core/mcp"
	"reasonix/core/sandbox"
)

// MCPServers are the MCP servers of a workspace after the trust check and
// ${VAR} expansion.
type MCPServers struct {
	// Declared are the servers as the configuration declares them.
	Declared []mcp.Declared
	// Servers matches Declared index by index: what a session starts.
	Servers []mcpconn.MCPServer
}

// ResolveMCP reads the declared servers of cwd, applies launch grants
// (recording new ones when trustProject is set) and expands ${VAR}
// references, read with getenv (nil: os.Getenv), in the servers that may
// start. The identity checked is the config as declared, so secrets from
// the environment are not part of it. A server that may not start is
// marked (Disabled, Untrusted, Error), not refused: a session reports it
// and carries on.
func ResolveMCP(cfg *config.Config, cwd string, trustProject bool, getenv func(string) string) (*MCPServers, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	decls, err := mcp.Declarations(cfg, cwd)
	if err != nil {
		return nil, setupErrorf("mcp servers: %w", err)
	}
	set := &MCPServers{Declared: decls}
	var grants *mcp.Grants
	project := projectEnv(cfg, cwd)
	lookup := func(k string) (string, bool) {
		if v := getenv(k); v != "" {
			return v, true
		}
		v := project[k]
		return v, v != ""
	}
	for _, d := range decls {
		srv := mcpconn.MCPServer{Config: d.Config, Source: d.Source, Disabled: d.Disabled}
		if !d.Disabled && d.Project() {
			if grants == nil {
				if grants, err = mcp.LoadGrants(mcp.GrantsPath(cfg.Home)); err != nil {
					return nil, &SetupError{Err: err}
				}
			}
			id := mcp.Identity(d.Config)
			switch trust := grants.Check(cwd, d.Config.Name, id); {
			case trust == mcp.Granted:
			case trustProject:
				if err := grants.Grant(cwd, d.Config.Name, id, time.Now()); err != nil {
					return nil, err
				}
			default:
				srv.Untrusted = mcp.UntrustedReason(trust, d.Config.Name)
			}
		}
		if d.Project() {
			if err := projectOAuth(cfg, d.Config); err != nil {
				srv.Error = err.Error()
				set.Servers = append(set.Servers, srv)
				continue
			}
		}
		if !srv.Disabled && srv.Untrusted == "" {
			expanded, missing := d.Config.Expanded(lookup)
			if len(missing) > 0 {
				srv.Warnings = append(srv.Warnings, fmt.Sprintf("unset environment variable %s expanded to an empty value", strings.Join(missing, ", ")))
			}
			if err := expanded.Validate(); err != nil {
				srv.Error = err.Error()
			}
			srv.Config = expanded
		}
		set.Servers = append(set.Servers, srv)
	}
	return set, nil
}

// projectEnv is what the workspace's .env gives ${VAR} in server entries
// where the environment has nothing: only in a trusted workspace, and
// never a provider's API key variable or one of Reasonix's own
// (REASONIX_*), so a cloned repository can neither feed a key to a server
// nor steer Reasonix. A missing or unreadable file gives nothing.
func projectEnv(cfg *config.Config, cwd string) map[string]string {
	if !cfg.ProjectTrusted {
		return nil
	}
	vars, err := config.ReadDotEnv(filepath.Join(cwd, ".env"))
	if err != nil {
		return nil
	}
	for k := range vars {
		if strings.HasPrefix(k, "REASONIX_") {
			delete(vars, k)
		}
	}
	for _, p := range cfg.Providers {
		delete(vars, p.APIKeyEnv)
	}
	return vars
}

// projectOAuth refuses the OAuth settings of a project's server that
// would hand it the user's secrets: a private key file (any file the
// user can read), a provider's API key variable or one of Reasonix's own.
// A project names its client; the user's own config names keys.
func projectOAuth(cfg *config.Config, c mcp.ServerConfig) error {
	if c.OAuth.PrivateKeyFile != "" {
		return fmt.Errorf("mcp server %q: a project's server may not name a private key file (oauth private_key_file); declare the server in the user config", c.Name)
	}
	for _, v := range c.OAuth.Vars() {
		if strings.HasPrefix(v, "REASONIX_") || slices.ContainsFunc(cfg.Providers, func(p config.ProviderConfig) bool { return p.APIKeyEnv == v }) {
			return fmt.Errorf("mcp server %q: a project's server may not read %s for OAuth: it holds a provider's API key or a Reasonix setting", c.Name, v)
		}
	}
	return nil
}

// buildMCP is the MCP part of a top-level session.
func buildMCP(cfg *config.Config, o BuildOptions) (mcpconn.MCPSpec, error) {
	set, err := ResolveMCP(cfg, o.Cwd, o.TrustProjectMCP, o.Getenv)
	if err != nil {
		return mcpconn.MCPSpec{}, err
	}
	var jail func(mcp.ServerConfig, mcp.StdioCommand) (mcp.StdioCommand, error)
	for _, srv := range set.Servers {
		if srv.Config.Jailed() {
			sb, err := NewSandbox(cfg, o.Cwd)
			if err != nil {
				return mcpconn.MCPSpec{}, err
			}
			jail = MCPJail(sb)
			break
		}
	}
	return mcpconn.MCPSpec{
		Jail:           jail,
		Servers:        set.Servers,
		CallTimeout:    time.Duration(cfg.Tools.MCPCallTimeoutSeconds) * time.Second,
		StartupTimeout: mcpStartupTimeout,
		Root:           WorkspaceRoot(cfg, o.Cwd),
		Client:         o.Client,
		Interactive:    o.Interactive,
		Elicitation:    o.MCPElicitation,
		Home:           cfg.Home,
	}, nil
}

// MCPJail runs a jailed stdio server's command (mcp.ServerConfig.Jailed)
// inside sb's bash jail. A project's server sees the workspace read-only,
// writes only the scratch directories and reaches the network only when
// its entry says network = true; a user's server that opted in with
// sandbox = true may write the writer roots and reaches the network when
// [sandbox] network allows it. Either reads nothing forbidden. A jail
// that is off or unavailable is an error, never a server run unconfined.
func MCPJail(sb *sandbox.Sandbox) func(mcp.ServerConfig, mcp.StdioCommand) (mcp.StdioCommand, error) {
	return func(cfg mcp.ServerConfig, c mcp.StdioCommand) (mcp.StdioCommand, error) {
		if sb.Mode() == sandbox.ModeOff {
			if cfg.Project {
				return c, errors.New("a project's stdio server runs in the bash jail, and the jail is off ([sandbox] bash); declare the server in your user config to run it unconfined")
			}
			return c, errors.New("sandbox = true, but the bash jail is off ([sandbox] bash)")
		}
		jail := sb
		if cfg.Project {
			jail = sb.ReadOnly(cfg.Network)
		}
		argv, err := jail.Wrap(c.Dir, append([]string{c.Command}, c.Args...))
		if err != nil {
			return c, err
		}
		c.Command, c.Args = argv[0], argv[1:]
		return c, nil
	}
}
