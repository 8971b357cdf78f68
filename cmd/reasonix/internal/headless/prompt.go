package headless

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"reasonix/actors/event"
	"reasonix/core/command"
	"reasonix/core/ref"
)

// ExpandPrompt turns what the user typed into the text of their turn. A
// custom slash command (/name args, name one of cmds) is rendered; then
// the @path references of the text are resolved against root and
// prepended as blocks. Any other slash command (a built-in, an MCP prompt
// /mcp__server__prompt, an unknown name) comes back as typed: the session
// or the frontend acts on it, and a block placed before it would hide the
// command. The notices say what could not be read; the turn goes on
// without it.
//
// It reads files, so a frontend calls it off its event loop, before it
// sends the prompt.
func ExpandPrompt(ctx context.Context, root string, cmds []command.Command, input string) (string, []string) {
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

// promptPrep expands the prompts of one run. The custom commands are read
// at the first prompt that could name one, and once per run: an ordinary
// prompt never walks the command directories, and a broken command file
// warns once, not at every prompt.
type promptPrep struct {
	root string
	dirs []string

	mu     sync.Mutex
	loaded bool
	cmds   []command.Command
}

// NewPromptPrep expands prompts for a run in workspace cwd, with the
// custom commands of the Reasonix home and of the workspace.
func NewPromptPrep(home, cwd string) *promptPrep {
	return &promptPrep{root: cwd, dirs: command.Dirs(home, cwd)}
}

// expand returns the text the session runs for input, and the warnings
// for the user: files that could not be read, command files skipped.
func (p *promptPrep) expand(ctx context.Context, input string) (string, []string) {
	var warnings []string
	p.mu.Lock()
	if name, _, ok := command.Split(input); ok && !p.loaded && !command.IsBuiltin(name) && !strings.HasPrefix(name, "mcp__") {
		var problems []command.Problem
		p.cmds, problems = command.Load(p.dirs...)
		p.loaded = true
		for _, pr := range problems {
			warnings = append(warnings, "custom command skipped: "+pr.String())
		}
	}
	cmds := p.cmds
	p.mu.Unlock()
	text, notices := ExpandPrompt(ctx, p.root, cmds, input)
	return text, append(warnings, notices...)
}

// preparer returns how Run readies each prompt of turn t for the
// session: expanded by t.prep (as typed when it is nil), with its warnings
// published as notice events. The renderer then shows them like any
// notice: on the event stream in stream-json, on stderr in text. The json
// format renders no events, so there they go to stderr directly; nothing
// else writes to stderr in that format.
func (t *Turn) preparer(stderr io.Writer, bus *event.Bus, session string) func(context.Context, string) string {
	return func(ctx context.Context, input string) string {
		if t.Prep == nil {
			return input
		}
		text, warnings := t.Prep.expand(ctx, input)
		for _, w := range warnings {
			if t.Format == "json" {
				fmt.Fprintf(stderr, "reasonix: warning: %s\n", w)
				continue
			}
			bus.Publish(&event.Notice{Meta: event.Meta{Session: session}, Level: "warn", Message: w})
		}
		return text
	}
}
