package serve

import (
	"context"
	"strings"

	"reasonix/core/ref"
)

// expandPrompt turns what the user typed into what the session gets, as
// `run` does for its prompt: local @path references are expanded against
// the workspace. notices are what the expansion reports (a file that could
// not be read, a reference cut short). It runs in the request's goroutine,
// never in an actor.
//
// A slash command goes to the session as typed: the session expands
// /mcp__ prompts and /goal itself, and blocks put before them would hide
// the command. Custom commands (core/command) are rendered at this one
// call site once that package is in the tree.
func (s *Server) expandPrompt(ctx context.Context, cwd, text string) (string, []string) {
	if strings.HasPrefix(strings.TrimSpace(text), "/") {
		return text, nil
	}
	res := ref.Expand(ctx, cwd, text, ref.Options{})
	return res.Text, res.Notices
}
