package skill

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxNameLen bounds a skill name; names appear in commands and listings.
const maxNameLen = 64

// Parse reads the contents of a SKILL.md. defaultName is the skill's name
// when the frontmatter sets none (the directory name). Source and Path are
// left for the caller to fill.
//
// The frontmatter is optional. When present it opens with a line "---" and
// closes with the next line "---"; between them each line is "key: value",
// a blank line or a "#" comment. A value may be double-quoted (with Go/JSON
// style escapes), single-quoted (” is a quote) or plain, where " #" starts
// a comment. Nested YAML (indented lines, lists, block scalars) is refused
// rather than misread.
func Parse(data []byte, defaultName string) (Skill, error) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	s := Skill{Name: defaultName, Invocation: InvocationAuto}

	front, body, ok, err := splitFrontmatter(text)
	if err != nil {
		return Skill{}, err
	}
	s.Body = strings.TrimSpace(body)
	if ok {
		fields, err := parseFields(front)
		if err != nil {
			return Skill{}, err
		}
		if err := s.apply(fields); err != nil {
			return Skill{}, err
		}
	}
	if err := validName(s.Name); err != nil {
		return Skill{}, err
	}
	return s, nil
}

// splitFrontmatter separates the frontmatter lines from the body. ok is
// false when the text has no frontmatter; an opening fence without a
// closing one is an error.
func splitFrontmatter(text string) (front []string, body string, ok bool, err error) {
	first, rest, _ := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return nil, text, false, nil
	}
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if strings.TrimRight(line, " \t") == "---" {
			return front, rest, true, nil
		}
		front = append(front, line)
	}
	return nil, "", false, errors.New("frontmatter: no closing --- line")
}

// field is one frontmatter entry in file order.
type field struct {
	key, value string
	line       int
}

func parseFields(lines []string) ([]field, error) {
	var out []field
	seen := map[string]int{}
	for i, line := range lines {
		n := i + 2 // the opening fence is line 1
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, fmt.Errorf("frontmatter line %d: indented lines are not supported; keep each value on one line", n)
		}
		if strings.HasPrefix(trimmed, "- ") || trimmed == "-" {
			return nil, fmt.Errorf("frontmatter line %d: lists are not supported; write a comma-separated value", n)
		}
		key, raw, found := strings.Cut(line, ":")
		key = strings.TrimSpace(key)
		if !found || key == "" || strings.ContainsAny(key, " \t\"'") {
			return nil, fmt.Errorf("frontmatter line %d: want key: value, got %q", n, trimmed)
		}
		raw = strings.TrimSpace(raw)
		value, err := parseValue(raw)
		if err != nil {
			return nil, fmt.Errorf("frontmatter line %d: %s: %w", n, key, err)
		}
		quoted := strings.HasPrefix(raw, `"`) || strings.HasPrefix(raw, "'")
		if !quoted && blockIndicator(value) {
			return nil, fmt.Errorf("frontmatter line %d: %s: block values are not supported; keep the value on one line", n, key)
		}
		norm := normKey(key)
		if prev, dup := seen[norm]; dup {
			return nil, fmt.Errorf("frontmatter line %d: %s is already set on line %d", n, key, prev)
		}
		seen[norm] = n
		out = append(out, field{key: key, value: value, line: n})
	}
	return out, nil
}

// parseValue unquotes a value and drops a trailing comment.
func parseValue(v string) (string, error) {
	switch {
	case v == "":
		return "", nil
	case v[0] == '"':
		end := closingDoubleQuote(v)
		if end < 0 {
			return "", errors.New("unterminated double-quoted value")
		}
		if err := onlyComment(v[end+1:]); err != nil {
			return "", err
		}
		s, err := strconv.Unquote(v[:end+1])
		if err != nil {
			return "", fmt.Errorf("bad double-quoted value %s: %w", v[:end+1], err)
		}
		return s, nil
	case v[0] == '\'':
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			if v[i] != '\'' {
				b.WriteByte(v[i])
				continue
			}
			if i+1 < len(v) && v[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			if err := onlyComment(v[i+1:]); err != nil {
				return "", err
			}
			return b.String(), nil
		}
		return "", errors.New("unterminated single-quoted value")
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	if i := strings.Index(v, "\t#"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v), nil
}

// blockIndicator reports a YAML block scalar header such as "|", ">-" or
// "|2+", whose value would follow on indented lines.
func blockIndicator(v string) bool {
	if v == "" || (v[0] != '|' && v[0] != '>') {
		return false
	}
	return strings.Trim(v[1:], "-+0123456789") == ""
}

// closingDoubleQuote returns the index of the quote ending the string that
// starts at v[0], honouring backslash escapes, or -1.
func closingDoubleQuote(v string) int {
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// onlyComment accepts what may follow a quoted value: nothing or a comment.
func onlyComment(rest string) error {
	rest = strings.TrimSpace(rest)
	if rest == "" || strings.HasPrefix(rest, "#") {
		return nil
	}
	return fmt.Errorf("unexpected text %q after the closing quote", rest)
}

// normKey folds the spellings people use for one key (runAs, run_as,
// run-as, RunAs) together.
func normKey(k string) string {
	k = strings.ToLower(k)
	k = strings.ReplaceAll(k, "_", "")
	return strings.ReplaceAll(k, "-", "")
}

// apply sets the recognised keys and keeps the rest in Extra.
func (s *Skill) apply(fields []field) error {
	for _, f := range fields {
		switch normKey(f.key) {
		case "name":
			if f.value != "" {
				s.Name = f.value
			}
		case "description":
			s.Description = f.value
		case "runas":
			s.RunAs = f.value
		case "model":
			s.Model = f.value
		case "effort":
			s.Effort = f.value
		case "invocation":
			switch Invocation(strings.ToLower(f.value)) {
			case "", InvocationAuto:
				s.Invocation = InvocationAuto
			case InvocationManual:
				s.Invocation = InvocationManual
			default:
				return fmt.Errorf("frontmatter line %d: invocation %q: want auto or manual", f.line, f.value)
			}
		case "tools", "allowedtools":
			s.Tools = splitList(f.value)
		default:
			if s.Extra == nil {
				s.Extra = map[string]string{}
			}
			s.Extra[f.key] = f.value
		}
	}
	return nil
}

// splitList reads "a, b" or the flow form "[a, b]", dropping quotes around
// items and empty items.
func splitList(v string) []string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
		v = v[1 : len(v)-1]
	}
	var out []string
	for _, item := range strings.Split(v, ",") {
		item = strings.Trim(strings.TrimSpace(item), `"'`)
		if item != "" {
			out = append(out, item)
		}
	}
	return out
}

// validName accepts names that are safe as a directory name, a command
// argument and a config map key: letters, digits, '.', '_' and '-',
// starting with a letter or digit.
func validName(name string) error {
	if name == "" {
		return errors.New("the skill has no name")
	}
	if len(name) > maxNameLen {
		return fmt.Errorf("name %q is longer than %d characters", name, maxNameLen)
	}
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			i > 0 && (c == '.' || c == '_' || c == '-')
		if !ok {
			return fmt.Errorf("name %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", name)
		}
	}
	return nil
}
