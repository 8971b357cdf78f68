package tui

import (
	"reasonix/tui/panel"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestRenderMarkdownHighlightsCode checks that a fenced Python block comes
// out coloured: the highlighter's embedded lexers (Python is one) and
// styles are loaded on first use (third_party/chroma), and this is that
// first use.
func TestRenderMarkdownHighlightsCode(t *testing.T) {
	out := panel.Markdown("```python\ndef main(): return None\n```\n", 80)
	if !strings.Contains(ansi.Strip(out), "def main(): return None") {
		t.Fatalf("the code is not in the output:\n%q", out)
	}
	// A keyword and an identifier get different colours only when the Python
	// lexer and a style were found.
	if n := strings.Count(out, "\x1b[38;5;"); n < 3 {
		t.Fatalf("code block has %d colour changes, want the Python lexer's tokens coloured:\n%q", n, out)
	}
}

// TestRenderMarkdownStripsHTML checks inline and block HTML in an answer:
// tags and comments go, text stays, and the text of script and style
// elements goes with them (third_party/glamour strips HTML without
// bluemonday and must drop what its strict policy dropped).
func TestRenderMarkdownStripsHTML(t *testing.T) {
	out := ansi.Strip(panel.Markdown("Use <b>bold</b> &amp; <!-- note --><i>this</i>.\n\n<div>block <script>alert(1)</script><style>p{}</style>text</div>\n", 80))
	for _, want := range []string{"bold", "& ", "this", "block", "text"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"<b>", "</i>", "<div", "alert", "p{}", "note", "&amp;"} {
		if strings.Contains(out, bad) {
			t.Errorf("output still has %q:\n%s", bad, out)
		}
	}
}
