package gitignore

import (
	"bytes"
	"strings"
)

// pattern is one parsed gitignore line.
type pattern struct {
	text     string // the glob, without "!" or the trailing "/"
	negate   bool   // "!" prefix: a match re-includes the path
	dirOnly  bool   // trailing "/": matches directories only
	basename bool   // no "/" inside: matches the last path element at any depth
	endsWith bool   // "*literal": a suffix test suffices
	prefix   int    // length of the leading part free of glob metacharacters
}

// parseLines turns the contents of an ignore file into patterns in file
// order. Lines that cannot match anything are dropped.
func parseLines(data []byte) []pattern {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var out []pattern
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		// Files written on Windows end lines with CRLF; git itself would
		// keep the CR, but no path an agent sees ends in one.
		line = bytes.TrimSuffix(line, []byte("\r"))
		if p, ok := parseLine(string(line)); ok {
			out = append(out, p)
		}
	}
	return out
}

// parseLine parses one gitignore line the way git's parse_path_pattern does.
func parseLine(line string) (pattern, bool) {
	if line == "" || line[0] == '#' {
		return pattern{}, false
	}
	line = trimTrailingSpaces(line)
	var p pattern
	if strings.HasPrefix(line, "!") {
		p.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = line[:len(line)-1]
	}
	if line == "" {
		return pattern{}, false
	}
	p.text = line
	p.basename = !strings.Contains(line, "/")
	p.prefix = simpleLength(line)
	p.endsWith = line[0] == '*' && simpleLength(line[1:]) == len(line)-1
	return p, true
}

// trimTrailingSpaces drops unescaped trailing spaces (not tabs), as git does.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

// simpleLength is the length of the prefix of s without glob metacharacters.
func simpleLength(s string) int {
	for i := 0; i < len(s); i++ {
		if isGlobSpecial(s[i]) {
			return i
		}
	}
	return len(s)
}

func isGlobSpecial(c byte) bool {
	return c == '*' || c == '?' || c == '[' || c == '\\'
}

// matches reports whether the pattern, declared in a file whose directory is
// base (relative to the repository top, "" or ending in "/"), matches path
// (relative to the same top). name is the last element of path.
func (p *pattern) matches(base, path, name string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	if p.basename {
		return p.matchBasename(name)
	}
	return p.matchPathname(base, path)
}

func (p *pattern) matchBasename(name string) bool {
	switch {
	case p.prefix == len(p.text):
		return name == p.text
	case p.endsWith:
		return strings.HasSuffix(name, p.text[1:])
	}
	return wildmatch(p.text, name)
}

// matchPathname mirrors git's match_pathname, including its habit of
// comparing the literal prefix first and globbing only the remainder: the
// remainder then starts a pattern, which changes how a "**" right after the
// prefix is read, and git check-ignore agrees with this reading.
func (p *pattern) matchPathname(base, path string) bool {
	pat, prefix := p.text, p.prefix
	if pat[0] == '/' {
		pat, prefix = pat[1:], prefix-1
	}
	if !strings.HasPrefix(path, base) {
		return false
	}
	name := path[len(base):]
	if name == "" {
		return false
	}
	if prefix > 0 {
		if prefix > len(name) || name[:prefix] != pat[:prefix] {
			return false
		}
		pat, name = pat[prefix:], name[prefix:]
		if pat == "" && name == "" {
			return true
		}
	}
	return wildmatch(pat, name)
}

// Results of dowild, as in git's wildmatch.c. The two abort values let an
// outer "*" stop trying further positions once no later start can succeed.
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// wildmatch reports whether text matches the glob pat with "/" treated as a
// path separator: "*", "?" and classes never match "/", while a "**" that
// forms a whole path element matches across elements.
func wildmatch(pat, text string) bool {
	return dowild(pat, text) == wmMatch
}

