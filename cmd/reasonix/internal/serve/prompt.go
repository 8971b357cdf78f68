package serve

import (
	"context"

	"reasonix/core/prompt"
)

// expandPrompt turns what the user typed into the text of the turn, as
// `run` does: a custom slash command (/name args, from the user's and the
// workspace's commands directories) is rendered, then the local @path
// references of the text are resolved against the workspace and put
// before it as blocks. Any other slash command (a built-in, an MCP prompt
// /mcp__server__prompt, an unknown name) goes as typed: the session acts
// on it, and a block put before it would hide the command. The warnings
// say what could not be read; the turn goes on without it.
//
// It reads files, so it runs in the request's goroutine, never in an
// actor. The commands are read again at each prompt that could name one:
// a server runs for days, and a command file edited meanwhile is what the
// user expects to run.
func (s *Server) expandPrompt(ctx context.Context, cwd, input string) (string, []string) {
	return prompt.NewExpander(s.opts.Home, cwd).Expand(ctx, input)
}
