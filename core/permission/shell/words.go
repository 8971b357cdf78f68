package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"reasonix/core/text"
)

// staticWord returns the value of a word that reads the same whatever the
// variables, the files present and the shell's options are: literal text,
// single and double quotes, and $'...' decoded. Otherwise it returns why,
// a short phrase naming the word and what makes it vary. An unquoted *, ?
// or [ ... ] is a glob that picks a file; {a,b} is a brace expansion; a
// leading ~ is the home directory.
func staticWord(w *syntax.Word) (value, why string) {
	src := func() string { return clip(source(w)) }
	var b strings.Builder
	closes := closersAfter(w)
	for i, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(x.Value, "~") {
				return "", src() + " depends on the home directory"
			}
			if isGlob(x.Value, closes[i]) {
				return "", src() + " is a glob that picks a file"
			}
			b.WriteString(unescapeBare(x.Value))
		case *syntax.SglQuoted:
			if !x.Dollar {
				b.WriteString(x.Value)
				continue
			}
			v, ok := ansiC(x)
			if !ok {
				return "", src() + " cannot be decoded"
			}
			b.WriteString(v)
		case *syntax.DblQuoted:
			if x.Dollar {
				return "", src() + " is translated at run time"
			}
			for _, inner := range x.Parts {
				lit, ok := inner.(*syntax.Lit)
				if !ok {
					return "", src() + " builds the program name at run time"
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			return "", src() + " builds the program name at run time"
		}
	}
	if hasBraceExpansion(w) {
		return "", src() + " is a brace expansion"
	}
	return b.String(), ""
}

// hasBraceExpansion reports whether bash would brace-expand the word: the
// parser leaves {a,b} as literal text unless asked. A copy is split, since
// splitting rewrites the word. {} and {a} stay literal, as in bash.
func hasBraceExpansion(w *syntax.Word) bool {
	if !slices.ContainsFunc(w.Parts, func(part syntax.WordPart) bool {
		lit, ok := part.(*syntax.Lit)
		return ok && strings.Contains(lit.Value, "{")
	}) {
		return false
	}
	braces := &syntax.Word{Parts: slices.Clone(w.Parts)}
	return syntax.SplitBraces(braces) && slices.ContainsFunc(braces.Parts, func(part syntax.WordPart) bool {
		_, ok := part.(*syntax.BraceExp)
		return ok
	})
}

// hasGlobChar reports whether unquoted text holds *, ? or [ that a
// backslash does not escape.
func hasGlobChar(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// isGlob reports whether unquoted text is a glob: it holds a * or ? that
// no backslash escapes, or a [ with a ] after it, in the text or later in
// the word (closed). A lone [ matches itself, which keeps the test command
// [ static.
func isGlob(s string, closed bool) bool {
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '*', '?':
			return true
		case '[':
			if closed || strings.Contains(s[j+1:], "]") {
				return true
			}
		}
	}
	return false
}

// closersAfter reports, for each part of a word, whether literal text in a
// later part holds a "]". Other parts make the word non-static anyway.
func closersAfter(w *syntax.Word) []bool {
	out := make([]bool, len(w.Parts))
	seen := false
	for i := len(w.Parts) - 1; i >= 0; i-- {
		out[i] = seen
		switch x := w.Parts[i].(type) {
		case *syntax.Lit:
			seen = seen || strings.Contains(x.Value, "]")
		case *syntax.SglQuoted:
			seen = seen || strings.Contains(x.Value, "]")
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if lit, ok := q.(*syntax.Lit); ok && strings.Contains(lit.Value, "]") {
					seen = true
				}
			}
		}
	}
	return out
}

// clip shortens shell text for a one-line reason.
func clip(s string) string {
	return text.OneLine(s, 40)
}
