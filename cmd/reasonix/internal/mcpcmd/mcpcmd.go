package mcpcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"reasonix/actors/event"
	"reasonix/actors/mcpconn"
	"reasonix/assemble"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/config"
	"reasonix/core/mcp"
	"reasonix/core/mcp/oauth"
	"reasonix/core/panics"
	"reasonix/core/text"
)

// McpElicitations are the values of --mcp-elicitation.
var McpElicitations = []string{mcpconn.ElicitDecline, mcpconn.ElicitDefaults}

// resolveMCP is actors.ResolveMCP with the Factory's environment; a bad
// declaration or grant file is a usage error (exit 2).
func resolveMCP(f *cmdutil.Factory, cfg *config.Config, cwd string, trustProject bool) (*assemble.MCPServers, error) {
	set, err := assemble.ResolveMCP(cfg, cwd, trustProject, f.Env)
	if err != nil {
		return nil, cmdutil.AsUsage(err)
	}
	return set, nil
}

// MCPOptions are the inputs of the `reasonix mcp` subcommands.
type MCPOptions struct {
	cmdutil.GlobalOptions
	// TrustProjectMCP records launch grants for project servers.
	TrustProjectMCP bool
	// NoConnect lists servers without connecting (mcp list).
	NoConnect bool
	// URL and Headers address a streamable HTTP server directly.
	URL     string
	Headers []string
	// Timeout bounds connecting and each request.
	Timeout time.Duration
	// Server, Tool and Args are the positional arguments.
	Server string
	Tool   string
	Args   string
	// Elicitation answers servers' questions: decline or defaults.
	Elicitation string
	// OAuthAuthorize is how an authorization URL is handled: browser,
	// print or fetch.
	OAuthAuthorize string
	// OAuth holds the --oauth-* flags; each one set overrides the
	// server's oauth_* key of the same name.
	OAuth oauth.Settings
}

