package permission

import (
	"encoding/json"
	"path"
	"strings"

	"reasonix/core/permission/shell"
)

// Suggest proposes rules that would let this call through next time, for
// the "allow for the session" and "always allow" answers of an approval
// prompt. They run from narrowest to broadest, and each is guaranteed to
// cover the call it was made from.
//
// For bash the narrowest is the exact command, Bash(<command>). When the
// command is one plain simple command that runs nothing but itself, a
// prefix follows: Bash(<first> <second>:*) when the second word looks like
// a subcommand (go test, git status), else Bash(<first>:*). A compound or
// unparsable command never gets a prefix: approving it must not approve
// what else might be chained to it. A command ending in "*" has no exact
// form, since that spelling is a prefix rule.
//
// For a file mutation the path, relative to the root, comes first as
// Edit(<path>); a move or rename with two paths is offered their common
// directory instead; then the whole Edit family, the usual scope of a
// session grant. Any other tool is offered its bare name.
func (p Policy) Suggest(toolName string, args json.RawMessage) (out []string) {
	// A suggestion is a convenience: when matching fails, offer none.
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	c := p.newCall(toolName, args)
	var cands []string
	switch toolFamily[toolName] {
	case familyBash:
		cmd := strings.TrimSpace(c.args.Command)
		if cmd == "" {
			return nil
		}
		cands = append(cands, "Bash("+cmd+")")
		if w := c.bash().Words(); w != nil && !shell.RunsOtherCommands(w[0]) && plainWord(w[0]) {
			if len(w) >= 2 && subcommandWord(w[1]) {
				cands = append(cands, "Bash("+w[0]+" "+w[1]+":*)")
			} else {
				cands = append(cands, "Bash("+w[0]+":*)")
			}
		}
	case familyEdit:
		var rels []string
		for _, s := range c.pathSubjects() {
			rels = append(rels, c.relative(s))
		}
		switch {
		case len(rels) == 1:
			cands = append(cands, "Edit("+escapeGlob(rels[0])+")")
		case len(rels) > 1:
			if dir := commonDir(rels); dir != "" {
				cands = append(cands, "Edit("+escapeGlob(dir)+"/**)")
			}
		}
		cands = append(cands, "Edit")
	default:
		if validToolName(toolName) {
			cands = append(cands, toolName)
		}
	}

	// Keep only what parses and covers the call, so a suggestion can never
	// approve less than the user saw (or, by a surprising reading, more).
	seen := map[Rule]bool{}
	for _, s := range cands {
		r, err := ParseRule(s)
		if err != nil || seen[r] || !r.matches(c, true) {
			continue
		}
		seen[r] = true
		out = append(out, r.String())
	}
	return out
}

// relative renders a path argument for a rule: relative to the root when it
// lies inside it, absolute otherwise. A relative path that starts with "~"
// is prefixed with "./" so the rule does not read it as the home directory.
func (c *call) relative(p string) string {
	abs := c.absolute(p)
	rel := abs
	if c.root != "" {
		if abs == c.root {
			rel = "."
		} else if r, ok := strings.CutPrefix(abs, strings.TrimSuffix(c.root, "/")+"/"); ok {
			rel = r
		}
	}
	if strings.HasPrefix(rel, "~") {
		rel = "./" + rel
	}
	return rel
}

// commonDir returns the deepest directory holding every path, or "" when
// they share none below the root.
func commonDir(paths []string) string {
	dir := path.Dir(paths[0])
	for _, p := range paths[1:] {
		for dir != "." && dir != "/" && !strings.HasPrefix(p, dir+"/") {
			dir = path.Dir(dir)
		}
	}
	if dir == "." || dir == "/" {
		return ""
	}
	return dir
}

// escapeGlob quotes the characters a path glob or the rule syntax would
// read specially, so a suggested Edit rule names exactly one path.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[]\()`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// plainWord accepts a command name that reads the same in a rule as on the
// command line: letters, digits and a few path characters.
func plainWord(w string) bool {
	for _, r := range w {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			strings.ContainsRune("_./+-", r):
		default:
			return false
		}
	}
	return w != ""
}

// subcommandWord accepts words that look like a subcommand (test, status,
// run-script) rather than a flag, path or free argument.
func subcommandWord(w string) bool {
	for i, r := range w {
		switch {
		case r >= 'a' && r <= 'z':
		case i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '_'):
		default:
			return false
		}
	}
	return w != ""
}
