package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/history"
	"reasonix/core/session"
)

// HistoryReindexOptions are the inputs of `reasonix history reindex`.
type HistoryReindexOptions struct {
	cmdutil.GlobalOptions
}

// HistorySearchOptions are the inputs of `reasonix history search`.
type HistorySearchOptions struct {
	cmdutil.GlobalOptions
	Query string
	Scope string
	Limit int
	JSON  bool
}

// NewCmdHistory builds `reasonix history`, the commands on the index of
// saved sessions. reindexF and searchF replace the actions in tests.
func NewCmdHistory(f *cmdutil.Factory, reindexF func(*HistoryReindexOptions) error, searchF func(*HistorySearchOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Search saved sessions and rebuild their index",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageErrorf("unknown command %q for %q; want reindex or search", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newCmdHistoryReindex(f, reindexF), newCmdHistorySearch(f, searchF))
	return cmd
}

func newCmdHistoryReindex(f *cmdutil.Factory, runF func(*HistoryReindexOptions) error) *cobra.Command {
	opts := &HistoryReindexOptions{}
	cmd := &cobra.Command{
		Use:   "reindex [flags]",
		Short: "Rebuild the history index from the saved session files",
		Long: `Throw the history index (<home>/index/history.db) away and build it again from
every saved transcript (<home>/projects/*/sessions) and compaction archive
(<home>/archive). The index is derived from those files and is kept up to
date on its own; reindex is for an index that was damaged or deleted. A
damaged index that cannot even be emptied is moved to history.db.damaged and
a new one is built (a search does the same, with a notice). Progress is shown
on stderr while the work takes long; a summary is printed at the end.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runHistoryReindex(f, opts)
		},
	}
	cmdutil.AddGlobalFlags(cmd, &opts.GlobalOptions)
	return cmd
}

func newCmdHistorySearch(f *cmdutil.Factory, runF func(*HistorySearchOptions) error) *cobra.Command {
	opts := &HistorySearchOptions{}
	cmd := &cobra.Command{
		Use:   "search [flags] QUERY...",
		Short: "Search the saved sessions",
		Long: `Search saved sessions with the same ranking the history tool gives the model.
The query is the arguments joined by spaces: words, "quoted phrases" and
prefix* words; messages with more and rarer matches rank first, and hits
scoring far below the best are left out. --scope project (the default)
searches the workspace's sessions, --scope global every project's sessions and
the compaction archives. --json prints an array of objects with ref, session,
source, role, time (RFC 3339, empty when unknown), score, snippet and path.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.UsageErrorf("history search needs a query")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Query = strings.Join(args, " ")
			if _, err := history.ParseScope(opts.Scope); err != nil {
				return &cmdutil.UsageError{Err: fmt.Errorf("--scope: %w", err)}
			}
			if opts.Limit < 0 || opts.Limit > history.MaxLimit {
				return cmdutil.UsageErrorf("--limit must be between 1 and %d, got %d", history.MaxLimit, opts.Limit)
			}
			if runF != nil {
				return runF(opts)
			}
			return runHistorySearch(f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Scope, "scope", "project", "project or global")
	cmd.Flags().IntVar(&opts.Limit, "limit", history.DefaultLimit, fmt.Sprintf("most hits to show (at most %d)", history.MaxLimit))
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON instead of text")
	cmdutil.AddGlobalFlags(cmd, &opts.GlobalOptions)
	return cmd
}

// historyHome loads the config for the options' workspace and returns the
// home and the workspace's transcript directory.
func historyHome(f *cmdutil.Factory, g *cmdutil.GlobalOptions) (home, sessions string, err error) {
	cwd, err := g.Workdir()
	if err != nil {
		return "", "", err
	}
	cfg, err := cmdutil.LoadConfig(f, g, cwd)
	if err != nil {
		return "", "", err
	}
	return cfg.Home, session.ProjectDir(cfg.Home, cwd), nil
}

// interruptible is ctx cancelled by a stop signal.
func interruptible() (context.Context, context.CancelFunc) { return cmdutil.StopContext() }

// progressEvery is how often reindex reports progress on stderr; a
// rebuild that ends sooner prints only its summary.
const progressEvery = time.Second

func runHistoryReindex(f *cmdutil.Factory, opts *HistoryReindexOptions) error {
	home, sessions, err := historyHome(f, &opts.GlobalOptions)
	if err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	start := time.Now()
	dirs, err := history.Dirs(home, sessions, history.ScopeGlobal)
	if err != nil {
		return fmt.Errorf("reindex history: %w", err)
	}
	last := start
	st, rep, err := history.ReindexHome(ctx, home, dirs, func(done, total int) {
		if now := time.Now(); now.Sub(last) >= progressEvery {
			last = now
			fmt.Fprintf(f.Stderr, "reasonix: indexed %d of %d files\n", done, total)
		}
	})
	if rep != nil {
		fmt.Fprintf(f.Stderr, "reasonix: %s\n", rep.Notice())
	}
	if ctx.Err() != nil {
		return cmdutil.ErrInterrupted
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f.Stdout, "Indexed %d files, %d messages in %s into %s\n",
		st.Files, st.Messages, time.Since(start).Round(time.Millisecond), history.Path(home))
	return err
}

// historyHitJSON is one entry of `history search --json`; its field names
// are part of the CLI contract (docs/SPEC.md).
type historyHitJSON struct {
	Ref     string  `json:"ref"`
	Session string  `json:"session"`
	Source  string  `json:"source"`
	Role    string  `json:"role"`
	Time    string  `json:"time"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet"`
	Path    string  `json:"path"`
}

func runHistorySearch(f *cmdutil.Factory, opts *HistorySearchOptions) error {
	home, sessions, err := historyHome(f, &opts.GlobalOptions)
	if err != nil {
		return err
	}
	scope, _ := history.ParseScope(opts.Scope) // checked with the flags
	ctx, stop := interruptible()
	defer stop()
	q := history.Query{Text: opts.Query, Scope: scope, Sessions: sessions, Limit: opts.Limit}
	res, rep, err := history.SearchHome(ctx, home, q)
	if rep != nil {
		fmt.Fprintf(f.Stderr, "reasonix: %s\n", rep.Notice())
	}
	switch {
	case ctx.Err() != nil:
		return cmdutil.ErrInterrupted
	case errors.Is(err, history.ErrNoTerms):
		return &cmdutil.UsageError{Err: err}
	case err != nil:
		return err
	}
	if opts.JSON {
		out := make([]historyHitJSON, len(res.Hits))
		for i, h := range res.Hits {
			out[i] = historyHitJSON{Ref: h.Ref.String(), Session: h.Session, Source: h.Source, Role: h.Role,
				Score: h.Score, Snippet: h.Snippet, Path: h.Path}
			if !h.Time.IsZero() {
				out[i].Time = h.Time.Format(time.RFC3339)
			}
		}
		enc := json.NewEncoder(f.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	return printHistoryHits(f, q, res)
}

// printHistoryHits is the text output of `history search`: a line per hit
// (ref, role, time, project) and its snippet, or how to search again.
func printHistoryHits(f *cmdutil.Factory, q history.Query, res history.Result) error {
	var b strings.Builder
	if len(res.Hits) == 0 {
		fmt.Fprintf(&b, "No matches for %q. Try rarer, more specific terms (identifiers, file names, error text)", q.Text)
		if q.Scope == history.ScopeProject {
			b.WriteString(", or --scope global to search every project and the compaction archives")
		}
		b.WriteString(".\n")
	}
	for _, h := range res.Hits {
		when := "-"
		if !h.Time.IsZero() {
			when = h.Time.Local().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(&b, "%s  %s  %s  %s\n    %s\n", h.Ref, h.Role, when, h.Source, h.Snippet)
	}
	if res.BelowFloor > 0 {
		fmt.Fprintf(&b, "(%d weaker matches left out)\n", res.BelowFloor)
	}
	_, err := io.WriteString(f.Stdout, b.String())
	return err
}
