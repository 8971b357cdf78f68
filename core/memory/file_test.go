package memory

import (
	"strings"
	"testing"
	"time"
)

func TestFormatParseRoundTrip(t *testing.T) {
	t.Parallel()
	when := time.Date(2026, 12, 1, 12, 30, 0, 0, time.UTC)
	tests := []struct {
		name string
		m    Memory
	}{
		{"full", Memory{Name: "db-host", Description: "Staging database host", Scope: Project, Updated: when,
			Body: "The staging DB is at db.internal:5432."}},
		{"body with delimiters", Memory{Name: "x", Scope: User, Updated: when,
			Body: "---\nnot: frontmatter\n---\n\n- a list"}},
		{"no description, no time", Memory{Name: "y", Scope: Project, Body: "fact"}},
		{"empty body", Memory{Name: "z", Scope: Project, Description: "d"}},
		{"unicode", Memory{Name: "zh", Scope: User, Description: "偏好", Body: "用户喜欢简洁的回答。"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Parse(Format(tt.m))
			if got != tt.m {
				t.Fatalf("Parse(Format(m)) = %+v, want %+v\nfile:\n%s", got, tt.m, Format(tt.m))
			}
		})
	}
}

func TestFormatFoldsDescription(t *testing.T) {
	t.Parallel()
	data := Format(Memory{Name: "x", Scope: Project, Description: "two\n---\nlines", Body: "b"})
	if m := Parse(data); m.Description != "two --- lines" || m.Body != "b" {
		t.Fatalf("parsed %+v from:\n%s", m, data)
	}
}

func TestParseLenient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want Memory
	}{
		{"no frontmatter", "just a fact\n", Memory{Body: "just a fact"}},
		{"unclosed frontmatter", "---\nname: x\nbody", Memory{Body: "---\nname: x\nbody"}},
		{"crlf", "---\r\nname: x\r\ndescription: d\r\n---\r\nline1\r\nline2\r\n", Memory{Name: "x", Description: "d", Body: "line1\nline2"}},
		{"bom", "\ufeff---\nname: x\n---\nb", Memory{Name: "x", Body: "b"}},
		{"empty frontmatter", "---\n---\nb", Memory{Body: "b"}},
		{"bad time and unknown keys", "---\nupdated: yesterday\ncolour: blue\nDescription: a: b\n---\nb", Memory{Description: "a: b", Body: "b"}},
		{"delimiter-like line in head", "---\nname: x\n---more\n---\nb", Memory{Name: "x", Body: "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Parse([]byte(tt.in)); got != tt.want {
				t.Fatalf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzParse: any file content parses without panicking, and a memory
// built from valid parts survives Format and Parse unchanged.
func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: x\n---\nbody"), "db-host", "desc", "body")
	f.Add([]byte("---\r\n---"), "a", "", "---\n---")
	f.Add([]byte("---\n"), "z_1", "a\nb", "")
	f.Fuzz(func(t *testing.T, data []byte, name, desc, body string) {
		_ = Parse(data)
		if ValidateName(name) != nil {
			return
		}
		m := Memory{Name: name, Description: oneLine(desc), Scope: User, Body: strings.TrimSpace(strings.ReplaceAll(body, "\r\n", "\n"))}
		if strings.HasPrefix(m.Body, "\ufeff") || strings.Contains(m.Body, "\r") {
			return // not what Save writes: a body is trimmed text with \n line ends
		}
		if got := Parse(Format(m)); got != m {
			t.Fatalf("round trip: got %+v, want %+v", got, m)
		}
	})
}
