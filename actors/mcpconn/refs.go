package mcpconn

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"reasonix/actors/event"
	"reasonix/core/mcp"
)

// FindMCPRefs returns the @<server>:<uri> references of input whose
// server is one of servers, once each, in order of appearance. A
// reference starts a word; trailing sentence punctuation is not part of
// the URI. Anything else (an email address, an unknown server) stays
// literal text. The <file> and <dir> blocks a frontend attached for @path
// references are skipped: what a file says is not the user asking for a
// resource.
func FindMCPRefs(input string, servers []string) []event.MCPRef {
	var out []event.MCPRef
	for i := 0; i < len(input); i++ {
		if i == 0 || input[i-1] == '\n' {
			if end := attachedBlockEnd(input[i:]); end > 0 {
				i += end - 1
				continue
			}
		}
		if input[i] != '@' || i > 0 && !startsWord(input[i-1]) {
			continue
		}
		rest := input[i+1:]
		colon := strings.IndexByte(rest, ':')
		if colon <= 0 {
			continue
		}
		server := rest[:colon]
		if !slices.Contains(servers, server) {
			continue
		}
		uri := rest[colon+1:]
		if end := strings.IndexFunc(uri, unicode.IsSpace); end >= 0 {
			uri = uri[:end]
		}
		uri = strings.TrimRight(uri, ".,;!?)]}\"'")
		if uri == "" {
			continue
		}
		ref := event.MCPRef{Server: server, URI: uri}
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
		i += colon + len(uri)
	}
	return out
}

// attachedBlockEnd is the length of the <file …>…</file> or <dir …>…</dir>
// block (or self-closing element) s starts with, as core/ref writes them,
// or 0 when s does not start with one.
func attachedBlockEnd(s string) int {
	for _, tag := range []string{"file", "dir"} {
		if !strings.HasPrefix(s, "<"+tag+" path=\"") {
			continue
		}
		line, _, _ := strings.Cut(s, "\n")
		if strings.HasSuffix(line, "/>") {
			return len(line)
		}
		if end := strings.Index(s, "\n</"+tag+">"); end >= 0 {
			return end + len("\n</"+tag+">")
		}
		return len(s) // unterminated: nothing after it is the user's
	}
	return 0
}

func startsWord(prev byte) bool {
	return prev == ' ' || prev == '\t' || prev == '\n' || prev == '\r' || prev == '(' || prev == '[' || prev == '"' || prev == '\''
}

// WithResources prepends the fetched resources to input, each wrapped as
// <resource ref="server:uri">…</resource>, in the order of refs. Refs
// without text (a failed fetch) are left out.
func WithResources(input string, refs []event.MCPRef, texts map[event.MCPRef]string) string {
	var b strings.Builder
	for _, r := range refs {
		text, ok := texts[r]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "<resource ref=\"%s\">\n%s\n</resource>\n\n", escapeAttr(r.String()), strings.TrimRight(text, "\n"))
	}
	if b.Len() == 0 {
		return input
	}
	b.WriteString(input)
	return b.String()
}

func escapeAttr(s string) string {
	return strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;").Replace(s)
}

// mcpCommandPrefix starts a slash command that runs an MCP prompt.
const mcpCommandPrefix = "/mcp__"

// ParseMCPCommand splits "/mcp__<server>__<prompt> args" into the command
// name (without the slash) and its arguments. ok is false for any other
// input.
func ParseMCPCommand(input string) (name, args string, ok bool) {
	input = strings.TrimSpace(input)
	if !strings.HasPrefix(input, mcpCommandPrefix) {
		return "", "", false
	}
	name, args, _ = strings.Cut(input[1:], " ")
	if i := strings.IndexFunc(name, unicode.IsSpace); i >= 0 {
		name, args = name[:i], name[i:]+" "+args
	}
	return name, strings.TrimSpace(args), true
}

// FindMCPPrompt finds the prompt whose command name is name among the
// prompts of the ready servers of st.
func FindMCPPrompt(st *event.MCPStatus, name string) (event.MCPPromptRef, bool) {
	for _, s := range st.Servers {
		for _, p := range s.Prompts {
			ref := event.MCPPromptRef{Server: s.Name, Prompt: p}
			if ref.Command() == name {
				return ref, true
			}
		}
	}
	return event.MCPPromptRef{}, false
}

// PromptArguments maps the words after a prompt command to the prompt's
// arguments. name=value words set that argument; the other words fill the
// remaining arguments in declared order, and the last one takes the rest
// of the line. A missing required argument is an error with a usage line.
func PromptArguments(p mcp.Prompt, args string) (map[string]string, error) {
	out := map[string]string{}
	words := strings.Fields(args)
	if len(p.Arguments) == 0 {
		if len(words) > 0 {
			return nil, fmt.Errorf("prompt %q takes no arguments", p.Name)
		}
		return out, nil
	}
	known := map[string]bool{}
	for _, a := range p.Arguments {
		known[a.Name] = true
	}
	var rest []string
	for _, w := range words {
		if k, v, ok := strings.Cut(w, "="); ok && known[k] {
			if _, dup := out[k]; !dup {
				out[k] = v
				continue
			}
		}
		rest = append(rest, w)
	}
	var open []string
	for _, a := range p.Arguments {
		if _, set := out[a.Name]; !set {
			open = append(open, a.Name)
		}
	}
	for i, name := range open {
		if len(rest) == 0 {
			break
		}
		if i == len(open)-1 {
			out[name] = strings.Join(rest, " ")
			rest = nil
			break
		}
		out[name] = rest[0]
		rest = rest[1:]
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("prompt %q: too many arguments: %s", p.Name, strings.Join(rest, " "))
	}
	var missing []string
	for _, a := range p.Arguments {
		if _, set := out[a.Name]; a.Required && !set {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("prompt %q: missing required argument %s (usage: %s)", p.Name, strings.Join(missing, ", "), promptUsage(p))
	}
	return out, nil
}

func promptUsage(p mcp.Prompt) string {
	parts := []string{p.Name}
	for _, a := range p.Arguments {
		if a.Required {
			parts = append(parts, "<"+a.Name+">")
		} else {
			parts = append(parts, "["+a.Name+"]")
		}
	}
	return strings.Join(parts, " ")
}
