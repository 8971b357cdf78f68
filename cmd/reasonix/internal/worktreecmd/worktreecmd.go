// Package worktreecmd is `reasonix worktrees`: what worktree writers kept,
// listed, merged or dropped.
package worktreecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"reasonix/actors/event"
	"reasonix/assemble"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/worktree"
)

// WorktreesOptions are the inputs of `reasonix worktrees`.
type WorktreesOptions struct {
	cmdutil.GlobalOptions
	// Action is list, merge or drop; ID the kept worktree's id
	// (<session>/<task>) or branch.
	Action string
	ID     string
	JSON   bool
}

// WorktreeJSON is one line of `reasonix worktrees list --json`.
type WorktreeJSON struct {
	ID     string `json:"id"`
	Branch string `json:"branch"`
	Head   string `json:"head"`
	Base   string `json:"base,omitempty"`
	// Dir is the worktree's directory; empty when only the branch is
	// kept.
	Dir string `json:"dir,omitempty"`
}

// NewCmdWorktrees builds `reasonix worktrees`. runF replaces the action in
// tests.
func NewCmdWorktrees(f *cmdutil.Factory, runF func(*WorktreesOptions) error) *cobra.Command {
	opts := &WorktreesOptions{}
	cmd := &cobra.Command{
		Use:   "worktrees list|merge ID|drop ID [flags]",
		Short: "List, merge or drop what worktree writers kept",
		Long: `A writer subagent with isolation "worktree" works in a git worktree of its
own on branch reasonix/<session>/<task>. When it ends ok its changes are
merged into the workspace and the worktree and branch removed; when the merge
conflicts, or the task did not end ok, the branch is kept (and the worktree
too while the task runs). These commands act on what is kept, in the
repository of --cwd:

  list        the kept branches: id (<session>/<task>), branch, worktree
  merge ID    merge the branch into the working tree, three-way against the
              snapshot it was made from; a conflict writes nothing, lists
              the paths and exits 1; merged, the branch is removed
  drop ID     remove the branch and its worktree`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Action = args[0]
			switch {
			case opts.Action == "list" && len(args) == 1:
			case (opts.Action == "merge" || opts.Action == "drop") && len(args) == 2:
				opts.ID = args[1]
			default:
				return cmdutil.UsageErrorf("usage: reasonix worktrees list | merge ID | drop ID")
			}
			if runF != nil {
				return runF(opts)
			}
			return runWorktrees(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.JSON, "json", false, "list as JSON")
	fl.StringVar(&opts.Cwd, "cwd", "", "the workspace (default: the current directory)")
	return cmd
}

func runWorktrees(f *cmdutil.Factory, opts *WorktreesOptions) error {
	cwd, err := opts.Workdir()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	repo, err := worktree.Find(ctx, cwd)
	if err != nil {
		return &cmdutil.UsageError{Err: fmt.Errorf("worktrees: %w", err)}
	}
	kept, err := repo.List(ctx, assemble.BranchPrefix)
	if err != nil {
		return err
	}
	if opts.Action == "list" {
		return listWorktrees(f, opts, kept)
	}
	branch := opts.ID
	if !strings.HasPrefix(branch, assemble.BranchPrefix) {
		branch = assemble.BranchPrefix + branch
	}
	found := false
	for _, k := range kept {
		found = found || k.Branch == branch
	}
	if !found {
		return cmdutil.UsageErrorf("worktrees: nothing kept as %s (see reasonix worktrees list)", opts.ID)
	}
	if opts.Action == "drop" {
		t, err := repo.Open(ctx, branch)
		if err != nil {
			return err
		}
		if err := repo.Remove(ctx, t, true); err != nil {
			return err
		}
		_, err = fmt.Fprintf(f.Stdout, "dropped %s\n", branch)
		return err
	}
	// A person asked for this merge: no path is refused for being
	// trust-bearing (the package still refuses .git and symlinks).
	m := assemble.MergeBranch(ctx, repo, branch, nil)
	switch {
	case m.Error != "" && m.Status != event.MergeMerged:
		return fmt.Errorf("worktrees: merge %s: %s", branch, m.Error)
	case m.Status == event.MergeConflict:
		return fmt.Errorf("worktrees: %s does not merge: conflicts in %s; nothing was written and the branch is kept",
			branch, strings.Join(m.Conflicts, ", "))
	}
	_, err = fmt.Fprintf(f.Stdout, "merged %s: %s\n", branch, strings.Join(m.Files, ", "))
	return err
}

func listWorktrees(f *cmdutil.Factory, opts *WorktreesOptions, kept []worktree.Kept) error {
	var out []WorktreeJSON
	for _, k := range kept {
		out = append(out, WorktreeJSON{ID: strings.TrimPrefix(k.Branch, assemble.BranchPrefix), Branch: k.Branch, Head: k.Head, Base: k.Base, Dir: k.Dir})
	}
	if opts.JSON {
		if out == nil {
			out = []WorktreeJSON{}
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(f.Stdout, string(b))
		return err
	}
	if len(out) == 0 {
		_, err := fmt.Fprintln(f.Stdout, "nothing kept")
		return err
	}
	for _, w := range out {
		where := "branch only"
		if w.Dir != "" {
			where = w.Dir
		}
		if _, err := fmt.Fprintf(f.Stdout, "%s\t%s\t%s\n", w.ID, short(w.Head), where); err != nil {
			return err
		}
	}
	return nil
}

// short is a commit id's first 12 digits.
func short(id string) string { return id[:min(len(id), 12)] }
