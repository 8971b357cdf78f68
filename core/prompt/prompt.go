// Package prompt turns what a user typed into the text of a turn, the one
// way every frontend does it (the chat, `serve`, `run`): a custom slash
// command is rendered, then the text's @path references are resolved and
// put before it as blocks. Any other slash command (a built-in, an MCP
// prompt /mcp__server__prompt, an unknown name) comes back as typed: the
// session or the frontend acts on it, and a block put before it would hide
// the command. It reads files, so a frontend calls it off its event loop
// (a goroutine, a request's handler), never in an actor.
package prompt

import (
	"context"
	"strings"
	"sync"

	"reasonix/core/command"
	"reasonix/core/ref"
)

// Expand renders input with cmds (a custom command it names) and attaches
// its @path references, resolved against root. The notices say what could
// not be read; the turn goes on without it. The chat passes the commands
// it loaded for completion, so what it offers is what runs; the others use
// an Expander.
func Expand(ctx context.Context, root string, cmds []command.Command, input string) (string, []string) {
	if name, args, ok := command.Split(input); ok {
		c, found := command.Find(cmds, name)
		if !found {
			return input, nil
		}
		input = c.Render(args)
	}
	res := ref.Expand(ctx, root, input, ref.Options{})
	return res.Text, res.Notices
}

// Expander expands the prompts of one session in one workspace, with the
// custom commands of the Reasonix home and of the workspace. They are read
// at the first prompt that could name one, and once per Expander: an
// ordinary prompt never walks the command directories, and a broken
// command file warns once. A frontend that runs for days makes one per
// prompt, so a command file edited meanwhile is what runs. It is safe for
// concurrent use.
type Expander struct {
	root string
	dirs []string

	mu     sync.Mutex
	loaded bool
	cmds   []command.Command
}

// NewExpander expands prompts for workspace cwd with the commands of home
// and cwd.
func NewExpander(home, cwd string) *Expander {
	return &Expander{root: cwd, dirs: command.Dirs(home, cwd)}
}

// Expand returns the text the session runs for input, and the warnings for
// the user: files that could not be read, command files skipped.
func (e *Expander) Expand(ctx context.Context, input string) (string, []string) {
	var warnings []string
	e.mu.Lock()
	if name, _, ok := command.Split(input); ok && !e.loaded && !command.IsBuiltin(name) && !strings.HasPrefix(name, "mcp__") {
		var problems []command.Problem
		e.cmds, problems = command.Load(e.dirs...)
		e.loaded = true
		for _, pr := range problems {
			warnings = append(warnings, "custom command skipped: "+pr.String())
		}
	}
	cmds := e.cmds
	e.mu.Unlock()
	text, notices := Expand(ctx, e.root, cmds, input)
	return text, append(warnings, notices...)
}

// PlanModeNote opens every user turn of a session in plan mode (the
// agent's executor puts it there).
const PlanModeNote = "[Plan mode: research with read-only tools, then present your plan with exit_plan_mode. Nothing may be changed until the plan is approved; after approval carry it out and report each step with complete_step.]\n\n"

// WithoutPlanNote is a user turn without the plan-mode note: what the
// user typed, for a title or a transcript shown to them.
func WithoutPlanNote(turn string) string {
	return strings.TrimPrefix(turn, PlanModeNote)
}
