package command

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "body", "---\n---\nbody", "---\ndescription: d\nargument-hint: [x]\n---\nB $1",
		"---\nno colon\n---\n", "---\nunterminated", "\ufeff---\r\nk: 'v'\r\n---\r\nb", "---\n:\n---\nx",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse([]byte(s))
		if err != nil {
			if c != (Command{}) {
				t.Fatalf("error %v with a command %+v", err, c)
			}
			return
		}
		if c.Body == "" || c.Body != strings.TrimSpace(c.Body) {
			t.Fatalf("body %q", c.Body)
		}
		if !strings.Contains(strings.ReplaceAll(s, "\r\n", "\n"), c.Body) {
			t.Fatalf("body %q not in the file %q", c.Body, s)
		}
		if strings.Contains(c.Description, "\n") || strings.Contains(c.ArgumentHint, "\n") {
			t.Fatalf("multi-line field %+v", c)
		}
	})
}

func FuzzRender(f *testing.F) {
	for _, s := range [][2]string{{"$ARGUMENTS", "a b"}, {"$1$2$$3", "x"}, {"$", ""}, {"$$$", "$"}, {"$9999999999999", "a"}, {"plain", "args"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, body, args string) {
		out := Command{Body: body}.Render(args)
		if !strings.Contains(body, "$") && strings.Fields(args) == nil && out != body {
			t.Fatalf("Render changed a body without placeholders: %q -> %q", body, out)
		}
		if utf8.ValidString(body) && utf8.ValidString(args) && !utf8.ValidString(out) {
			t.Fatalf("Render broke UTF-8: %q %q -> %q", body, args, out)
		}
		// Without any $ there is nothing to substitute, so the body is
		// kept whole and the arguments follow it.
		if !strings.Contains(body, "$") && !strings.HasPrefix(out, body) {
			t.Fatalf("body lost: %q -> %q", body, out)
		}
	})
}
