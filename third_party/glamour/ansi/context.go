package ansi

import (
	"html"
	"strings"

	xhtml "golang.org/x/net/html" // reasonix: instead of bluemonday
)

// RenderContext holds the current rendering options and state.
type RenderContext struct {
	options Options

	blockStack *BlockStack
	table      *TableElement
	// reasonix: no bluemonday policy here; SanitizeHTML calls stripTags.
}

// NewRenderContext returns a new RenderContext.
func NewRenderContext(options Options) RenderContext {
	return RenderContext{
		options:    options,
		blockStack: &BlockStack{},
		table:      &TableElement{},
		// reasonix: no stripper to build.
	}
}

// SanitizeHTML sanitizes HTML content.
func (ctx RenderContext) SanitizeHTML(s string, trimSpaces bool) string {
	s = stripTags(s) // reasonix: was bluemonday's StrictPolicy
	if trimSpaces {
		s = strings.TrimSpace(s)
	}

	return html.UnescapeString(s)
}

// skipContent are the elements whose text bluemonday's strict policy
// drops along with their tags. reasonix: stripTags replaces that policy,
// whose package compiled dozens of regular expressions at init in every
// program linking glamour.
var skipContent = map[string]bool{
	"frame": true, "frameset": true, "iframe": true, "noembed": true,
	"noframes": true, "noscript": true, "nostyle": true, "object": true,
	"script": true, "style": true, "title": true,
}

// stripTags returns the text of HTML fragment s without its tags and
// comments, escaped as HTML (as bluemonday's Sanitize returned it).
// reasonix: added.
func stripTags(s string) string {
	var b strings.Builder
	z := xhtml.NewTokenizer(strings.NewReader(s))
	skip := ""
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			return b.String()
		case xhtml.TextToken:
			if skip == "" {
				b.WriteString(html.EscapeString(string(z.Text())))
			}
		case xhtml.StartTagToken:
			if name, _ := z.TagName(); skip == "" && skipContent[string(name)] {
				skip = string(name)
			}
		case xhtml.EndTagToken:
			if name, _ := z.TagName(); string(name) == skip {
				skip = ""
			}
		}
	}
}
