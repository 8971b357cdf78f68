package history

import (
	"strings"
	"unicode"
)

// maxTerms bounds how many terms of a query are searched for.
const maxTerms = 32

// term is one thing to look for: a word or a "quoted phrase", optionally
// a prefix (a word ending in *).
type term struct {
	text   string
	prefix bool
}

// parseTerms splits free text into terms: whitespace separates words,
// double quotes enclose a phrase (an unclosed quote runs to the end), and
// a trailing * makes a word a prefix. Terms without a letter or digit
// cannot match anything and are dropped, as are repeats.
func parseTerms(s string) []term {
	var (
		out  []term
		seen = map[term]bool{}
	)
	add := func(t term) {
		if len(out) == maxTerms || !strings.ContainsFunc(t.text, isWordRune) {
			return
		}
		key := term{text: strings.ToLower(t.text), prefix: t.prefix}
		if !seen[key] {
			seen[key] = true
			out = append(out, t)
		}
	}
	for s != "" {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		if s == "" {
			break
		}
		if rest, ok := strings.CutPrefix(s, `"`); ok {
			phrase, after, _ := strings.Cut(rest, `"`)
			add(term{text: strings.TrimSpace(phrase)})
			s = after
			continue
		}
		end := strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
		if end < 0 {
			end = len(s)
		}
		word := s[:end]
		s = s[end:]
		t := term{text: strings.TrimRight(word, "*")}
		// A prefix only when the star follows a word character: "*" or
		// "(*" alone says nothing about what to match.
		t.prefix = len(t.text) < len(word) && endsInWordRune(t.text)
		add(t)
	}
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

func endsInWordRune(s string) bool {
	r := []rune(s)
	return len(r) > 0 && isWordRune(r[len(r)-1])
}