// at returns s[i], or 0 past the end, standing in for C's terminating NUL.
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func dowild(p, text string) int {
	pi, ti := 0, 0
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		pc := p[pi]
		tc := at(text, ti)
		if tc == 0 && pc != '*' {
			return wmAbortAll
		}
		switch pc {
		case '\\':
			// A trailing backslash compares against NUL and fails.
			pi++
			if at(p, pi) != tc {
				return wmNoMatch
			}
		case '?':
			if tc == '/' {
				return wmNoMatch
			}
		case '*':
			var matchSlash bool
			pi++
			if at(p, pi) == '*' {
				prev := pi - 2
				for at(p, pi) == '*' {
					pi++
				}
				next := at(p, pi)
				if (prev < 0 || p[prev] == '/') &&
					(next == 0 || next == '/' || (next == '\\' && at(p, pi+1) == '/')) {
					// "**/" may match no directory at all.
					if next == '/' && dowild(p[pi+1:], text[ti:]) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				}
			}
			if pi >= len(p) {
				// A trailing "**" takes the rest; a trailing "*" only
				// what is left of the current element.
				if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
					return wmNoMatch
				}
				return wmMatch
			}
			if !matchSlash && p[pi] == '/' {
				// "*/" consumes exactly the current element.
				slash := strings.IndexByte(text[ti:], '/')
				if slash < 0 {
					return wmNoMatch
				}
				ti += slash
				continue // the loop step consumes both slashes
			}
			for ; ti < len(text); ti++ {
				tc = text[ti]
				r := dowild(p[pi:], text[ti:])
				if r != wmNoMatch {
					if !matchSlash || r != wmAbortToStarStar {
						return r
					}
				} else if !matchSlash && tc == '/' {
					return wmAbortToStarStar
				}
			}
			return wmAbortAll
		case '[':
			r, next := matchClass(p, pi, tc)
			if r != wmMatch {
				return r
			}
			pi = next
		default:
			if tc != pc {
				return wmNoMatch
			}
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// matchClass matches the byte tc against the bracket expression starting at
// p[open] == '['. It returns wmMatch and the index of the closing ']' on a
// match, or the verdict that ends the match.
func matchClass(p string, open int, tc byte) (int, int) {
	pi := open + 1
	pc := at(p, pi)
	negated := false
	if pc == '^' || pc == '!' {
		negated = true
		pi++
		pc = at(p, pi)
	}
	var prev byte
	matched := false
	for {
		if pc == 0 {
			return wmAbortAll, 0
		}
		switch {
		case pc == '\\':
			pi++
			pc = at(p, pi)
			if pc == 0 {
				return wmAbortAll, 0
			}
			if tc == pc {
				matched = true
			}
		case pc == '-' && prev != 0 && at(p, pi+1) != 0 && at(p, pi+1) != ']':
			pi++
			pc = p[pi]
			if pc == '\\' {
				pi++
				pc = at(p, pi)
				if pc == 0 {
					return wmAbortAll, 0
				}
			}
			if tc <= pc && tc >= prev {
				matched = true
			}
			pc = 0 // a range cannot start another range
		case pc == '[' && at(p, pi+1) == ':':
			start := pi + 2
			end := start
			for end < len(p) && p[end] != ']' {
				end++
			}
			if end >= len(p) {
				return wmAbortAll, 0
			}
			if end-start-1 < 0 || p[end-1] != ':' {
				// Not "[:name:]": a literal '[' in the set.
				if tc == '[' {
					matched = true
				}
				pc = '['
				break
			}
			in, ok := inPOSIXClass(p[start:end-1], tc)
			if !ok {
				return wmAbortAll, 0
			}
			if in {
				matched = true
			}
			pi = end
			pc = 0
		default:
			if tc == pc {
				matched = true
			}
		}
		prev = pc
		pi++
		pc = at(p, pi)
		if pc == ']' {
			break
		}
	}
	if matched == negated || tc == '/' {
		return wmNoMatch, 0
	}
	return wmMatch, pi
}

// inPOSIXClass reports whether c belongs to the named [:class:]; ok is false
// for an unknown name.
func inPOSIXClass(name string, c byte) (in, ok bool) {
	isUpper := 'A' <= c && c <= 'Z'
	isLower := 'a' <= c && c <= 'z'
	isDigit := '0' <= c && c <= '9'
	isAlpha := isUpper || isLower
	isPrint := 0x20 <= c && c < 0x7f
	switch name {
	case "alnum":
		return isAlpha || isDigit, true
	case "alpha":
		return isAlpha, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return isDigit, true
	case "graph":
		return isPrint && c != ' ', true
	case "lower":
		return isLower, true
	case "print":
		return isPrint, true
	case "punct":
		return isPrint && c != ' ' && !isAlpha && !isDigit, true
	case "space":
		return c == ' ' || ('\t' <= c && c <= '\r'), true
	case "upper":
		return isUpper, true
	case "xdigit":
		return isDigit || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F'), true
	}
	return false, false
}
