package mcp

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestCallToolResultText(t *testing.T) {
	t.Parallel()
	png := base64.StdEncoding.EncodeToString(make([]byte, 2048))
	wav := base64.StdEncoding.EncodeToString(make([]byte, 10))
	size := int64(99)
	tests := []struct {
		name string
		res  CallToolResult
		want string
	}{
		{name: "text", res: CallToolResult{Content: []Content{{Type: "text", Text: "a"}, {Type: "text", Text: "b\nc"}}}, want: "a\nb\nc"},
		{name: "image", res: CallToolResult{Content: []Content{{Type: "image", MIMEType: "image/png", Data: png}}}, want: "[image: image/png, 2.0 KB]"},
		{name: "audio", res: CallToolResult{Content: []Content{{Type: "audio", MIMEType: "audio/wav", Data: wav}}}, want: "[audio: audio/wav, 10 bytes]"},
		{name: "image without type", res: CallToolResult{Content: []Content{{Type: "image"}}}, want: "[image: unknown type, 0 bytes]"},
		{name: "resource link", res: CallToolResult{Content: []Content{{Type: "resource_link", URI: "file:///a.txt", Name: "a.txt", MIMEType: "text/plain", Description: "the file", Size: &size}}}, want: "[resource link: file:///a.txt (a.txt), text/plain] the file"},
		{name: "embedded text resource", res: CallToolResult{Content: []Content{{Type: "resource", Resource: &ResourceContents{URI: "mem://x", MIMEType: "text/plain", Text: "hello"}}}}, want: "[resource: mem://x]\nhello"},
		{name: "embedded blob resource", res: CallToolResult{Content: []Content{{Type: "resource", Resource: &ResourceContents{URI: "mem://b", MIMEType: "application/zip", Blob: wav}}}}, want: "[resource: mem://b, application/zip, 10 bytes]"},
		{name: "empty resource", res: CallToolResult{Content: []Content{{Type: "resource"}}}, want: "[resource: empty]"},
		{name: "unknown block", res: CallToolResult{Content: []Content{{Type: "hologram"}}}, want: "[hologram content]"},
		{name: "structured only", res: CallToolResult{StructuredContent: []byte(`{ "t": 21 }`)}, want: `{"t":21}`},
		{name: "structured beside content", res: CallToolResult{Content: []Content{{Type: "text", Text: "21 degrees"}}, StructuredContent: []byte(`{"t":21}`)}, want: "21 degrees"},
		{name: "mixed", res: CallToolResult{Content: []Content{{Type: "text", Text: "see:"}, {Type: "image", MIMEType: "image/gif", Data: "R0lGOD=="}}}, want: "see:\n[image: image/gif, 4 bytes]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.res.Text()
			if got != tt.want {
				t.Errorf("Text() = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, png[:20]) {
				t.Error("binary payload leaked into the text")
			}
		})
	}
}

func TestBase64Len(t *testing.T) {
	t.Parallel()
	for n := range 10 {
		b := make([]byte, n)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
			if got := base64Len(enc.EncodeToString(b)); got != n {
				t.Errorf("base64Len of %d bytes = %d", n, got)
			}
		}
	}
}
