package main

import (
	"io"
	"log/slog"

	"reasonix/actors"
	"reasonix/assemble"
	"reasonix/cmd/reasonix/internal/cmdutil"
)

// liveRequest is what a long-lived frontend (the chat TUI, `serve`) asks
// of openLive: a new session in Cwd, or the one Continue or Resume names.
type liveRequest struct {
	// Cwd is the workspace, absolute and existing.
	Cwd string
	// Model is a model reference; empty means default_model.
	Model string
	// Continue resumes the workspace's latest session; Resume the session
	// with that id. At most one is set.
	Continue bool
	Resume   string
	// PermissionMode is ask, auto or yolo; empty means ask.
	PermissionMode string
	// Deny are extra deny rules for the session.
	Deny []string
	// PlannerModel overrides agent.planner_model.
	PlannerModel string
	// PlanMode opens the session in plan mode.
	PlanMode bool
}

// openLive builds and starts an interactive session: a frontend answers
// its approvals and its servers' questions, and it takes goal commands.
// What a headless run reports on stderr (config warnings, a repaired
// transcript) is collected through the Factory's Notes instead and comes
// back as warnings, for the frontend to show, because a full-screen or
// remote frontend owns the terminal.
func openLive(f *cmdutil.Factory, g cmdutil.GlobalOptions, req liveRequest, logger *slog.Logger) (*actors.Live, []string, error) {
	var notes []string
	quiet := *f
	quiet.Stdout, quiet.Notes = io.Discard, &notes
	warnings := func() []string { return notes }
	g.Cwd = req.Cwd
	cfg, err := cmdutil.LoadConfig(&quiet, &g, req.Cwd)
	if err != nil {
		return nil, warnings(), err
	}
	ro := &RunOptions{GlobalOptions: g, Continue: req.Continue, Resume: req.Resume}
	resume, err := openResume(&quiet, cfg, req.Cwd, ro)
	if err != nil {
		return nil, warnings(), err
	}
	b, err := cmdutil.BuildSession(cfg, assemble.BuildOptions{
		Resume:         resume,
		Cwd:            req.Cwd,
		Model:          req.Model,
		PermissionMode: req.PermissionMode,
		Deny:           req.Deny,
		Interactive:    true,
		PlannerModel:   req.PlannerModel,
		PlanMode:       req.PlanMode,
		Logger:         logger,
		Client:         cmdutil.MCPClient(f),
		Getenv:         f.Env,
	})
	if err != nil {
		return nil, warnings(), err
	}
	b.Spec.Goal = (&GoalOptions{}).spec(cfg.Home, req.Cwd)
	live, err := actors.StartLive(b, logger)
	if err != nil {
		return nil, warnings(), err
	}
	return live, append(warnings(), b.Warnings...), nil
}
