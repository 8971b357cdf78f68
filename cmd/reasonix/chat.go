package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"reasonix/actors"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/headless"
	"reasonix/core/config"
	"reasonix/core/proc"
	"reasonix/core/session"
	"reasonix/tui"
)

// ChatOptions are the inputs of bare `reasonix`, the chat TUI.
type ChatOptions struct {
	cmdutil.GlobalOptions
	Model string
	// Continue resumes the workspace's most recent session; Resume the
	// session with that id.
	Continue       bool
	Resume         string
	PermissionMode string
}

// chatCloseTimeout bounds how long the chat may take to close its session
// after SIGTERM or SIGHUP before the process gives up on it and exits.
const chatCloseTimeout = 15 * time.Second

// errNoTerminal is the answer of bare `reasonix` without a terminal.
var errNoTerminal = errors.New(`the chat needs a terminal (stdin and stdout); for one task without it use reasonix run "…", or see reasonix --help`)

// setupChat makes root the chat command: its flags, the check that turns a
// mistyped subcommand into a usage error, and the action. runF replaces
// the action in tests. The flags are root's own, not persistent: each
// subcommand declares what it takes.
func setupChat(root *cobra.Command, f *cmdutil.Factory, runF func(*ChatOptions) error) {
	opts := &ChatOptions{}
	root.Long = `Reasonix is a coding agent for OpenAI-compatible models. Without a command,
on a terminal, it starts the chat in the workspace: type a request and press
Enter, / for commands, @ to attach a file. Ctrl-C cancels a running turn;
pressed twice on an idle chat, it quits.

The chat needs a terminal for stdin and stdout; to run one task without one,
use reasonix run "…".

Exit codes: 0 quit, 1 the chat failed, 2 usage or config error (or no
terminal), 130 ended by SIGTERM or SIGHUP (the session is saved first).`
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return cmdutil.UsageErrorf("unknown command %q for reasonix (see reasonix --help)", args[0])
		}
		return nil
	}
	root.RunE = func(cmd *cobra.Command, args []string) error {
		// The same checks, and messages, as `reasonix run`.
		if err := headless.CheckHeadlessFlags("text", 0, opts.PermissionMode, nil); err != nil {
			return err
		}
		if opts.Continue && opts.Resume != "" {
			return cmdutil.UsageErrorf("--continue and --resume cannot be used together")
		}
		if runF != nil {
			return runF(opts)
		}
		return runChat(f, opts)
	}
	fl := root.Flags()
	fl.StringVarP(&opts.Model, "model", "m", "", "model: a provider name, a model name or provider/model (default: default_model)")
	fl.BoolVarP(&opts.Continue, "continue", "c", false, "continue the most recent session of this workspace")
	fl.StringVar(&opts.Resume, "resume", "", "continue the session with this id (see reasonix sessions list)")
	fl.StringVar(&opts.PermissionMode, "permission-mode", "ask", "ask, auto or yolo: what the chat asks you before a tool writes or runs (deny rules always apply)")
	cmdutil.AddGlobalFlags(root, &opts.GlobalOptions)
}

// isTerminal reports whether both stdin and stdout are terminals: the chat
// reads keys from one and draws on the other.
func isTerminal(f *cmdutil.Factory) bool {
	in, ok := f.Stdin.(*os.File)
	if !ok {
		return false
	}
	out, ok := f.Stdout.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(in.Fd()) && term.IsTerminal(out.Fd())
}

