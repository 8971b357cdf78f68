package memory

import (
	"strings"
	"time"
)

// Memory is one saved fact.
type Memory struct {
	// Name is the memory's slug and its file name without .md.
	Name string
	// Description is a one-line summary shown in lists.
	Description string
	// Scope is whose memory it is.
	Scope Scope
	// Updated is when it was last saved; zero when the file does not say.
	Updated time.Time
	// Body is the fact itself, Markdown, without surrounding blank lines.
	Body string
}

// Ref is the memory's scope-qualified name, such as project/db-host, the
// form the tools show and the model can pass back.
func (m Memory) Ref() string { return string(m.Scope) + "/" + m.Name }

// frontmatterDelim opens and closes the frontmatter block.
const frontmatterDelim = "---"

// Format renders m as the file content Parse reads back: a frontmatter of
// name, description, scope and updated (RFC 3339, UTC), then the body. The
// description is folded onto one line so it cannot end the block early.
func Format(m Memory) []byte {
	var b strings.Builder
	b.WriteString(frontmatterDelim + "\n")
	b.WriteString("name: " + m.Name + "\n")
	if d := oneLine(m.Description); d != "" {
		b.WriteString("description: " + d + "\n")
	}
	b.WriteString("scope: " + string(m.Scope) + "\n")
	if !m.Updated.IsZero() {
		b.WriteString("updated: " + m.Updated.UTC().Format(time.RFC3339) + "\n")
	}
	b.WriteString(frontmatterDelim + "\n")
	if body := strings.TrimSpace(m.Body); body != "" {
		b.WriteString(body + "\n")
	}
	return []byte(b.String())
}

// Parse reads a memory file. It is lenient because people edit these files
// by hand: CRLF line ends are accepted, unknown keys and an unreadable
// updated time are ignored, and a file without a complete frontmatter is
// all body. The caller decides name and scope from where the file is; the
// values found here are only what the file claims.
func Parse(data []byte) Memory {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	s = strings.TrimPrefix(s, "\ufeff")
	var m Memory
	head, body, ok := splitFrontmatter(s)
	if !ok {
		m.Body = strings.TrimSpace(s)
		return m
	}
	m.Body = strings.TrimSpace(body)
	for _, line := range strings.Split(head, "\n") {
		key, val, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		val = strings.TrimSpace(val)
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "name":
			m.Name = val
		case "description":
			m.Description = val
		case "scope":
			m.Scope = Scope(val)
		case "updated":
			if t, err := time.Parse(time.RFC3339, val); err == nil {
				m.Updated = t.UTC()
			}
		}
	}
	return m
}

// splitFrontmatter separates the frontmatter lines from the body. ok is
// false when s does not open with a delimiter line or never closes it.
func splitFrontmatter(s string) (head, body string, ok bool) {
	rest, found := strings.CutPrefix(s, frontmatterDelim+"\n")
	if !found {
		return "", "", false
	}
	if after, found := strings.CutPrefix(rest, frontmatterDelim); found && (after == "" || after[0] == '\n') {
		return "", after, true
	}
	i := strings.Index(rest, "\n"+frontmatterDelim)
	for i >= 0 {
		after := rest[i+1+len(frontmatterDelim):]
		if after == "" || after[0] == '\n' {
			return rest[:i], after, true
		}
		next := strings.Index(rest[i+1:], "\n"+frontmatterDelim)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return "", "", false
}

// oneLine folds every run of whitespace, newlines included, into a space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
