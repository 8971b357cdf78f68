package text

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis marks where Clip and OneLine cut.
const Ellipsis = "…"

// Clip returns s cut to at most n runes, the last of them an ellipsis
// when anything was cut. n below 1 is taken as 1.
func Clip(s string, n int) string {
	n = max(n, 1)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for range n - 1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + Ellipsis
}

// OneLine folds every run of whitespace in s (newlines included) into one
// space and clips the result to n runes.
func OneLine(s string, n int) string {
	return Clip(strings.Join(strings.Fields(s), " "), n)
}

// Prefix returns the longest prefix of s of at most n bytes that ends on a
// rune boundary: for limits counted in bytes, such as what a tool result
// may add to the model's context.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Suffix returns the longest suffix of s of at most n bytes that starts on
// a rune boundary: the tail half of a head-and-tail cut.
func Suffix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