// runChat runs the chat TUI in the workspace until the user quits. The
// first session is opened before the TUI takes the screen, so a bad
// config, a missing key or an unknown --resume id is reported on a plain
// terminal with its usual exit code. SIGTERM and SIGHUP close the session
// (its transcript saved) and end the chat with exit 130; whatever a tool
// left running is killed by process group on the way out, however the
// chat ends.
func runChat(f *cmdutil.Factory, opts *ChatOptions) error {
	if !isTerminal(f) {
		return &cmdutil.UsageError{Err: errNoTerminal}
	}
	cwd, err := opts.Workdir()
	if err != nil {
		return err
	}
	// Config warnings come back from openLive, for the chat to show.
	quiet := *f
	quiet.Stderr = io.Discard
	cfg, err := cmdutil.LoadConfig(&quiet, &opts.GlobalOptions, cwd)
	if err != nil {
		return err
	}
	if trusted, err := askTrust(f, cfg, cwd); err != nil {
		return err
	} else if trusted {
		if cfg, err = cmdutil.LoadConfig(&quiet, &opts.GlobalOptions, cwd); err != nil {
			return err
		}
	}
	logger, closeLog := cmdutil.OpenLogger(cfg.Home, f.Env)
	defer closeLog()
	// Anything that logs through the standard library's default logger
	// would write on the TUI's screen; it goes to the log file instead.
	slog.SetDefault(logger)

	open := func(_ context.Context, req tui.OpenRequest) (*actors.Live, []string, error) {
		return openLive(f, opts.GlobalOptions, liveRequest{
			Cwd:            cwd,
			Model:          req.Model,
			Continue:       req.Continue,
			Resume:         req.Resume,
			PermissionMode: req.PermissionMode,
			PlanMode:       req.Plan,
		}, logger)
	}
	initial := tui.OpenRequest{Model: opts.Model, Continue: opts.Continue, Resume: opts.Resume, PermissionMode: opts.PermissionMode}
	first, warnings, err := open(context.Background(), initial)
	if err != nil {
		return err
	}
	firstOpen := &pendingLive{live: first, warnings: warnings}
	defer firstOpen.close(logger)

	sessionsDir := session.ProjectDir(cfg.Home, cwd)
	o := tui.Options{
		Open: func(ctx context.Context, req tui.OpenRequest) (*actors.Live, []string, error) {
			if req == initial {
				if live, warns, ok := firstOpen.take(); ok {
					return live, warns, nil
				}
			}
			return open(ctx, req)
		},
		Initial:     initial,
		Cwd:         cwd,
		Home:        cfg.Home,
		Sessions:    func() ([]session.Summary, error) { return session.List(sessionsDir) },
		Models:      modelRefs(cfg),
		PromptsFile: session.PromptsPath(cfg.Home, cwd),
		CheckModel: func(ref string) error {
			_, err := cfg.ResolveModel(ref)
			return err
		},
		Logger: logger,
		Input:  f.Stdin,
		Output: f.Stdout,
	}
	logger.Info("chat started", "cwd", cwd, "session", first.ID())
	err = runUntilSignal(logger, func(ctx context.Context) error { return tui.Run(ctx, o) })
	// A tool that ignored its cancellation must not outlive the chat.
	if kerr := proc.KillAll(cmdutil.ForceKillTimeout); kerr != nil {
		logger.Warn("chat exit: kill child processes", "err", kerr)
	}
	logger.Info("chat finished", "err", err)
	return err
}

// runUntilSignal runs the chat with a context that SIGTERM or SIGHUP (or a
// SIGINT from outside: in the TUI, Ctrl-C is a key, not a signal) cancels.
func runUntilSignal(logger *slog.Logger, chat func(ctx context.Context) error) error {
	sigs, stop := cmdutil.NotifyStop()
	defer stop()
	return runUntil(logger, sigs, chatCloseTimeout, chat)
}

// runUntil runs chat until it returns or a signal arrives on sigs, which
// cancels its context. It returns the chat's error, or errInterrupted when
// a signal ended it. After a signal the chat has closeTimeout to close its
// session; a second signal, or the timeout, leaves it behind to end with
// the process.
func runUntil(logger *slog.Logger, sigs <-chan os.Signal, closeTimeout time.Duration, chat func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- chat(ctx) }()
	select {
	case err := <-done:
		return err
	case sig := <-sigs:
		logger.Info("signal: closing the chat", "signal", sig.String())
		cancel()
	}
	timer := time.NewTimer(closeTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			logger.Warn("chat closed after a signal", "err", err)
		}
	case sig := <-sigs:
		logger.Warn("second signal: leaving the session behind", "signal", sig.String())
	case <-timer.C:
		logger.Warn("the chat did not close in time after a signal", "timeout", closeTimeout)
	}
	return cmdutil.ErrInterrupted
}

// pendingLive holds the session opened before the TUI started until the
// TUI asks for it, and closes it if the TUI never does.
type pendingLive struct {
	mu       sync.Mutex
	live     *actors.Live
	warnings []string
}

func (p *pendingLive) take() (*actors.Live, []string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	live := p.live
	p.live = nil
	return live, p.warnings, live != nil
}

func (p *pendingLive) close(logger *slog.Logger) {
	if live, _, ok := p.take(); ok {
		if err := live.Close(10 * time.Second); err != nil {
			logger.Warn("close the unused session", "err", err)
		}
	}
}

// modelRefs lists every provider/model pair the config offers, in
// declaration order, for the chat's /model.
func modelRefs(cfg *config.Config) []string {
	var out []string
	for _, p := range cfg.Providers {
		for _, m := range p.ModelList() {
			out = append(out, p.Name+"/"+m)
		}
	}
	return out
}
