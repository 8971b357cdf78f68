package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// expandPath expands a configured path: a leading "~" or "~/" becomes the
// user's home directory, ${VAR} becomes the variable's value (empty when
// unset) and ${VAR:-default} becomes the value, or default when the
// variable is unset or empty. A "$" not followed by "{" is kept as is, and
// a default cannot itself contain "}". Tilde expansion applies to the text
// as written, not to what a variable expands to, as in a shell.
func expandPath(s string, lookup func(string) (string, bool)) (string, error) {
	var b strings.Builder
	if s == "~" || strings.HasPrefix(s, "~/") || (os.PathSeparator == '\\' && strings.HasPrefix(s, `~\`)) {
		home := userHome(lookup)
		if home == "" {
			return "", fmt.Errorf("expand %q: ~ needs HOME to be set", s)
		}
		b.WriteString(home)
		s = s[1:]
	}
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		s = s[i+2:]
		j := strings.IndexByte(s, '}')
		if j < 0 {
			return "", fmt.Errorf("expand %q: unterminated ${", s)
		}
		name, def, hasDef := strings.Cut(s[:j], ":-")
		if !validVarName(name) {
			return "", fmt.Errorf("expand ${%s}: %w", s[:j], errBadVarName)
		}
		v, ok := lookup(name)
		if hasDef && (!ok || v == "") {
			v = def
		}
		b.WriteString(v)
		s = s[j+1:]
	}
}

// errBadVarName explains which variable references expandPath accepts.
var errBadVarName = errors.New("a variable name is letters, digits and _, not starting with a digit; only ${VAR} and ${VAR:-default} are supported")

// validVarName reports whether name is a portable environment variable name.
func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// userHome is the user's home directory as the environment states it:
// HOME, or USERPROFILE where HOME is unset (Windows).
func userHome(lookup func(string) (string, bool)) string {
	if h, ok := lookup("HOME"); ok && h != "" {
		return h
	}
	if h, ok := lookup("USERPROFILE"); ok && h != "" {
		return h
	}
	return ""
}
