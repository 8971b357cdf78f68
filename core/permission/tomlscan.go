package permission

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// tomlItem is one top-level statement of a TOML document: a table header or
// a key/value pair, located by byte offsets so an edit can touch the text
// around it and nothing else.
type tomlItem struct {
	header     bool
	arrayTable bool
	path       []string   // header: the table; key/value: table + key
	table      []string   // key/value: the table it belongs to
	lineStart  int        // start of the line the item begins on
	end        int        // end of the item's last line, before the line break
	arr        *tomlArray // the value, when it is an array
}

// tomlArray locates the parts of an array value an append needs.
type tomlArray struct {
	open, close   int // offsets of "[" and "]"
	lastStart     int // start of the last element, -1 when empty
	lastEnd       int // end of the last element, -1 when empty
	trailingComma int // offset of a comma after the last element, or -1
}

// tomlScanner walks a TOML document just far enough to find statement
// boundaries: it knows every kind of string, comment, array and inline
// table so that none of their contents is mistaken for a statement. It
// does not validate values; callers check the document with a real TOML
// decoder before and after editing it.
type tomlScanner struct {
	s   string
	pos int
}

var errTOMLScan = errors.New("cannot follow the TOML structure")

func scanTOML(doc string) ([]tomlItem, error) {
	sc := &tomlScanner{s: doc}
	if strings.HasPrefix(doc, "\ufeff") {
		sc.pos = len("\ufeff")
	}
	var items []tomlItem
	var table []string
	for {
		sc.skipBlank()
		if sc.pos >= len(sc.s) {
			return items, nil
		}
		it := tomlItem{lineStart: lineStart(sc.s, sc.pos)}
		if sc.s[sc.pos] == '[' {
			it.header = true
			it.arrayTable = strings.HasPrefix(sc.s[sc.pos:], "[[")
			closer := "]"
			sc.pos++
			if it.arrayTable {
				closer = "]]"
				sc.pos++
			}
			key, err := sc.key()
			if err != nil {
				return nil, err
			}
			sc.skipSpace()
			if !strings.HasPrefix(sc.s[sc.pos:], closer) {
				return nil, sc.fail("unterminated table header")
			}
			sc.pos += len(closer)
			it.path, table = key, key
		} else {
			key, err := sc.key()
			if err != nil {
				return nil, err
			}
			sc.skipSpace()
			if sc.pos >= len(sc.s) || sc.s[sc.pos] != '=' {
				return nil, sc.fail("expected '='")
			}
			sc.pos++
			sc.skipSpace()
			arr, err := sc.value()
			if err != nil {
				return nil, err
			}
			it.table = table
			it.path = append(append([]string(nil), table...), key...)
			it.arr = arr
		}
		end, err := sc.endLine()
		if err != nil {
			return nil, err
		}
		it.end = end
		items = append(items, it)
	}
}

func (sc *tomlScanner) fail(what string) error {
	return fmt.Errorf("%w: %s at byte %d", errTOMLScan, what, sc.pos)
}

// skipSpace skips spaces and tabs.
func (sc *tomlScanner) skipSpace() {
	for sc.pos < len(sc.s) && (sc.s[sc.pos] == ' ' || sc.s[sc.pos] == '\t') {
		sc.pos++
	}
}

// skipBlank skips whitespace, line breaks and comments.
func (sc *tomlScanner) skipBlank() {
	for sc.pos < len(sc.s) {
		switch sc.s[sc.pos] {
		case ' ', '\t', '\r', '\n':
			sc.pos++
		case '#':
			sc.skipComment()
		default:
			return
		}
	}
}

func (sc *tomlScanner) skipComment() {
	for sc.pos < len(sc.s) && sc.s[sc.pos] != '\n' {
		sc.pos++
	}
}

// endLine consumes the rest of a statement's line (space and an optional
// comment) and its line break, and returns where the line's content ends.
func (sc *tomlScanner) endLine() (int, error) {
	sc.skipSpace()
	if sc.pos < len(sc.s) && sc.s[sc.pos] == '#' {
		sc.skipComment()
	}
	end := sc.pos
	switch {
	case sc.pos >= len(sc.s):
	case sc.s[sc.pos] == '\n':
		sc.pos++
	case strings.HasPrefix(sc.s[sc.pos:], "\r\n"):
		sc.pos += 2
	default:
		return 0, sc.fail("expected end of line")
	}
	if end > 0 && sc.s[end-1] == '\r' {
		end--
	}
	return end, nil
}

