package command

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sources of a custom command.
const (
	SourceUser    = "user"
	SourceProject = "project"
)

// Command is a custom slash command loaded from a file.
type Command struct {
	// Name is what follows the slash: the file's path below its commands
	// directory without ".md", directories joined by ":" ("git:commit").
	Name string
	// Description and ArgumentHint come from the frontmatter, for menus
	// and /help. Without a description it is the body's first line.
	Description  string
	ArgumentHint string
	// Body is the template Render fills in.
	Body string
	// Path is the file the command came from; Source is SourceUser or
	// SourceProject.
	Path   string
	Source string
}

// Problem is a command file that was skipped, and why.
type Problem struct {
	Path string
	Err  error
}

// String is the problem as one line for a warning.
func (p Problem) String() string { return fmt.Sprintf("%s: %v", p.Path, p.Err) }

// Builtin is a slash command the frontend handles itself; it never
// reaches the model as text.
type Builtin struct {
	// Name is what follows the slash; Args a hint of its arguments
	// ("" when it takes none).
	Name, Args, Description string
}

// Builtins are the built-in commands, sorted by name. A custom command
// may not take one of these names.
var Builtins = []Builtin{
	{Name: "clear", Description: "Discard the current context without saving it (asks first)"},
	{Name: "compact", Description: "Summarise the conversation so far to free context"},
	{Name: "effort", Args: "[low|medium|high|max]", Description: "Show or set the reasoning effort"},
	{Name: "goal", Args: "[--research|--simple] <objective> | clear", Description: "Work on an objective autonomously, or clear the active goal"},
	{Name: "help", Description: "List the commands"},
	{Name: "init", Description: "Survey the repository read-only and propose a starter AGENTS.md to approve"},
	{Name: "mcp", Description: "Show the MCP servers, their tools, prompts and resources"},
	{Name: "model", Args: "[name]", Description: "Show or switch the model"},
	{Name: "new", Description: "Start a new session; the current one is saved for resume"},
	{Name: "plan", Description: "Plan first: research read-only and present a plan to approve before anything changes"},
	{Name: "posture", Args: "[ask|auto|yolo]", Description: "Show or set how tool calls are approved"},
	{Name: "quit", Description: "Leave the chat"},
	{Name: "resume", Args: "[id]", Description: "Resume a saved session"},
	{Name: "status", Description: "Show the session: model, posture, effort, usage and the project instructions it read"},
	{Name: "tasks", Description: "List the background tasks; @<task> <message> writes to one"},
}

// IsBuiltin reports whether name is a built-in command.
func IsBuiltin(name string) bool {
	return slices.ContainsFunc(Builtins, func(b Builtin) bool { return b.Name == name })
}

// Find returns the command called name from cmds.
func Find(cmds []Command, name string) (Command, bool) {
	for _, c := range cmds {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// Split parses input as a slash command: "/git:commit fix it" is
// ("git:commit", "fix it", true). A name is one or more of the letters,
// digits, '_', ':' and '-', right after the slash, and ends at whitespace
// or the end of the input; leading whitespace is ignored. Anything else
// ("/" alone, "//x", "/ x", a path like "/usr/bin") is not a command, so
// a message that merely starts with a path is sent as written.
func Split(input string) (name, args string, ok bool) {
	input = strings.TrimLeftFunc(input, unicode.IsSpace)
	if !strings.HasPrefix(input, "/") {
		return "", "", false
	}
	rest := input[1:]
	n := 0
	for n < len(rest) && nameByte(rest[n]) {
		n++
	}
	if n == 0 {
		return "", "", false
	}
	if n < len(rest) {
		r, _ := utf8.DecodeRuneInString(rest[n:])
		if !unicode.IsSpace(r) {
			return "", "", false
		}
	}
	return rest[:n], strings.TrimSpace(rest[n:]), true
}

func nameByte(c byte) bool {
	return c == '_' || c == ':' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Render fills the body in with args, the text after the command:
// $ARGUMENTS is all of it (its words joined by single spaces), $1…$N its
// words by position (empty when absent), $$ a literal $; any other $ is
// left as written. A body with no $ARGUMENTS and no $N placeholder gets
// the arguments appended after a blank line, so what the user typed is
// never dropped.
func (c Command) Render(args string) string {
	words := strings.Fields(args)
	all := strings.Join(words, " ")
	var b strings.Builder
	used := false
	body := c.Body
	for i := 0; i < len(body); i++ {
		if body[i] != '$' || i+1 == len(body) {
			b.WriteByte(body[i])
			continue
		}
		next := body[i+1:]
		switch {
		case next[0] == '$':
			b.WriteByte('$')
			i++
		case strings.HasPrefix(next, "ARGUMENTS"):
			b.WriteString(all)
			used = true
			i += len("ARGUMENTS")
		case next[0] >= '1' && next[0] <= '9':
			n := 0
			for n < len(next) && next[n] >= '0' && next[n] <= '9' {
				n++
			}
			k := atoiCapped(next[:n])
			if k <= len(words) {
				b.WriteString(words[k-1])
			}
			used = true
			i += n
		default:
			b.WriteByte('$')
		}
	}
	if !used && all != "" {
		b.WriteString("\n\n")
		b.WriteString(all)
	}
	return b.String()
}

// atoiCapped parses a run of digits, saturating instead of overflowing:
// "$99999999999999999999" is simply a word that is not there.
func atoiCapped(digits string) int {
	n := 0
	for _, d := range digits {
		n = n*10 + int(d-'0')
		if n > 1<<20 {
			return 1 << 20
		}
	}
	return n
}
