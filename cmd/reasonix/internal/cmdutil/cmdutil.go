package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"reasonix/core/config"

	"github.com/spf13/cobra"
)

// Exit codes are part of the CLI contract (docs/SPEC.md).
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitUsage       = 2
	ExitInterrupted = 130
)

// Factory carries what every command needs from the process, so commands can
// be built and tested without touching globals. What it resolves (the
// home) it resolves on first use, through Getenv, so a command that never
// asks pays nothing and a test's environment is the only one read.
type Factory struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment; tests substitute their own. Nil
	// reads the process environment.
	Getenv func(string) string
	// Version is the build version.
	Version string
	// Notes, when set, collects what Warn, Notice and Say report instead
	// of printing it: a frontend that owns the terminal (the chat, serve)
	// shows them itself.
	Notes *[]string

	// home and homeErr are Home's answer once it was asked.
	home     string
	homeErr  error
	homeDone bool
}

// Env reads the environment variable name through Getenv.
func (f *Factory) Env(name string) string {
	if f.Getenv != nil {
		return f.Getenv(name)
	}
	return os.Getenv(name)
}

// Home is the Reasonix home, resolved on first use: REASONIX_HOME when
// set, else the platform default (config.Home), read through Getenv.
func (f *Factory) Home() (string, error) {
	if !f.homeDone {
		f.home, f.homeErr = config.HomeFrom(f.Env)
		f.homeDone = true
	}
	return f.home, f.homeErr
}

// Warn reports a problem that does not stop the command.
func (f *Factory) Warn(msg string) { f.say("warning: ", msg) }

// Notice reports something the user should know that is not a problem.
func (f *Factory) Notice(msg string) { f.say("notice: ", msg) }

// Say reports what the command did on the user's behalf.
func (f *Factory) Say(msg string) { f.say("", msg) }

// say prints "reasonix: " kind msg on stderr, or collects kind msg (a
// warning without its kind) in Notes.
func (f *Factory) say(kind, msg string) {
	if f.Notes != nil {
		if kind == "warning: " {
			kind = ""
		}
		*f.Notes = append(*f.Notes, kind+msg)
		return
	}
	fmt.Fprintf(f.Stderr, "reasonix: %s%s\n", kind, msg)
}

// UsageError marks a bad invocation or configuration: exit code 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }

func (e *UsageError) Unwrap() error { return e.Err }

// UsageErrorf is a UsageError with a formatted message.
func UsageErrorf(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

// ErrInterrupted reports a run stopped by a stop signal: exit code 130.
var ErrInterrupted = errors.New("interrupted")

// ErrSilent marks a failure whose message was already shown (a run that
// reported its own error): exit code 1 with nothing more printed.
var ErrSilent = errors.New("failed")

// ExitCode maps a command error to the process exit code; it is the one
// place where errors become exit codes.
func ExitCode(err error) int {
	var ue *UsageError
	var ec interface{ ExitCode() int }
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ec):
		return ec.ExitCode()
	case errors.Is(err, ErrInterrupted):
		return ExitInterrupted
	case errors.As(err, &ue):
		return ExitUsage
	default:
		return ExitFailed
	}
}

// stopSignals are the signals that end a command: Ctrl-C, a kill, and the
// terminal going away (SIGHUP), which must not leave a run behind.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// NotifyStop delivers the stop signals on a new channel, buffered for the
// second signal that abandons a clean stop; stop undoes it. Every command
// that waits on signals takes them here, so they all stop on the same ones.
func NotifyStop() (sigs <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, stopSignals...)
	return ch, func() { signal.Stop(ch) }
}

// StopContext is a context cancelled by the first stop signal.
func StopContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), stopSignals...)
}

// NoArgs refuses positional arguments as a usage error (exit 2), which
// cobra.NoArgs alone would report as a plain failure.
func NoArgs(cmd *cobra.Command, args []string) error {
	if err := cobra.NoArgs(cmd, args); err != nil {
		return &UsageError{Err: err}
	}
	return nil
}
