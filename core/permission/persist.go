package permission

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"reasonix/core/atomicfile"
	"reasonix/core/config"
)

// PersistRule adds rule to the allow list of the [permissions] table of the
// TOML file at projectFile, for an "always allow" answer. It is the only
// function of the package that does I/O.
//
// The file is edited as text so that comments, key order and every other
// table survive byte for byte: the rule is appended to an existing allow
// array (inline or spread over lines), or an allow key is added to an
// existing [permissions] table, or a [permissions] table is added at the
// end; a missing file is created. The rule is stored in its canonical
// spelling, and nothing is written when an equal rule is already listed.
// The result is decoded again before anything is written: unless it parses
// and differs from the original only by the new entry, the file is left
// untouched and an error is returned. The write itself goes through a
// temporary file renamed over the original, so a crash never leaves half a
// config behind.
func PersistRule(projectFile, rule string) error {
	r, err := ParseRule(rule)
	if err != nil {
		return fmt.Errorf("persist permission rule: %w", err)
	}
	target := projectFile
	if resolved, err := filepath.EvalSymlinks(projectFile); err == nil {
		target = resolved // write through a symlinked config to its target
	}
	perm := fs.FileMode(0o644)
	doc, err := os.ReadFile(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		doc = nil
	case err != nil:
		return fmt.Errorf("persist permission rule: %w", err)
	default:
		if info, err := os.Stat(target); err == nil {
			perm = info.Mode().Perm()
		}
	}
	out, changed, err := addAllowRule(doc, r)
	if err != nil {
		return fmt.Errorf("persist permission rule to %s: %w", projectFile, err)
	}
	if !changed {
		return nil
	}
	if err := atomicfile.Write(target, out, perm); err != nil {
		return fmt.Errorf("persist permission rule: write %s: %w", target, err)
	}
	return nil
}

// addAllowRule returns doc with r appended to permissions.allow, and
// whether anything changed. It refuses documents it cannot edit safely.
func addAllowRule(doc []byte, r Rule) ([]byte, bool, error) {
	before, err := decodeTOML(doc)
	if err != nil {
		return nil, false, fmt.Errorf("existing file is not valid TOML: %w", err)
	}
	allow, err := allowList(before)
	if err != nil {
		return nil, false, err
	}
	want := r.String()
	for _, entry := range allow {
		s, ok := entry.(string)
		if !ok {
			continue
		}
		if have, err := ParseRule(s); s == want || (err == nil && have == r) {
			return doc, false, nil
		}
	}
	edited, err := insertAllow(string(doc), quoteTOML(want))
	if err != nil {
		return nil, false, err
	}
	if err := checkEdit(before, allow, edited, want); err != nil {
		return nil, false, fmt.Errorf("refusing to write: %w", err)
	}
	return []byte(edited), true, nil
}

// insertAllow performs the text edit; quoted is the rule as a TOML string.
func insertAllow(doc, quoted string) (string, error) {
	items, err := scanTOML(doc)
	if err != nil {
		return "", err
	}
	nl := "\n"
	if strings.Contains(doc, "\r\n") {
		nl = "\r\n"
	}
	var header, last *tomlItem
	for i := range items {
		it := &items[i]
		switch {
		case it.header:
			if !it.arrayTable && samePath(it.path, "permissions") {
				header = it
			}
		case samePath(it.path, "permissions", "allow"):
			if it.arr == nil {
				return "", errors.New("permissions.allow is not an array")
			}
			return appendToArray(doc, it.arr, quoted, nl), nil
		case len(it.path) == 1 && it.path[0] == "permissions":
			return "", errors.New("permissions is written as an inline value; add the rule by hand")
		case it.path[0] == "permissions" && (len(it.table) == 0 || samePath(it.table, "permissions")):
			last = it
		}
	}
	switch {
	case last != nil:
		// Add the key after the table's last entry, spelled for the table
		// that entry sits in.
		key := "allow"
		if len(last.table) == 0 {
			key = "permissions.allow"
		}
		line := nl + indentAt(doc, last.lineStart) + key + " = [" + quoted + "]"
		return doc[:last.end] + line + doc[last.end:], nil
	case header != nil:
		line := nl + "allow = [" + quoted + "]"
		return doc[:header.end] + line + doc[header.end:], nil
	default:
		out := doc
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += nl
		}
		if strings.TrimSpace(out) != "" {
			out += nl
		}
		return out + "[permissions]" + nl + "allow = [" + quoted + "]" + nl, nil
	}
}

