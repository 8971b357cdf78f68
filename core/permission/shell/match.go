package shell

import "strings"

// Match says how a Bash rule's specifier is compared with a command. The
// zero Match matches no command.
type Match uint8

const (
	// Exact is Bash(cmd): exactly this command.
	Exact Match = iota + 1
	// WordPrefix is Bash(cmd:*): the command starts with these words.
	WordPrefix
	// TextPrefix is Bash(cmd*): the command text starts with these
	// characters.
	TextPrefix
)

// Allows reports whether an allow rule (or a session grant) whose
// specifier spec is compared as m covers the command. Only a command that
// parsed and whose every program name is static (see Dynamic) can be
// covered. An exact rule covers the identical text, or a plain simple
// command with the same words. Prefix rules cover only a plain simple
// command that does not hand its arguments to another command (see
// RunsOtherCommands) and starts with the rule's words (Bash(go test:*))
// or characters (Bash(go te*)).
func (sc *Command) Allows(m Match, spec string) bool {
	if !sc.parsed || sc.dynamic != "" {
		return false
	}
	switch m {
	case Exact:
		if sc.raw == spec {
			return true
		}
		want := exactWords(spec)
		return sc.words != nil && want != nil && equalWords(sc.words, want)
	case WordPrefix, TextPrefix:
		if sc.words == nil || RunsOtherCommands(sc.words[0]) {
			return false
		}
		if m == WordPrefix {
			return hasWordPrefix(sc.words[0], sc.words[1:], prefixWords(spec))
		}
		return !strings.ContainsAny(sc.words[0], " \t\n") && strings.HasPrefix(strings.Join(sc.words, " "), spec)
	default:
		return false
	}
}

// Touches reports whether a deny or ask rule whose specifier spec is
// compared as m applies: the rule matches the whole text or any simple
// command anywhere inside it, or the command was too large to search
// completely.
func (sc *Command) Touches(m Match, spec string) bool {
	if sc.overflow {
		return true
	}
	switch m {
	case Exact:
		if sc.raw == spec {
			return true
		}
		want := exactWords(spec)
		if want == nil {
			return false
		}
		for _, cmd := range sc.commands {
			if len(cmd.args) == len(want)-1 && hasWordPrefix(cmd.name, cmd.args, want) {
				return true
			}
		}
	case WordPrefix:
		want := prefixWords(spec)
		for _, cmd := range sc.commands {
			if hasWordPrefix(cmd.name, cmd.args, want) {
				return true
			}
		}
	case TextPrefix:
		if strings.HasPrefix(sc.raw, spec) {
			return true
		}
		for _, cmd := range sc.commands {
			if cmd.hasTextPrefix(spec) {
				return true
			}
		}
	}
	return false
}

// exactWords returns the words of an exact rule's command, or nil when the
// rule is not itself a plain simple command; such a rule only matches its
// identical text.
func exactWords(spec string) []string {
	f, err := parseShell(spec)
	if err != nil {
		return nil
	}
	return plainWords(f)
}

// prefixWords splits a prefix rule's command into words the way the shell
// would, falling back to whitespace for a prefix that is not plain.
func prefixWords(spec string) []string {
	if words := exactWords(spec); words != nil {
		return words
	}
	return strings.Fields(spec)
}

// hasWordPrefix reports whether the command name+args starts with want,
// word by word: go test ./... starts with [go test], go testify does not.
func hasWordPrefix(name string, args, want []string) bool {
	if len(want) == 0 || name != want[0] || len(args) < len(want)-1 {
		return false
	}
	for i, w := range want[1:] {
		if args[i] != w {
			return false
		}
	}
	return true
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