// key reads a possibly dotted key and returns its parts unquoted.
func (sc *tomlScanner) key() ([]string, error) {
	var parts []string
	for {
		sc.skipSpace()
		if sc.pos >= len(sc.s) {
			return nil, sc.fail("expected a key")
		}
		start := sc.pos
		switch sc.s[sc.pos] {
		case '"':
			if err := sc.basicString(); err != nil {
				return nil, err
			}
			var v string
			if json.Unmarshal([]byte(sc.s[start:sc.pos]), &v) != nil {
				v = sc.s[start+1 : sc.pos-1]
			}
			parts = append(parts, v)
		case '\'':
			if err := sc.literalString(); err != nil {
				return nil, err
			}
			parts = append(parts, sc.s[start+1:sc.pos-1])
		default:
			for sc.pos < len(sc.s) && isBareKeyByte(sc.s[sc.pos]) {
				sc.pos++
			}
			if sc.pos == start {
				return nil, sc.fail("expected a key")
			}
			parts = append(parts, sc.s[start:sc.pos])
		}
		sc.skipSpace()
		if sc.pos < len(sc.s) && sc.s[sc.pos] == '.' {
			sc.pos++
			continue
		}
		return parts, nil
	}
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// value skips one value and returns its layout when it is an array.
func (sc *tomlScanner) value() (*tomlArray, error) {
	if sc.pos >= len(sc.s) {
		return nil, sc.fail("expected a value")
	}
	switch sc.s[sc.pos] {
	case '"':
		if strings.HasPrefix(sc.s[sc.pos:], `"""`) {
			return nil, sc.multiline(`"""`, true)
		}
		return nil, sc.basicString()
	case '\'':
		if strings.HasPrefix(sc.s[sc.pos:], `'''`) {
			return nil, sc.multiline(`'''`, false)
		}
		return nil, sc.literalString()
	case '[':
		return sc.array()
	case '{':
		return nil, sc.inlineTable()
	default:
		start := sc.pos
		for sc.pos < len(sc.s) && !strings.ContainsRune(",]}#\r\n", rune(sc.s[sc.pos])) {
			sc.pos++
		}
		for sc.pos > start && (sc.s[sc.pos-1] == ' ' || sc.s[sc.pos-1] == '\t') {
			sc.pos--
		}
		if sc.pos == start {
			return nil, sc.fail("expected a value")
		}
		return nil, nil
	}
}

func (sc *tomlScanner) basicString() error {
	for sc.pos++; sc.pos < len(sc.s); sc.pos++ {
		switch sc.s[sc.pos] {
		case '\\':
			sc.pos++
		case '"':
			sc.pos++
			return nil
		case '\n':
			return sc.fail("unterminated string")
		}
	}
	return sc.fail("unterminated string")
}

func (sc *tomlScanner) literalString() error {
	end := strings.IndexAny(sc.s[sc.pos+1:], "'\n")
	if end < 0 || sc.s[sc.pos+1+end] != '\'' {
		return sc.fail("unterminated string")
	}
	sc.pos += end + 2
	return nil
}

// multiline skips a triple-quoted basic or literal string, including up
// to two quotes that belong to the content right before the closing
// delimiter.
func (sc *tomlScanner) multiline(delim string, escapes bool) error {
	for sc.pos += 3; sc.pos < len(sc.s); sc.pos++ {
		if escapes && sc.s[sc.pos] == '\\' {
			sc.pos++
			continue
		}
		if strings.HasPrefix(sc.s[sc.pos:], delim) {
			sc.pos += 3
			for extra := 0; extra < 2 && sc.pos < len(sc.s) && sc.s[sc.pos] == delim[0]; extra++ {
				sc.pos++
			}
			return nil
		}
	}
	return sc.fail("unterminated multi-line string")
}

func (sc *tomlScanner) array() (*tomlArray, error) {
	a := &tomlArray{open: sc.pos, lastStart: -1, lastEnd: -1, trailingComma: -1}
	sc.pos++
	for {
		sc.skipBlank()
		if sc.pos >= len(sc.s) {
			return nil, sc.fail("unterminated array")
		}
		if sc.s[sc.pos] == ']' {
			a.close = sc.pos
			sc.pos++
			return a, nil
		}
		a.lastStart = sc.pos
		if _, err := sc.value(); err != nil {
			return nil, err
		}
		a.lastEnd, a.trailingComma = sc.pos, -1
		sc.skipBlank()
		if sc.pos < len(sc.s) && sc.s[sc.pos] == ',' {
			a.trailingComma = sc.pos
			sc.pos++
		} else if sc.pos >= len(sc.s) || sc.s[sc.pos] != ']' {
			return nil, sc.fail("expected ',' or ']'")
		}
	}
}

func (sc *tomlScanner) inlineTable() error {
	sc.pos++
	for {
		sc.skipBlank()
		if sc.pos >= len(sc.s) {
			return sc.fail("unterminated inline table")
		}
		if sc.s[sc.pos] == '}' {
			sc.pos++
			return nil
		}
		if _, err := sc.key(); err != nil {
			return err
		}
		sc.skipSpace()
		if sc.pos >= len(sc.s) || sc.s[sc.pos] != '=' {
			return sc.fail("expected '='")
		}
		sc.pos++
		sc.skipSpace()
		if _, err := sc.value(); err != nil {
			return err
		}
		sc.skipBlank()
		if sc.pos < len(sc.s) && sc.s[sc.pos] == ',' {
			sc.pos++
		} else if sc.pos >= len(sc.s) || sc.s[sc.pos] != '}' {
			return sc.fail("expected ',' or '}'")
		}
	}
}

// lineStart returns the offset of the start of the line holding pos.
func lineStart(s string, pos int) int {
	return strings.LastIndexByte(s[:pos], '\n') + 1
}

// indentAt returns the spaces and tabs that open the line holding pos.
func indentAt(s string, pos int) string {
	ls := lineStart(s, pos)
	i := ls
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[ls:i]
}
