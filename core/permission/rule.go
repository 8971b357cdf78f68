package permission

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"reasonix/core/permission/shell"
)

// family groups the tools one rule name stands for, so a user writes one
// rule for "every file mutation" instead of one per tool.
type family uint8

const (
	familyNone family = iota // a concrete tool, matched by its exact name
	familyBash               // the shell tool; specifiers are commands
	familyEdit               // built-in file mutations; specifiers are path globs
	familyRead               // built-in file readers; specifiers are path globs
)

// familyNames maps the rule names that stand for a whole family.
var familyNames = map[string]family{
	"Bash": familyBash,
	"Edit": familyEdit,
	"Read": familyRead,
}

// legacyFamilyNames maps the lower-case spellings older configs used for a
// whole family onto the current names, so those configs keep loading.
var legacyFamilyNames = map[string]string{
	"bash": "Bash",
	"edit": "Edit",
	"read": "Read",
}

// toolFamily places each built-in tool in its family. A tool missing here
// (an MCP tool, a plugin) is only ever matched by its exact name.
var toolFamily = map[string]family{
	"bash":       familyBash,
	"write_file": familyEdit,
	"edit_file":  familyEdit,
	"multi_edit": familyEdit,
	"move_file":  familyEdit,
	"read_file":  familyRead,
	"ls":         familyRead,
	"glob":       familyRead,
	"grep":       familyRead,
}

// kind says how a rule's specifier is compared with a call's subject.
type kind uint8

const (
	kindAny          kind = iota // bare Tool: every call of the tool or family
	kindExact                    // Bash(cmd) or a literal specifier of another tool
	kindPrefix                   // Bash(cmd:*): the command starts with these words
	kindStringPrefix             // Bash(cmd*): the command text starts with these characters
	kindGlob                     // Edit(glob) and Read(glob): the path matches
)

// bashMatch is how a Bash rule of this kind compares its specifier with a
// command; it is 0, which matches nothing, for the kinds Bash rules do not
// have.
func (k kind) bashMatch() shell.Match {
	switch k {
	case kindExact:
		return shell.Exact
	case kindPrefix:
		return shell.WordPrefix
	case kindStringPrefix:
		return shell.TextPrefix
	default:
		return 0
	}
}

// Rule is one parsed permission rule. Rules are values: two rules that
// parse from equivalent text compare equal with ==, which is what lets the
// runtime and PersistRule recognise a rule that is already present. The
// zero Rule matches nothing.
type Rule struct {
	tool string // "Bash", "Edit", "Read", or a concrete tool name
	kind kind
	spec string // the specifier without its :* or * suffix
}

// RuleError reports a rule that cannot be parsed. It carries the rule as
// written so a config error can point at the exact entry.
type RuleError struct {
	// Rule is the text that failed to parse.
	Rule string
	// Err says what is wrong with it.
	Err error
}

// Error names the rule and the problem in one line.
func (e *RuleError) Error() string {
	return fmt.Sprintf("permission rule %q: %v", e.Rule, e.Err)
}

// Unwrap exposes the underlying problem to errors.Is and errors.As.
func (e *RuleError) Unwrap() error { return e.Err }

// Reasons a rule is rejected. They are wrapped in a *RuleError.
var (
	errEmptyRule   = errors.New("empty rule")
	errEmptyTool   = errors.New("empty tool name")
	errEmptySpec   = errors.New("empty specifier")
	errEmptyPrefix = errors.New("empty command prefix")
	errUnbalanced  = errors.New("unbalanced parentheses")
	errBadToolName = errors.New("tool name may only hold letters, digits, '_', '-' and '.'")
	errBadGlob     = errors.New("malformed path glob")
)

// ParseRule reads one rule in any accepted spelling:
//
//	Tool             every call of the tool or family
//	Tool(specifier)  calls whose subject matches the specifier
//	tool=specifier   the older spelling of Tool(specifier)
//
// Bash, Edit and Read name families (see the package documentation);
// bash, edit and read are accepted as their older spellings. Any other name
// is a concrete tool, compared case-sensitively. A specifier of "*" is the
// same as the bare form. For Bash, "cmd:*" and the older "cmd *" are word
// prefixes, "cmd*" is a raw character prefix and anything else is an exact
// command. For the Edit and Read families the specifier is a path glob; for
// any other tool it is compared literally.
func ParseRule(s string) (Rule, error) {
	r, err := parseRule(s)
	if err != nil {
		return Rule{}, &RuleError{Rule: s, Err: err}
	}
	return r, nil
}

