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

// TestRenderMarkdownGoldmarkPatterns renders what goldmark parses with the
// regular expressions and the case-folding map third_party/goldmark builds
// on first use instead of at init: a table with aligned columns, a task
// list, a bare URL (linkify), an HTML block and a link reference whose
// label matches only after Unicode case folding. Each would come out as
// plain source text if its pattern were missing or wrong.
func TestRenderMarkdownGoldmarkPatterns(t *testing.T) {
	src := strings.Join([]string{
		"| name | size |",
		"|:-----|-----:|",
		"| alpha | 10 |",
		"",
		"- [x] done item",
		"- [ ] open item",
		"",
		"see https://example.com/path for more",
		"",
		"<div>",
		"inside the block",
		"</div>",
		"",
		"a [STRASSE][] link",
		"",
		"[straße]: https://example.org/ref",
		"",
	}, "\n")
	out := ansi.Strip(panel.Markdown(src, 80))
	for _, want := range []string{"alpha", "10", "[✓] done item", "open item", "https://example.com/path", "inside the block", "STRASSE", "https://example.org/ref"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Parsed, the delimiter row, the source's task marker, the tags and
	// the link definition are gone from the text (glamour draws a done
	// task as [✓]).
	for _, bad := range []string{"|:-----|", "-----:", "[x]", "<div>", "[straße]:", "[STRASSE][]"} {
		if strings.Contains(out, bad) {
			t.Errorf("output still has the source %q, so it was not parsed:\n%s", bad, out)
		}
	}
}
