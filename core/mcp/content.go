package mcp

import (
	"fmt"
	"strings"
)

// renderContent turns content blocks into text a model can read. Binary
// payloads never reach the model: they become a placeholder naming the
// kind, MIME type and decoded size.
func renderContent(blocks []Content) string {
	parts := make([]string, 0, len(blocks))
	for _, c := range blocks {
		parts = append(parts, renderBlock(c))
	}
	return strings.Join(parts, "\n")
}

func renderBlock(c Content) string {
	switch c.Type {
	case "text":
		return c.Text
	case "image", "audio":
		return fmt.Sprintf("[%s: %s, %s]", c.Type, orUnknown(c.MIMEType), humanSize(base64Len(c.Data)))
	case "resource_link":
		var b strings.Builder
		b.WriteString("[resource link: ")
		b.WriteString(c.URI)
		if name := firstNonEmpty(c.Title, c.Name); name != "" && name != c.URI {
			fmt.Fprintf(&b, " (%s)", name)
		}
		if c.MIMEType != "" {
			fmt.Fprintf(&b, ", %s", c.MIMEType)
		}
		b.WriteString("]")
		if c.Description != "" {
			b.WriteString(" ")
			b.WriteString(c.Description)
		}
		return b.String()
	case "resource":
		if c.Resource == nil {
			return "[resource: empty]"
		}
		return renderResource(*c.Resource)
	}
	return fmt.Sprintf("[%s content]", orUnknown(c.Type))
}

// renderResource renders one resource's contents: its URI, then its text;
// a binary resource is a placeholder.
func renderResource(r ResourceContents) string {
	if r.Blob != "" || r.Text == "" && r.MIMEType != "" && !strings.HasPrefix(r.MIMEType, "text/") {
		return fmt.Sprintf("[resource: %s, %s, %s]", r.URI, orUnknown(r.MIMEType), humanSize(base64Len(r.Blob)))
	}
	return fmt.Sprintf("[resource: %s]\n%s", r.URI, r.Text)
}

// Text renders every resource's contents, separated by blank lines.
func (r ReadResourceResult) Text() string {
	parts := make([]string, 0, len(r.Contents))
	for _, c := range r.Contents {
		parts = append(parts, renderResource(c))
	}
	return strings.Join(parts, "\n\n")
}

// base64Len is the decoded length of a standard or URL-safe base64 string,
// padded or not, ignoring whitespace.
func base64Len(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '=', ' ', '\n', '\r', '\t':
		default:
			n++
		}
	}
	return n * 3 / 4
}

func humanSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
