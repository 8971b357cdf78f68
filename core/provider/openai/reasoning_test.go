package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
)

// messagesPrefix is the messages array of a request body without its
// closing bracket: what a later request of the same conversation must start
// with, byte for byte, for the prompt cache to reuse it. The bodies it is
// used on carry no tools, so temperature follows the messages.
func messagesPrefix(t *testing.T, body []byte) []byte {
	t.Helper()
	end := bytes.LastIndex(body, []byte(`],"temperature":`))
	if end < 0 {
		t.Fatalf("no messages array in %s", body)
	}
	return body[:end]
}

// lastTurnOnly applies the rule this package used to follow: reasoning
// kept only after the last user message. Tests use it to show what the
// rule costs.
func lastTurnOnly(msgs []provider.Message) []provider.Message {
	lastUser := -1
	for i, m := range msgs {
		if m.Role == provider.RoleUser {
			lastUser = i
		}
	}
	out := append([]provider.Message(nil), msgs...)
	for i := range out[:max(lastUser, 0)] {
		out[i].ReasoningContent = ""
	}
	return out
}

// TestRequestPrefixStableAcrossUserTurns encodes a request in the middle
// of a tool-using turn and the request after the next user message, and
// checks that the second starts with the first's messages unchanged.
func TestRequestPrefixStableAcrossUserTurns(t *testing.T) {
	t.Parallel()
	turn1 := []provider.Message{
		{Role: provider.RoleSystem, Content: "s"},
		{Role: provider.RoleUser, Content: "What is in go.mod?"},
		{Role: provider.RoleAssistant, ReasoningContent: "read it", ToolCalls: []provider.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"go.mod"}`}}},
		{Role: provider.RoleTool, ToolCallID: "call_1", Content: "module reasonix"},
	}
	turn2 := append(append([]provider.Message(nil), turn1...),
		provider.Message{Role: provider.RoleAssistant, ReasoningContent: "answer", Content: "It declares module reasonix."},
		provider.Message{Role: provider.RoleUser, Content: "Thanks."},
	)
	for _, omit := range []bool{false, true} {
		t.Run(fmt.Sprintf("omit=%v", omit), func(t *testing.T) {
			t.Parallel()
			first, err := encodeRequest(provider.Request{Messages: turn1}, "m", !omit)
			if err != nil {
				t.Fatal(err)
			}
			second, err := encodeRequest(provider.Request{Messages: turn2}, "m", !omit)
			if err != nil {
				t.Fatal(err)
			}
			if p := messagesPrefix(t, first); !bytes.HasPrefix(second, p) {
				t.Fatalf("the next user turn changed earlier messages:\nfirst:  %s\nsecond: %s", first, second)
			}
			if got := bytes.Contains(second, []byte(`"reasoning_content":"read it"`)); got == omit {
				t.Fatalf("second request carries the first turn's reasoning = %v, want %v:\n%s", got, !omit, second)
			}
		})
	}
}

// converse runs a two-user-turn exchange against a fake in thinking mode:
// a tool call with reasoning, its answer, then a second user message.
// prepare rewrites the conversation before each request; the first failure
// is returned, naming the request that failed.
func converse(t *testing.T, p *Provider, prepare func([]provider.Message) []provider.Message) error {
	t.Helper()
	msgs := []provider.Message{
		{Role: provider.RoleSystem, Content: "You are a coding agent."},
		{Role: provider.RoleUser, Content: "List the files."},
	}
	send := func() (result, error) {
		ch, err := p.Stream(context.Background(), provider.Request{Messages: prepare(msgs)})
		if err != nil {
			return result{}, err
		}
		r := fold(collect(t, ch))
		if r.term.Type == provider.ChunkError {
			return r, r.term.Err
		}
		return r, nil
	}
	r, err := send()
	if err != nil {
		return fmt.Errorf("request 1: %w", err)
	}
	if len(r.calls) != 1 || r.reasoning == "" {
		t.Fatalf("first reply = %+v, want one tool call with reasoning", r)
	}
	msgs = append(msgs,
		provider.Message{Role: provider.RoleAssistant, Content: r.text, ReasoningContent: r.reasoning, ToolCalls: r.calls},
		provider.Message{Role: provider.RoleTool, ToolCallID: r.calls[0].ID, Content: "a.go"},
	)
	if r, err = send(); err != nil {
		return fmt.Errorf("request 2: %w", err)
	}
	msgs = append(msgs,
		provider.Message{Role: provider.RoleAssistant, Content: r.text, ReasoningContent: r.reasoning},
		provider.Message{Role: provider.RoleUser, Content: "Anything else?"},
	)
	if _, err = send(); err != nil {
		return fmt.Errorf("request 3: %w", err)
	}
	return nil
}

func thinkingScript() []providertest.Turn {
	return []providertest.Turn{
		{Reasoning: "I should list the directory.", ToolCalls: []providertest.ToolCall{{Name: "ls", Arguments: `{}`}}},
		{Reasoning: "One file.", Text: "There is a.go."},
		{Reasoning: "Nothing more.", Text: "No."},
	}
}

func unchanged(m []provider.Message) []provider.Message { return m }

// TestThinkingModeMultiTurn drives the client through two user turns with
// tools against a fake as strict as DeepSeek's thinking mode.
func TestThinkingModeMultiTurn(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t, providertest.WithThinkingMode())
	srv.Push(thinkingScript()...)
	p, _ := fakeProvider(t, testConfig(t, srv))
	if err := converse(t, p, unchanged); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if got := reqs[2].Messages[2].ReasoningContent; got != "I should list the directory." {
		t.Errorf("the tool call's reasoning in the second user turn = %q", got)
	}
	for i := 1; i < len(reqs); i++ {
		if prev := messagesPrefix(t, reqs[i-1].Body); !bytes.HasPrefix(reqs[i].Body, prev) {
			t.Errorf("request %d does not extend request %d byte for byte:\n%s\n%s", i+1, i, reqs[i-1].Body, reqs[i].Body)
		}
	}
}

// TestThinkingModeRejects shows that the fake answers 400 where DeepSeek
// does: to the former last-turn-only rule at the second user turn, and to
// a provider that sends no reasoning as soon as a tool result goes back.
func TestThinkingModeRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		omit    bool
		prepare func([]provider.Message) []provider.Message
		want    string // which request fails, and where
	}{
		{name: "reasoning dropped at the next user turn", prepare: lastTurnOnly, want: "request 3"},
		{name: "send_reasoning off", omit: true, prepare: unchanged, want: "request 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.Start(t, providertest.WithThinkingMode())
			srv.Push(thinkingScript()...)
			cfg := testConfig(t, srv)
			cfg.OmitReasoning = tc.omit
			p, _ := fakeProvider(t, cfg)
			err := converse(t, p, tc.prepare)
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest {
				t.Fatalf("err = %v, want a 400", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want+":") ||
				!strings.Contains(se.Body, "Missing `reasoning_content` field in the assistant message at message index 2.") {
				t.Fatalf("err = %v, want %s rejected for message index 2", err, tc.want)
			}
		})
	}
}
