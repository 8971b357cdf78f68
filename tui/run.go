package tui

import (
	"context"
	"errors"
	"io"
	"log/slog"

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
	// Logger receives everything the TUI has to say outside the screen.
	Logger *slog.Logger
	// Input and Output are the terminal; nil means the process's.
	Input  io.Reader
	Output io.Writer
}

// Run shows the chat until the user quits or ctx ends, and closes the
// session it holds (saving its transcript) before returning.
func Run(ctx context.Context, o Options) error {
	if o.Open == nil {
		return errors.New("tui: no session opener")
	}
	return errors.New("tui: not built yet")
}