func parseRule(s string) (Rule, error) {
	text := strings.TrimSpace(s)
	if text == "" {
		return Rule{}, errEmptyRule
	}
	name, spec, hasSpec, err := splitRule(text)
	if err != nil {
		return Rule{}, err
	}
	if name == "" {
		return Rule{}, errEmptyTool
	}
	if !validToolName(name) {
		return Rule{}, errBadToolName
	}
	if canon, ok := legacyFamilyNames[name]; ok {
		name = canon
	}
	r := Rule{tool: name}
	if !hasSpec {
		return r, nil
	}
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "":
		return Rule{}, errEmptySpec
	case spec == "*":
		return r, nil
	case !parensBalanced(spec):
		return Rule{}, errUnbalanced
	}
	switch r.family() {
	case familyBash:
		switch {
		case strings.HasSuffix(spec, ":*"):
			r.kind, r.spec = kindPrefix, strings.TrimSpace(strings.TrimSuffix(spec, ":*"))
			if r.spec == "" {
				return Rule{}, errEmptyPrefix
			}
		case strings.HasSuffix(spec, " *"):
			// The older spelling of a word prefix; it is saved back as cmd:*.
			r.kind, r.spec = kindPrefix, strings.TrimSpace(strings.TrimSuffix(spec, " *"))
		case strings.HasSuffix(spec, "*"):
			r.kind, r.spec = kindStringPrefix, strings.TrimSuffix(spec, "*")
		default:
			r.kind, r.spec = kindExact, spec
		}
	case familyEdit, familyRead:
		if _, err := path.Match(spec, ""); err != nil {
			return Rule{}, fmt.Errorf("%w: %w", errBadGlob, err)
		}
		r.kind, r.spec = kindGlob, spec
	default:
		r.kind, r.spec = kindExact, spec
	}
	return r, nil
}

// splitRule separates the tool name from the specifier. Whichever of "("
// and "=" comes first decides the spelling, so a Bash(FOO=1 make) rule is
// not mistaken for the older tool=specifier form.
func splitRule(text string) (name, spec string, hasSpec bool, err error) {
	open := strings.IndexByte(text, '(')
	eq := strings.IndexByte(text, '=')
	switch {
	case eq >= 0 && (open < 0 || eq < open):
		return strings.TrimSpace(text[:eq]), text[eq+1:], true, nil
	case open >= 0:
		if !strings.HasSuffix(text, ")") {
			return "", "", false, errUnbalanced
		}
		return text[:open], text[open+1 : len(text)-1], true, nil
	case strings.Contains(text, ")"):
		return "", "", false, errUnbalanced
	default:
		return text, "", false, nil
	}
}

// validToolName accepts the characters built-in, MCP (mcp__server__tool)
// and plugin tool names use, and nothing that could hide a specifier.
func validToolName(name string) bool {
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return name != ""
}

// parensBalanced reports whether the parentheses of a specifier pair up,
// ignoring quoted and backslash-escaped ones. A specifier whose quotes never
// close is left alone: quotes may be literal characters of a path or of a
// character prefix.
func parensBalanced(spec string) bool {
	depth := 0
	var quote byte
	for i := 0; i < len(spec); i++ {
		c := spec[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case c == '\\':
			i++
		case quote == '"':
			if c == '"' {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return quote != 0 || depth == 0
}

// family returns the family whose specifier rules the rule follows: its own
// when it names one, else that of the concrete built-in it names.
func (r Rule) family() family {
	if f, ok := familyNames[r.tool]; ok {
		return f
	}
	return toolFamily[r.tool]
}

// appliesTo reports whether a call of the named tool is in the rule's scope,
// before its specifier is considered.
func (r Rule) appliesTo(tool string) bool {
	if f, ok := familyNames[r.tool]; ok {
		return toolFamily[tool] == f
	}
	return r.tool != "" && r.tool == tool
}

// String returns the rule in its current canonical spelling, which
// ParseRule reads back to an equal Rule. Older spellings come out modern:
// bash=go test * becomes Bash(go test:*).
func (r Rule) String() string {
	switch r.kind {
	case kindAny:
		return r.tool
	case kindPrefix:
		return r.tool + "(" + r.spec + ":*)"
	case kindStringPrefix:
		return r.tool + "(" + r.spec + "*)"
	default:
		return r.tool + "(" + r.spec + ")"
	}
}
