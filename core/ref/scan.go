package ref

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// trailingPunct is sentence punctuation that may follow a reference
// ("see @main.go, then…") without being part of the path. It is dropped
// only when the path with it does not exist, so a file really named
// "notes." still resolves.
const trailingPunct = `.,;:!?)]}'"`

// candidate is one @word of the input: where it sits and the paths it may
// stand for, longest first.
type candidate struct {
	// start and end span the whole word, @ and quotes included.
	start, end int
	// paths are the spellings to try in order; the first that exists is
	// the reference.
	paths []string
}

// scan finds every word of input that starts with @ and could be a local
// path reference. It reads no files: existence is the caller's test.
// Words shaped like an MCP resource (@server:uri) are left out, so the
// session's own resolution sees them untouched.
func scan(input string) []candidate {
	var out []candidate
	for i := 0; i < len(input); i++ {
		if input[i] != '@' || !wordStart(input, i) {
			continue
		}
		c, ok := word(input, i)
		if !ok {
			continue
		}
		out = append(out, c)
		i = c.end - 1
	}
	return out
}

// wordStart reports whether position i begins a word: the start of the
// text or just after whitespace. "me@example.com" therefore never yields
// a reference.
func wordStart(input string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(input[:i])
	return unicode.IsSpace(r)
}

// word reads the reference starting at the @ at position at.
func word(input string, at int) (candidate, bool) {
	rest := input[at+1:]
	if strings.HasPrefix(rest, `"`) {
		// @"path with spaces": the path is everything up to the next quote
		// on the same line. No closing quote means no quoting.
		if end := strings.IndexAny(rest[1:], "\"\n"); end > 0 && rest[1+end] == '"' {
			p := rest[1 : 1+end]
			return candidate{start: at, end: at + 1 + end + 2, paths: []string{p}}, true
		}
	}
	n := strings.IndexFunc(rest, unicode.IsSpace)
	if n < 0 {
		n = len(rest)
	}
	w := rest[:n]
	if w == "" || mcpShaped(strings.TrimRight(w, trailingPunct)) {
		return candidate{}, false
	}
	c := candidate{start: at, end: at + 1 + n}
	for p := w; p != ""; {
		c.paths = append(c.paths, p)
		last, size := utf8.DecodeLastRuneInString(p)
		if !strings.ContainsRune(trailingPunct, last) {
			break
		}
		p = p[:len(p)-size]
	}
	return c, len(c.paths) > 0
}

// mcpShaped reports whether w looks like server:uri: a name of letters,
// digits, '.', '_' or '-', a colon and something after it. Such a word is
// the session's to resolve against its MCP servers; a local file with a
// colon in its name right after such a prefix cannot be referenced, which
// is the price of never reading a file where a resource was meant.
func mcpShaped(w string) bool {
	server, uri, ok := strings.Cut(w, ":")
	if !ok || server == "" || uri == "" {
		return false
	}
	for _, r := range server {
		if !(r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
