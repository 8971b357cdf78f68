package session

import (
	"testing"

	"reasonix/core/provider"
)

func TestOpenCalls(t *testing.T) {
	call := func(id string) provider.ToolCall { return provider.ToolCall{ID: id, Name: "ls"} }
	asst := func(ids ...string) provider.Message {
		m := provider.Message{Role: provider.RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, call(id))
		}
		return m
	}
	res := func(id string) provider.Message { return provider.Message{Role: provider.RoleTool, ToolCallID: id} }
	user := provider.Message{Role: provider.RoleUser, Content: "hi"}
	tests := []struct {
		name string
		msgs []provider.Message
		want []string
	}{
		{"empty", nil, nil},
		{"no calls", []provider.Message{user, asst()}, nil},
		{"all answered", []provider.Message{user, asst("a", "b"), res("b"), res("a")}, nil},
		{"none answered", []provider.Message{user, asst("a", "b")}, []string{"a", "b"}},
		{"one missing", []provider.Message{user, asst("a", "b", "c"), res("a"), res("c")}, []string{"b"}},
		{"earlier step closed, last open", []provider.Message{user, asst("a"), res("a"), asst("b")}, []string{"b"}},
		{"answer to an earlier step does not count", []provider.Message{user, asst("a"), asst("b"), res("a")}, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := OpenCalls(tt.msgs)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i].ID != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}
