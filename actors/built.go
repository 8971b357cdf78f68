package actors

import (
	"errors"
	"fmt"

	"reasonix/core/config"
	"reasonix/core/session"
)

// Built is a session ready for StartSession, and what its caller reports
// or cleans up around it.
type Built struct {
	// Spec is the session; its Agent.Bus is the frontend's to set.
	Spec SessionSpec
	// Model is the executor's resolved model; Effort its reasoning effort.
	Model  config.Resolved
	Effort string
	// Warnings are problems that do not stop the session, for the
	// frontend to show (a profile naming a tool that is not enabled).
	Warnings []string
	// Instructions are the project instruction files in the system
	// prompt (session.LoadInstructions), for /status.
	Instructions []string
	// Profiles names the subagent profiles a frontend may run with
	// /<profile> task.
	Profiles []string
	// Transcript is the session's transcript store.
	Transcript *session.Store
	// Planner is the planner's transcript in a two-model run, else nil.
	Planner *session.Store
}

// Close closes the session's transcript. Call it after the session has
// stopped.
func (b *Built) Close() error {
	err := b.Transcript.Close()
	if b.Planner != nil {
		err = errors.Join(err, b.Planner.Close())
	}
	if err != nil {
		return fmt.Errorf("close transcript: %w", err)
	}
	return nil
}
