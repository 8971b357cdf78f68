package skill

import (
	"strings"
	"testing"
)

// FuzzParse checks that no SKILL.md makes Parse panic, and that whatever it
// accepts has a usable name and a trimmed body.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"body only",
		"---\nname: a\nrunAs: subagent\n---\nbody",
		"---\ndescription: \"q\\\"x\" # c\nmodel: 'it''s'\n---\n",
		"---\ntools: [a, 'b']\n---\n",
		"---\r\nname: w\r\n---\r\n",
		"---\nname: \"\\u00e9\"\n---\n",
		"---\n",
	} {
		f.Add([]byte(seed), "dir")
	}
	f.Fuzz(func(t *testing.T, data []byte, dir string) {
		s, err := Parse(data, dir)
		if err != nil {
			return
		}
		if err := validName(s.Name); err != nil {
			t.Fatalf("accepted skill has a bad name: %v", err)
		}
		if s.Body != strings.TrimSpace(s.Body) {
			t.Fatalf("body not trimmed: %q", s.Body)
		}
		if s.Invocation != InvocationAuto && s.Invocation != InvocationManual {
			t.Fatalf("invocation %q", s.Invocation)
		}
	})
}
