package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/session"
)

// SessionsListOptions are the inputs of `reasonix sessions list`.
type SessionsListOptions struct {
	cmdutil.GlobalOptions
	JSON bool
}

// NewCmdSessions builds `reasonix sessions`, the parent of the commands
// that work on saved sessions. runF replaces the action of `list` in
// tests.
func NewCmdSessions(f *cmdutil.Factory, runF func(*SessionsListOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List the saved sessions of the workspace",
		// Without RunE cobra would print help and succeed for a
		// mistyped subcommand; a typo is a usage error.
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageErrorf("unknown command %q for %q; want list", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(NewCmdSessionsList(f, runF))
	return cmd
}

// NewCmdSessionsList builds `reasonix sessions list`. runF replaces the
// action in tests.
func NewCmdSessionsList(f *cmdutil.Factory, runF func(*SessionsListOptions) error) *cobra.Command {
	opts := &SessionsListOptions{}
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List the workspace's sessions, newest first",
		Long: `List the top-level sessions recorded for the workspace, newest first: id,
start time, number of user turns and the last prompt. Subagent transcripts
belong to the session that started them and are not listed. --json prints an
array of objects with id, started (RFC 3339), turns, last_prompt, model and
path.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runSessionsList(f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON instead of a table")
	cmdutil.AddGlobalFlags(cmd, &opts.GlobalOptions)
	return cmd
}

// sessionJSON is one entry of `sessions list --json`; its field names are
// part of the CLI contract (docs/SPEC.md).
type sessionJSON struct {
	ID         string `json:"id"`
	Started    string `json:"started"`
	Turns      int    `json:"turns"`
	LastPrompt string `json:"last_prompt"`
	Model      string `json:"model"`
	Path       string `json:"path"`
}

func runSessionsList(f *cmdutil.Factory, opts *SessionsListOptions) error {
	cwd, err := opts.Workdir()
	if err != nil {
		return err
	}
	cfg, err := cmdutil.LoadConfig(f, &opts.GlobalOptions, cwd)
	if err != nil {
		return err
	}
	list, err := session.List(session.ProjectDir(cfg.Home, cwd))
	if err != nil {
		// One damaged transcript must not hide the others.
		if len(list) == 0 {
			return err
		}
		fmt.Fprintln(f.Stderr, "reasonix: warning:", err)
	}
	if opts.JSON {
		out := make([]sessionJSON, len(list))
		for i, s := range list {
			out[i] = sessionJSON{
				ID: s.ID, Started: s.Started.Format(time.RFC3339), Turns: s.Turns,
				LastPrompt: s.LastPrompt, Model: s.Model, Path: s.Path,
			}
		}
		enc := json.NewEncoder(f.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintf(f.Stdout, "No sessions yet for %s; `reasonix run` starts one.\n", cwd)
		return err
	}
	tw := tabwriter.NewWriter(f.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tTURNS\tLAST PROMPT")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", s.ID, s.Started.Local().Format("2006-01-02 15:04"), s.Turns, s.LastPrompt)
	}
	return tw.Flush()
}
