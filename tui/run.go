package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"reasonix/actors"
	"reasonix/core/session"
)

// OpenRequest says which session Options.Open should start.
type OpenRequest struct {
	// Model is a model reference; empty means the configured default.
	Model string
	// Continue resumes the workspace's latest session.
	Continue bool
	// Resume is a session id to resume.
	Resume string
	// PermissionMode is the starting posture (ask, auto, yolo); empty
	// means the configured one.
	PermissionMode string
	// Plan opens the session in plan mode: read-only research, then a
	// plan to approve before anything changes.
	Plan bool
	// Switch says the request reopens the conversation on the screen
	// (/model, /plan): nothing of it is drawn again.
	Switch bool
}

// Options configures Run.
type Options struct {
	// Open starts a session (the first one, and on /new, /resume ID,
	// /model NAME); warnings are shown as notices.
	Open func(ctx context.Context, req OpenRequest) (*actors.Live, []string, error)
	// Initial is the first session to open.
	Initial OpenRequest
	// Cwd roots @ references and project commands; Home holds the user's
	// commands.
	Cwd, Home string
	// Sessions lists the workspace's saved sessions for /resume (newest
	// first).
	Sessions func() ([]session.Summary, error)
	// Models lists model references for /model.
	Models []string
	// PromptsFile is the workspace's prompt history
	// (session.PromptsPath) for ↑/↓ and Ctrl-R; empty keeps none.
	PromptsFile string
	// CheckModel, when set, says whether /model NAME can open: a name it
	// refuses leaves the session as it is, with the choices shown.
	CheckModel func(ref string) error
	// Logger receives everything the TUI has to say outside the screen.
	Logger *slog.Logger
	// Input and Output are the terminal; nil means the process's.
	Input  io.Reader
	Output io.Writer
}

// The size drawn at when the output is not a terminal.
const (
	defaultWidth  = 80
	defaultHeight = 24
)

// Run shows the chat until the user quits or ctx ends, and closes the
// session it holds (saving its transcript) before returning.
//
// The chat runs inline rather than on the alternate screen: finished
// messages are printed once into the terminal's own scrollback, so they
// scroll, search and copy like any output, and the mouse is left to the
// terminal for selecting text. Only the live region (the answer still
// streaming, running tools, panels, composer, status) is redrawn.
func Run(ctx context.Context, o Options) error {
	if o.Open == nil {
		return errors.New("tui: no session opener")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	sh := &shared{}
	m := newModel(o, sh)
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if o.Input != nil {
		opts = append(opts, tea.WithInput(o.Input))
	}
	if o.Output != nil {
		opts = append(opts, tea.WithOutput(o.Output))
		if f, ok := o.Output.(interface{ Fd() uintptr }); !ok || !term.IsTerminal(f.Fd()) {
			// Nothing to ask for a size (a pipe, a test): draw at the
			// classic one rather than not at all.
			opts = append(opts, tea.WithWindowSize(defaultWidth, defaultHeight))
		}
	}
	final, err := tea.NewProgram(m, opts...).Run()
	sh.shutdown()
	if fm, ok := final.(*model); ok && fm != nil {
		m = fm
	}
	if m.sub != nil {
		m.sub.Close()
	}
	var closeErr error
	if m.live != nil {
		closeErr = m.live.Close(closeTimeout)
	}
	for _, l := range m.closing {
		// Already closed by the switch, or closing: Close waits for it.
		_ = l.Close(closeTimeout)
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		// Cancelled from outside (a signal): the session is saved, which
		// is what ending means.
		err = nil
	}
	if err != nil {
		return errors.Join(fmt.Errorf("tui: %w", err), closeErr)
	}
	return closeErr
}
