package tui

import (
	"strings"
	"testing"

	"reasonix/core/provider"
)

// TestDrawEarlier: a resumed conversation opens with its last turns drawn
// (the user's messages, the answers, a line per tool call), under a line
// saying how many turns there were.
func TestDrawEarlier(t *testing.T) {
	m := testModel(t, 80, 24)
	var hist []provider.Message
	hist = append(hist, provider.Message{Role: provider.RoleSystem, Content: "sys"})
	for _, turn := range []string{"one", "two", "three", "four"} {
		hist = append(hist,
			provider.Message{Role: provider.RoleUser, Content: "question " + turn},
			provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c", Name: "read_file", Arguments: `{"path":"` + turn + `.go"}`}}},
			provider.Message{Role: provider.RoleTool, ToolCallID: "c", Content: "file text"},
			provider.Message{Role: provider.RoleAssistant, Content: "answer " + turn})
	}
	m.drawEarlier(hist)
	got := frame(m)
	for _, want := range []string{"4 turns; the last 3", "question two", "read_file", "three.go", "answer four", "── continued ──"} {
		if !strings.Contains(got, want) {
			t.Errorf("the drawn conversation lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"question one", "sys", "file text"} {
		if strings.Contains(got, not) {
			t.Errorf("the drawn conversation shows %q:\n%s", not, got)
		}
	}
}