// NewCmdMCP builds `reasonix mcp`, the parent of the commands that
// inspect and try MCP servers.
func NewCmdMCP(f *cmdutil.Factory, runF func(sub string, o *MCPOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "List, inspect, call and approve MCP servers",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageErrorf("unknown command %q for %q; want list, tools, call, trust, login or logout", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	run := func(sub string, o *MCPOptions) error {
		if runF != nil {
			return runF(sub, o)
		}
		switch sub {
		case "list":
			return runMCPList(f, o)
		case "tools":
			return runMCPTools(f, o)
		case "call":
			return runMCPCall(f, o)
		case "login":
			return runMCPLogin(f, o)
		case "logout":
			return runMCPLogout(f, o)
		}
		return runMCPTrust(f, o)
	}

	login, loginCmd := NewCmdMCPLogin(run)
	logout, logoutCmd := NewCmdMCPLogout(run)
	list, listCmd := NewCmdMCPList(run)
	tools, toolsCmd := NewCmdMCPTools(run)
	call, callCmd := NewCmdMCPCall(f, run)
	trust, trustCmd := NewCmdMCPTrust(run)
	addMCPFlags(listCmd, list, mcpConnects)
	addMCPFlags(toolsCmd, tools, mcpConnects|mcpURL|mcpHeaders|mcpElicits)
	addMCPFlags(callCmd, call, mcpConnects|mcpURL|mcpHeaders|mcpElicits)
	addMCPFlags(trustCmd, trust, 0)
	addMCPFlags(loginCmd, login, mcpConnects|mcpURL|mcpHeaders)
	addMCPFlags(logoutCmd, logout, mcpURL)
	cmd.AddCommand(listCmd, toolsCmd, callCmd, trustCmd, loginCmd, logoutCmd)
	return cmd
}

// The flag groups a verb of `reasonix mcp` takes besides --config and --cwd.
const (
	// mcpConnects: --trust-project-mcp and --timeout, for verbs that connect.
	mcpConnects = 1 << iota
	// mcpURL: --url, for verbs that may name a server by its URL.
	mcpURL
	// mcpHeaders: --header and the OAuth flags, for verbs that talk HTTP to --url.
	mcpHeaders
	// mcpElicits: --mcp-elicitation, for verbs that may be asked questions.
	mcpElicits
)

// addMCPFlags adds the global flags and the groups in groups to a verb.
func addMCPFlags(c *cobra.Command, o *MCPOptions, groups int) {
	cmdutil.AddGlobalFlags(c, &o.GlobalOptions)
	if groups&mcpConnects != 0 {
		c.Flags().BoolVar(&o.TrustProjectMCP, "trust-project-mcp", false, "approve project servers for this workspace (records launch grants)")
		c.Flags().DurationVar(&o.Timeout, "timeout", 30*time.Second, "bound for connecting and for each request")
	}
	if groups&mcpURL != 0 {
		c.Flags().StringVar(&o.URL, "url", "", "connect to this streamable HTTP server instead of a configured one")
	}
	if groups&mcpHeaders != 0 {
		c.Flags().StringArrayVar(&o.Headers, "header", nil, "a header for --url, as Name=Value (repeatable)")
		addOAuthFlags(c, o)
	}
	if groups&mcpElicits != 0 {
		c.Flags().StringVar(&o.Elicitation, "mcp-elicitation", mcpconn.ElicitDecline, "how the server's questions are answered: decline, or defaults (the form's default values)")
	}
}

// NewCmdMCPList builds `reasonix mcp list`.
func NewCmdMCPList(run func(sub string, o *MCPOptions) error) (*MCPOptions, *cobra.Command) {
	list := &MCPOptions{}
	listCmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List the configured MCP servers with their state and counts",
		Long: `List every MCP server of the workspace: [[plugins]] from the user config,
the project's reasonix.toml and .mcp.json. Each server is connected to (unless
--no-connect) and reported with its source, transport, state and the number of
tools, prompts and resources it offers. Project servers without a launch grant
are shown as untrusted and not started.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return run("list", list) },
	}
	listCmd.Flags().BoolVar(&list.NoConnect, "no-connect", false, "do not connect; show the configuration only")
	return list, listCmd
}

// NewCmdMCPTools builds `reasonix mcp tools`.
func NewCmdMCPTools(run func(sub string, o *MCPOptions) error) (*MCPOptions, *cobra.Command) {
	tools := &MCPOptions{}
	return tools, &cobra.Command{
		Use:   "tools <server> | --url URL",
		Short: "List a server's tools",
		Args: func(cmd *cobra.Command, args []string) error {
			return serverArgs(tools, args, 0)
		},
		RunE: func(cmd *cobra.Command, args []string) error { return run("tools", tools) },
	}
}

// NewCmdMCPCall builds `reasonix mcp call`.
func NewCmdMCPCall(f *cmdutil.Factory, run func(sub string, o *MCPOptions) error) (*MCPOptions, *cobra.Command) {
	call := &MCPOptions{}
	return call, &cobra.Command{
		Use:   "call <server> | --url URL  <tool> [json-args]",
		Short: "Call a server's tool and print the result",
		Long: `Call one tool and print its result text. json-args is a JSON object ("-"
reads it from stdin); omitted means {}. Exit codes: 0 ok, 1 the tool reported
an error or the server failed, 2 bad arguments or an unknown server or tool.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := serverArgs(call, args, 1); err != nil {
				return err
			}
			rest := args
			if call.URL == "" {
				rest = args[1:]
			}
			call.Tool = rest[0]
			if len(rest) > 1 {
				call.Args = rest[1]
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if call.Args == "-" {
				data, err := io.ReadAll(f.Stdin)
				if err != nil {
					return fmt.Errorf("read arguments from stdin: %w", err)
				}
				call.Args = string(data)
			}
			return run("call", call)
		},
	}
}

// NewCmdMCPTrust builds `reasonix mcp trust`.
func NewCmdMCPTrust(run func(sub string, o *MCPOptions) error) (*MCPOptions, *cobra.Command) {
	trust := &MCPOptions{}
	return trust, &cobra.Command{
		Use:   "trust <server>",
		Short: "Approve a project MCP server to start in this workspace",
		Long: `Record a launch grant for a server declared by the project (reasonix.toml or
.mcp.json) in this workspace. The grant covers the server exactly as declared:
any change to its command, arguments, environment, URL or headers needs a new
grant.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.UsageErrorf("want exactly one server name, got %d arguments", len(args))
			}
			trust.Server = args[0]
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return run("trust", trust) },
	}
}

// serverArgs takes the server name from args unless --url is set; extra
// is how many more positional arguments are required (json-args may
// follow them).
func serverArgs(o *MCPOptions, args []string, extra int) error {
	need, maxArgs := extra, extra
	if extra > 0 {
		maxArgs++
	}
	if o.URL == "" {
		need++
		maxArgs++
	}
	if len(args) < need || len(args) > maxArgs {
		if o.URL == "" && len(args) == 0 {
			return cmdutil.UsageErrorf("name a configured server or pass --url")
		}
		return cmdutil.UsageErrorf("wrong number of arguments (%d)", len(args))
	}
	if o.URL == "" {
		o.Server = args[0]
	} else if len(o.Headers) > 0 {
		for _, h := range o.Headers {
			if k, _, ok := strings.Cut(h, "="); !ok || strings.TrimSpace(k) == "" {
				return cmdutil.UsageErrorf("--header %q: want Name=Value", h)
			}
		}
	}
	if o.URL == "" && len(o.Headers) > 0 {
		return cmdutil.UsageErrorf("--header applies to --url only")
	}
	return checkMCPFlags(o)
}

// mcpContext is the configuration an mcp subcommand works with.
type mcpContext struct {
	cfg    *config.Config
	cwd    string
	logger *slog.Logger
	close  func()

	mu      sync.Mutex
	closers []func()
}

// atClose runs fn when the context is closed, before the log is.
func (m *mcpContext) atClose(fn func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closers = append(m.closers, fn)
}

// loadMCPContext loads the configuration, with the home taken through the
// Factory like `config show` does.
func loadMCPContext(f *cmdutil.Factory, o *MCPOptions) (*mcpContext, error) {
	cwd, err := o.Workdir()
	if err != nil {
		return nil, err
	}
	cfg, err := cmdutil.LoadConfig(f, &o.GlobalOptions, cwd)
	if err != nil {
		return nil, err
	}
	logger, closeLog := cmdutil.OpenLogger(cfg.Home, f.Getenv)
	m := &mcpContext{cfg: cfg, cwd: cwd, logger: logger.With("cmd", "mcp")}
	m.close = func() {
		m.mu.Lock()
		closers := m.closers
		m.closers = nil
		m.mu.Unlock()
		for _, fn := range slices.Backward(closers) {
			fn()
		}
		closeLog()
	}
	return m, nil
}

// target is the server an mcp subcommand works on: a configured one
// (after the trust check and expansion) or --url.
func (m *mcpContext) target(f *cmdutil.Factory, o *MCPOptions) (mcp.ServerConfig, error) {
	if o.URL != "" {
		headers := map[string]string{}
		for _, h := range o.Headers {
			k, v, _ := strings.Cut(h, "=")
			headers[strings.TrimSpace(k)] = v
		}
		c := mcp.ServerConfig{Name: "url", Type: mcp.TypeHTTP, URL: o.URL, Headers: headers}
		if err := c.Validate(); err != nil {
			return c, &cmdutil.UsageError{Err: fmt.Errorf("--url: %w", err)}
		}
		return c, nil
	}
	set, err := resolveMCP(f, m.cfg, m.cwd, o.TrustProjectMCP)
	if err != nil {
		return mcp.ServerConfig{}, err
	}
	var names []string
	for i, d := range set.Declared {
		names = append(names, d.Config.Name)
		if d.Config.Name != o.Server {
			continue
		}
		srv := set.Servers[i]
		switch {
		case srv.Disabled:
			return srv.Config, cmdutil.UsageErrorf("mcp server %q is disabled in %s", o.Server, d.File)
		case srv.Untrusted != "":
			return srv.Config, cmdutil.UsageErrorf("mcp server %q (%s): %s", o.Server, d.File, srv.Untrusted)
		case srv.Error != "":
			return srv.Config, cmdutil.UsageErrorf("%s", srv.Error)
		}
		for _, w := range srv.Warnings {
			fmt.Fprintf(f.Stderr, "reasonix: warning: mcp server %q: %s\n", o.Server, w)
		}
		return srv.Config, nil
	}
	return mcp.ServerConfig{}, unknownServer(m, o.Server, names)
}

// unknownServer is the usage error for a server name nothing declares.
// When the workspace is untrusted and its files would declare servers, it
// says so: otherwise a server the user can see in reasonix.toml would just
// be "unknown".
func unknownServer(m *mcpContext, name string, names []string) error {
	msg := fmt.Sprintf("unknown mcp server %q: none is configured ([[plugins]] or .mcp.json)", name)
	if len(names) > 0 {
		msg = fmt.Sprintf("unknown mcp server %q (configured: %s)", name, strings.Join(names, ", "))
	}
	if !m.cfg.ProjectTrusted && (slices.Contains(m.cfg.Untrusted, config.EntryKey("plugins", name)) || cmdutil.Exists(filepath.Join(m.cwd, mcp.MCPJSONFile))) {
		msg += `; the project's servers are ignored until you trust this workspace (run "reasonix trust")`
	}
	return &cmdutil.UsageError{Err: errors.New(msg)}
}

// dialMCP opens and connects to a server; Close the client when done.
// o, when set, gives the elicitation policy and the OAuth settings; an
// http server that wants a login without o gets none.
func (m *mcpContext) dialMCP(ctx context.Context, f *cmdutil.Factory, c mcp.ServerConfig, o *MCPOptions) (*mcp.Client, error) {
	root := assemble.WorkspaceRoot(m.cfg, m.cwd)
	opts := mcp.OpenOptions{Logger: m.logger, Dir: root}
	if c.Jailed() {
		sb, err := assemble.NewSandbox(m.cfg, m.cwd)
		if err != nil {
			return nil, err
		}
		jail := assemble.MCPJail(sb)
		opts.Wrap = func(s mcp.StdioCommand) (mcp.StdioCommand, error) { return jail(c, s) }
	}
	if c.Type == mcp.TypeHTTP {
		h, err := m.oauthHandler(f, c, o)
		if err != nil {
			return nil, err
		}
		m.atClose(h.Close)
		opts.OAuth = h
	}
	t, err := mcp.Open(ctx, c, opts)
	if err != nil {
		return nil, err
	}
	client, err := mcp.Connect(ctx, t, cmdutil.MCPClient(f), mcp.Options{Logger: m.logger, Root: root, Elicitor: cliElicitor(f, c.Name, o)})
	if err != nil {
		return nil, fmt.Errorf("connect to mcp server %q: %w", c.Name, err)
	}
	return client, nil
}

// mcpProbe is what one connection attempt of `mcp list` found.
type mcpProbe struct {
	state                     string
	tools, prompts, resources int
	err                       string
}

func runMCPList(f *cmdutil.Factory, o *MCPOptions) error {
	m, err := loadMCPContext(f, o)
	if err != nil {
		return err
	}
	defer m.close()
	set, err := resolveMCP(f, m.cfg, m.cwd, o.TrustProjectMCP)
	if err != nil {
		return err
	}
	if len(set.Declared) == 0 {
		fmt.Fprintln(f.Stdout, "no MCP servers configured ([[plugins]] in config.toml or reasonix.toml, or .mcp.json)")
		return nil
	}
	probes := make([]mcpProbe, len(set.Servers))
	var wg sync.WaitGroup
	for i, srv := range set.Servers {
		switch {
		case srv.Disabled:
			probes[i] = mcpProbe{state: event.MCPDisabled}
		case srv.Untrusted != "":
			probes[i] = mcpProbe{state: event.MCPUntrusted, err: srv.Untrusted}
		case srv.Error != "":
			probes[i] = mcpProbe{state: event.MCPFailed, err: srv.Error}
		case o.NoConnect:
			probes[i] = mcpProbe{state: "not connected"}
		default:
			// A probe that panics is that server's failure; the other
			// probes and the table carry on.
			panics.GoGroup(&wg, func() { probes[i] = m.probe(f, srv.Config, o.Timeout) }, func(err error) {
				probes[i] = mcpProbe{state: event.MCPFailed, err: fmt.Sprintf("probe: %v", err)}
				m.logPanic("mcp probe panicked", err, "server", srv.Config.Name)
			})
		}
	}
	wg.Wait()
	w := tabwriter.NewWriter(f.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSOURCE\tTYPE\tSTATE\tTOOLS\tPROMPTS\tRESOURCES\tERROR")
	for i, d := range set.Declared {
		p := probes[i]
		counts := []string{"-", "-", "-"}
		if p.state == event.MCPReady {
			counts = []string{fmt.Sprint(p.tools), fmt.Sprint(p.prompts), fmt.Sprint(p.resources)}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Config.Name, d.Source, d.Config.Type, p.state,
			counts[0], counts[1], counts[2], text.OneLine(p.err, 160))
		for _, warn := range set.Servers[i].Warnings {
			fmt.Fprintf(f.Stderr, "reasonix: warning: mcp server %q: %s\n", d.Config.Name, warn)
		}
	}
	return w.Flush()
}

// logPanic logs a recovered panic with the stack of the goroutine that
// panicked, which the one-line table cannot show.
func (m *mcpContext) logPanic(msg string, err error, attrs ...any) {
	attrs = append(attrs, "err", err)
	if pe, ok := errors.AsType[*panics.Error](err); ok {
		attrs = append(attrs, "stack", string(pe.Stack))
	}
	m.logger.Error(msg, attrs...)
}

// testHookProbe, when set by a test, is called by a probe once it has
// connected to the server named name, so a test can make the probe fail.
var TestHookProbe func(name string)

// probe connects once and counts what the server offers.
func (m *mcpContext) probe(f *cmdutil.Factory, c mcp.ServerConfig, timeout time.Duration) mcpProbe {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	client, err := m.dialMCP(ctx, f, c, nil)
	if err != nil {
		return mcpProbe{state: event.MCPFailed, err: err.Error()}
	}
	defer client.Close()
	if TestHookProbe != nil {
		TestHookProbe(c.Name)
	}
	p := mcpProbe{state: event.MCPReady}
	caps := client.Capabilities()
	if caps.Tools != nil {
		tools, err := client.ListTools(ctx)
		if err != nil {
			return mcpProbe{state: event.MCPFailed, err: err.Error()}
		}
		p.tools = len(tools)
	}
	if caps.Prompts != nil {
		if prompts, err := client.ListPrompts(ctx); err == nil {
			p.prompts = len(prompts)
		} else {
			p.err = err.Error()
		}
	}
	if caps.Resources != nil {
		if res, err := client.ListResources(ctx); err == nil {
			p.resources = len(res)
		} else {
			p.err = err.Error()
		}
	}
	return p
}

// withServerTools connects to the server o names, lists its tools and
// hands both to fn. The connection, bounded by o.Timeout like the listing,
// is closed when fn returns.
func withServerTools(f *cmdutil.Factory, o *MCPOptions, fn func(m *mcpContext, c mcp.ServerConfig, client *mcp.Client, tools []mcp.Tool) error) error {
	m, err := loadMCPContext(f, o)
	if err != nil {
		return err
	}
	defer m.close()
	c, err := m.target(f, o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	client, err := m.dialMCP(ctx, f, c, o)
	if err != nil {
		return err
	}
	defer client.Close()
	tools, err := client.ListTools(ctx)
	if err != nil {
		return fmt.Errorf("mcp server %q: %w", c.Name, err)
	}
	return fn(m, c, client, tools)
}

func runMCPTools(f *cmdutil.Factory, o *MCPOptions) error {
	return withServerTools(f, o, func(_ *mcpContext, c mcp.ServerConfig, _ *mcp.Client, tools []mcp.Tool) error {
		slices.SortFunc(tools, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
		w := tabwriter.NewWriter(f.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "TOOL\tNAME IN REASONIX\tACCESS\tDESCRIPTION")
		for _, t := range tools {
			access := "writer"
			if t.ReadOnly() {
				access = "read-only"
			}
			desc := t.Description
			if desc == "" {
				desc = t.DisplayTitle()
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", t.Name, mcp.ToolName(c.Name, t.Name), access, text.OneLine(desc, 100))
		}
		return w.Flush()
	})
}

func runMCPCall(f *cmdutil.Factory, o *MCPOptions) error {
	args := strings.TrimSpace(o.Args)
	if args == "" {
		args = "{}"
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return cmdutil.UsageErrorf("json-args must be a JSON object: %s", text.OneLine(args, 80))
	}
	return withServerTools(f, o, func(m *mcpContext, c mcp.ServerConfig, client *mcp.Client, tools []mcp.Tool) error {
		if !slices.ContainsFunc(tools, func(t mcp.Tool) bool { return t.Name == o.Tool }) {
			names := make([]string, 0, len(tools))
			for _, t := range tools {
				names = append(names, t.Name)
			}
			slices.Sort(names)
			return cmdutil.UsageErrorf("mcp server %q has no tool %q (tools: %s)", c.Name, o.Tool, strings.Join(names, ", "))
		}
		cctx := context.Background()
		if d := c.Timeout(o.Tool, time.Duration(m.cfg.Tools.MCPCallTimeoutSeconds)*time.Second); d > 0 {
			var ccancel context.CancelFunc
			cctx, ccancel = context.WithTimeout(cctx, d)
			defer ccancel()
		}
		res, err := client.CallTool(cctx, o.Tool, json.RawMessage(args), nil)
		if err != nil {
			return fmt.Errorf("mcp server %q tool %q: %w", c.Name, o.Tool, err)
		}
		text := res.Text()
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		fmt.Fprint(f.Stdout, text)
		if res.IsError {
			fmt.Fprintf(f.Stderr, "reasonix: mcp tool %q reported an error\n", o.Tool)
			return cmdutil.ErrSilent
		}
		return nil
	})
}

func runMCPTrust(f *cmdutil.Factory, o *MCPOptions) error {
	m, err := loadMCPContext(f, o)
	if err != nil {
		return err
	}
	defer m.close()
	decls, err := mcp.Declarations(m.cfg, m.cwd)
	if err != nil {
		return &cmdutil.UsageError{Err: fmt.Errorf("mcp servers: %w", err)}
	}
	var names []string
	for _, d := range decls {
		names = append(names, d.Config.Name)
		if d.Config.Name != o.Server {
			continue
		}
		if !d.Project() {
			fmt.Fprintf(f.Stdout, "mcp server %q is declared in %s, which is trusted; it needs no grant\n", d.Config.Name, d.File)
			return nil
		}
		grants, err := mcp.LoadGrants(mcp.GrantsPath(m.cfg.Home))
		if err != nil {
			return &cmdutil.UsageError{Err: err}
		}
		id := mcp.Identity(d.Config)
		if err := grants.Grant(m.cwd, d.Config.Name, id, time.Now()); err != nil {
			return err
		}
		what := d.Config.Command + " " + strings.Join(d.Config.Args, " ")
		if d.Config.Type != mcp.TypeStdio {
			what = d.Config.URL
		}
		fmt.Fprintf(f.Stdout, "trusted mcp server %q from %s in %s\n  %s: %s\n", d.Config.Name, d.File, m.cwd, d.Config.Type, strings.TrimSpace(what))
		return nil
	}
	return unknownServer(m, o.Server, names)
}
