package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/doctor"
	"reasonix/cmd/reasonix/internal/fleetcmd"
	"reasonix/cmd/reasonix/internal/mcpcmd"
	"reasonix/cmd/reasonix/internal/workercmd"
	"reasonix/cmd/reasonix/internal/worktreecmd"
)

func newFactory() *cmdutil.Factory {
	return &cmdutil.Factory{
		Stdin:   os.Stdin,
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Getenv:  os.Getenv,
		Version: version,
	}
}

// NewCmdRoot builds the command tree.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "reasonix",
		Short:         "Reasonix: a coding agent for fleets of subagents on OpenAI-compatible models",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// Bare reasonix is the chat TUI (chat.go); a mistyped command is a
	// usage error (exit 2).
	setupChat(root, f, nil)
	root.SetIn(f.Stdin)
	root.SetOut(f.Stdout)
	root.SetErr(f.Stderr)
	// Flag errors are usage errors (exit 2), not run failures.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &cmdutil.UsageError{Err: err}
	})
	root.AddCommand(NewCmdVersion(f, nil), NewCmdRun(f, nil), NewCmdSetup(f, nil), NewCmdConfig(f), doctor.NewCmdDoctor(f, nil))
	root.AddCommand(NewCmdSubagent(f, nil))
	root.AddCommand(mcpcmd.NewCmdMCP(f, nil))
	root.AddCommand(NewCmdSessions(f, nil))
	root.AddCommand(fleetcmd.NewCmdFleet(f, nil))
	root.AddCommand(NewCmdHistory(f, nil, nil))
	root.AddCommand(NewCmdGoal(f))
	root.AddCommand(NewCmdServe(f, nil))
	root.AddCommand(workercmd.NewCmdWorker(f, nil), workercmd.NewCmdWorkers(f, nil))
	root.AddCommand(NewCmdTrust(f, nil))
	root.AddCommand(worktreecmd.NewCmdWorktrees(f, nil))
	return root
}

func run(args []string) int {
	f := newFactory()
	root := NewCmdRoot(f)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil && !errors.Is(err, cmdutil.ErrSilent) && !errors.Is(err, cmdutil.ErrInterrupted) {
		fmt.Fprintln(f.Stderr, "reasonix:", err)
	}
	return cmdutil.ExitCode(err)
}
