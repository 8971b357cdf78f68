package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/config"
	"reasonix/core/mcp"
	"reasonix/core/trust"
)

// TrustOptions are the inputs of `reasonix trust`.
type TrustOptions struct {
	cmdutil.GlobalOptions
	// Revoke forgets the workspace's decision; Status prints its state.
	Revoke bool
	Status bool
}

// NewCmdTrust builds `reasonix trust`. runF replaces the action in tests.
func NewCmdTrust(f *cmdutil.Factory, runF func(*TrustOptions) error) *cobra.Command {
	opts := &TrustOptions{}
	cmd := &cobra.Command{
		Use:   "trust [--revoke | --status] [flags]",
		Short: "Trust this workspace's project files, or show or revoke that trust",
		Long: `Trust the workspace's own files: its reasonix.toml, .mcp.json and .reasonix/
(without .reasonix/memory and .reasonix/autoresearch). Until then a project
file may only tighten the user's rules: its allow rules, a laxer
permissions.mode or agent.subagent_ask, agent.system_prompt_file, its
[[providers]] and [[plugins]], model choices on another provider and its
.mcp.json are ignored, and every run says so in one notice.

The trust covers the files as they are now: once any of them changes, the
workspace counts as untrusted again until it is trusted again. Project MCP
servers still need their own launch grant (reasonix mcp trust SERVER).

--status prints trusted, untrusted, changed (trusted, but the files changed
since) or declined. --revoke forgets the decision.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Revoke && opts.Status {
				return cmdutil.UsageErrorf("--revoke and --status cannot be used together")
			}
			if runF != nil {
				return runF(opts)
			}
			return runTrust(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Revoke, "revoke", false, "forget the workspace's trust decision")
	fl.BoolVar(&opts.Status, "status", false, "print the workspace's state: trusted, untrusted, changed or declined")
	fl.StringVar(&opts.Cwd, "cwd", "", "the workspace (default: the current directory)")
	return cmd
}

func runTrust(f *cmdutil.Factory, opts *TrustOptions) error {
	cwd, err := opts.Workdir()
	if err != nil {
		return err
	}
	home, err := f.Home()
	if err != nil {
		return err
	}
	store, err := trust.Open(home)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	ws, err := trust.Canonical(cwd)
	if err != nil {
		return err
	}
	switch {
	case opts.Status:
		state, err := store.Check(ws)
		if err != nil {
			fmt.Fprintln(f.Stderr, "reasonix: warning: workspace trust:", err)
		}
		_, err = fmt.Fprintln(f.Stdout, state)
		return err
	case opts.Revoke:
		found, err := store.Revoke(ws)
		if err != nil {
			return err
		}
		if !found {
			_, err = fmt.Fprintf(f.Stdout, "%s had no trust decision to revoke\n", ws)
			return err
		}
		_, err = fmt.Fprintf(f.Stdout, "revoked the trust decision for %s; its project files count as untrusted\n", ws)
		return err
	}
	// What an untrusted load leaves out is exactly what trusting honours.
	cfg, err := config.Load(config.Options{Home: home, ProjectDir: ws})
	if err != nil {
		return &cmdutil.UsageError{Err: fmt.Errorf("config: %w", err)}
	}
	if err := store.Trust(ws); err != nil {
		return err
	}
	return printTrusted(f, cfg, ws)
}

// printTrusted says what trusting ws changed: the keys and files that were
// being ignored, or that there was nothing to trust.
func printTrusted(f *cmdutil.Factory, cfg *config.Config, ws string) error {
	var honoured []string
	if len(cfg.Untrusted) > 0 {
		honoured = append(honoured, fmt.Sprintf("%s: %s", cfg.ProjectFile, strings.Join(cfg.Untrusted, ", ")))
	}
	mcpJSON := filepath.Join(ws, mcp.MCPJSONFile)
	hasMCPJSON := cmdutil.Exists(mcpJSON)
	if hasMCPJSON {
		honoured = append(honoured, mcpJSON+": its MCP servers")
	}
	var err error
	switch {
	case len(honoured) > 0:
		_, err = fmt.Fprintf(f.Stdout, "trusted %s; now honoured:\n  %s\n", ws, strings.Join(honoured, "\n  "))
		servers := hasMCPJSON || slices.ContainsFunc(cfg.Untrusted, func(k string) bool { return strings.HasPrefix(k, "plugins[") })
		if err == nil && servers {
			_, err = fmt.Fprintln(f.Stdout, "each project MCP server still starts only once approved: reasonix mcp trust SERVER, or run --trust-project-mcp")
		}
	case !cmdutil.Exists(filepath.Join(ws, config.ProjectFileName)) && !hasMCPJSON && !cmdutil.Exists(filepath.Join(ws, ".reasonix")):
		_, err = fmt.Fprintf(f.Stdout, "trusted %s, but it has no reasonix.toml, .mcp.json or .reasonix/: there was nothing to trust (one added later needs trusting again)\n", ws)
	default:
		_, err = fmt.Fprintf(f.Stdout, "trusted %s; its project files set nothing that was being ignored\n", ws)
	}
	return err
}