// appendToArray adds quoted as the last element of the array a, following
// the array's layout: on the same line for an inline array, on a new line
// with the last element's indent for one spread over lines.
func appendToArray(doc string, a *tomlArray, quoted, nl string) string {
	oneLine := !strings.Contains(doc[a.open:a.close], "\n")
	if a.lastEnd < 0 {
		if oneLine {
			return doc[:a.open] + "[" + quoted + "]" + doc[a.close+1:]
		}
		// Only comments sit inside, so the bracket opens its own line.
		ls := lineStart(doc, a.close)
		return doc[:ls] + indentAt(doc, a.close) + "    " + quoted + "," + nl + doc[ls:]
	}
	if oneLine {
		if a.trailingComma >= 0 {
			at := a.trailingComma + 1
			return doc[:at] + " " + quoted + "," + doc[at:]
		}
		return doc[:a.lastEnd] + ", " + quoted + doc[a.lastEnd:]
	}
	indent := indentAt(doc, a.lastStart)
	if lineStart(doc, a.lastStart) == lineStart(doc, a.open) {
		indent = indentAt(doc, a.open) + "    "
	}
	closeLine := lineStart(doc, a.close)
	if strings.TrimLeft(doc[closeLine:a.close], " \t") == "" && closeLine > a.lastEnd {
		if a.trailingComma >= 0 {
			return doc[:closeLine] + indent + quoted + "," + nl + doc[closeLine:]
		}
		return doc[:a.lastEnd] + "," + doc[a.lastEnd:closeLine] + indent + quoted + nl + doc[closeLine:]
	}
	if a.trailingComma >= 0 {
		at := a.trailingComma + 1
		return doc[:at] + nl + indent + quoted + "," + doc[at:]
	}
	return doc[:a.lastEnd] + "," + nl + indent + quoted + doc[a.lastEnd:]
}

func samePath(p []string, want ...string) bool {
	if len(p) != len(want) {
		return false
	}
	for i := range p {
		if p[i] != want[i] {
			return false
		}
	}
	return true
}

// quoteTOML writes s as a TOML string: a literal string when it can be one
// (commands often hold double quotes, which then need no escaping), else a
// basic string with escapes.
func quoteTOML(s string) string {
	if strings.ContainsAny(s, "'\x7f") || strings.IndexFunc(s, func(r rune) bool { return r < 0x20 && r != '\t' }) >= 0 {
		return config.QuoteString(s)
	}
	return "'" + s + "'"
}

func decodeTOML(doc []byte) (map[string]any, error) {
	m := map[string]any{}
	if _, err := toml.Decode(string(doc), &m); err != nil {
		return nil, err
	}
	return m, nil
}

// allowList returns permissions.allow of a decoded document (nil when
// absent), or an error when the keys exist with shapes PersistRule cannot
// extend.
func allowList(doc map[string]any) ([]any, error) {
	// Keys that differ only in case are errors for the config loader; an
	// edit next to one would leave the user's real rules unread.
	if k := caseVariant(doc, "permissions"); k != "" {
		return nil, fmt.Errorf("key %q differs from permissions only in case", k)
	}
	if table, ok := doc["permissions"].(map[string]any); ok {
		if k := caseVariant(table, "allow"); k != "" {
			return nil, fmt.Errorf("key permissions.%s differs from allow only in case", k)
		}
	}
	p, ok := doc["permissions"]
	if !ok {
		return nil, nil
	}
	table, ok := p.(map[string]any)
	if !ok {
		return nil, errors.New("permissions is not a table")
	}
	a, ok := table["allow"]
	if !ok {
		return nil, nil
	}
	list, ok := a.([]any)
	if !ok {
		return nil, errors.New("permissions.allow is not an array")
	}
	return list, nil
}

// caseVariant returns a key of m that equals want apart from case, or "".
func caseVariant(m map[string]any, want string) string {
	for k := range m {
		if k != want && strings.EqualFold(k, want) {
			return k
		}
	}
	return ""
}

// checkEdit decodes the edited text and confirms that it equals the
// original document with exactly one rule appended to permissions.allow.
func checkEdit(before map[string]any, allowBefore []any, edited, rule string) error {
	after, err := decodeTOML([]byte(edited))
	if err != nil {
		return fmt.Errorf("edited file would not parse: %w", err)
	}
	allowAfter, err := allowList(after)
	if err != nil {
		return err
	}
	want := append(append([]any(nil), allowBefore...), rule)
	if !sameTOML(want, allowAfter) {
		return errors.New("edited allow list is not the original plus the new rule")
	}
	if !sameTOML(withoutAllow(before), withoutAllow(after)) {
		return errors.New("edit would change other settings")
	}
	return nil
}

// withoutAllow returns doc without permissions.allow, and without the
// permissions table when nothing else is in it.
func withoutAllow(doc map[string]any) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	if p, ok := doc["permissions"].(map[string]any); ok {
		rest := make(map[string]any, len(p))
		for k, v := range p {
			if k != "allow" {
				rest[k] = v
			}
		}
		if len(rest) == 0 {
			delete(out, "permissions")
		} else {
			out["permissions"] = rest
		}
	}
	return out
}

// sameTOML compares decoded TOML values. Times compare as instants with
// their offsets, and NaN equals NaN, where reflect.DeepEqual would call two
// decodings of the same text different.
func sameTOML(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameTOML(v, w) {
				return false
			}
		}
		return true
	case []map[string]any:
		y, ok := b.([]map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameTOML(x[i], y[i]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameTOML(x[i], y[i]) {
				return false
			}
		}
		return true
	case time.Time:
		y, ok := b.(time.Time)
		if !ok {
			return false
		}
		_, xo := x.Zone()
		_, yo := y.Zone()
		return x.Equal(y) && xo == yo
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.IsNaN(x) && math.IsNaN(y))
	default:
		return reflect.DeepEqual(a, b)
	}
}
