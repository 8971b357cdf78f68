package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes are part of the CLI contract (docs/SPEC.md).
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// Factory carries what every command needs from the process, so commands can
// be built and tested without touching globals.
type Factory struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment; tests substitute their own.
	Getenv func(string) string
	// Version is the build version.
	Version string
}

func newFactory() *Factory {
	return &Factory{
		Stdin:   os.Stdin,
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Getenv:  os.Getenv,
		Version: version,
	}
}

// usageError marks a bad invocation or configuration: exit code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, a ...any) error {
	return &usageError{err: fmt.Errorf(format, a...)}
}

// errInterrupted reports a run stopped by SIGINT/SIGTERM: exit code 130.
var errInterrupted = errors.New("interrupted")

// errSilent marks a failure whose message was already shown (a run that
// reported its own error): exit code 1 with nothing more printed.
var errSilent = errors.New("failed")

// exitCode maps a command error to the process exit code; it is the one
// place where errors become exit codes.
func exitCode(err error) int {
	var ue *usageError
	var ge *goalExit
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ge):
		return ge.code
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	case errors.As(err, &ue):
		return exitUsage
	default:
		return exitFailed
	}
}

// NewCmdRoot builds the command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
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
		return &usageError{err: err}
	})
	root.AddCommand(NewCmdVersion(f, nil), NewCmdRun(f, nil), NewCmdSetup(f, nil), NewCmdConfig(f), NewCmdDoctor(f, nil))
	root.AddCommand(NewCmdSubagent(f, nil))
	root.AddCommand(NewCmdMCP(f, nil))
	root.AddCommand(NewCmdSessions(f, nil))
	root.AddCommand(NewCmdFleet(f, nil))
	root.AddCommand(NewCmdHistory(f, nil, nil))
	root.AddCommand(NewCmdGoal(f))
	root.AddCommand(NewCmdServe(f, nil))
	root.AddCommand(NewCmdWorker(f, nil), NewCmdWorkers(f, nil))
	root.AddCommand(NewCmdTrust(f, nil))
	return root
}

func run(args []string) int {
	f := newFactory()
	root := NewCmdRoot(f)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil && !errors.Is(err, errSilent) && !errors.Is(err, errInterrupted) {
		fmt.Fprintln(f.Stderr, "reasonix:", err)
	}
	return exitCode(err)
}
