package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// conversation is a tool-using exchange in DeepSeek thinking mode: a
// finished earlier turn, then a turn in progress with two tool rounds.
func conversation() []provider.Message {
	return []provider.Message{
		{Role: provider.RoleSystem, Content: "You are a coding agent. Use <tools> & be brief."},
		{Role: provider.RoleUser, Content: "What is in go.mod?"},
		{Role: provider.RoleAssistant, ReasoningContent: "old-1", ToolCalls: []provider.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"go.mod"}`}}},
		{Role: provider.RoleTool, ToolCallID: "call_1", Content: "module reasonix"},
		{Role: provider.RoleAssistant, ReasoningContent: "old-2", Content: "It declares module reasonix."},
		{Role: provider.RoleUser, Content: "Now list the files."},
		{Role: provider.RoleAssistant, ReasoningContent: "cur-1", Content: "Listing.", ToolCalls: []provider.ToolCall{{ID: "call_2", Name: "ls", Arguments: `{}`}}},
		{Role: provider.RoleTool, ToolCallID: "call_2", Content: ""},
		{Role: provider.RoleAssistant, ReasoningContent: "cur-2", ToolCalls: []provider.ToolCall{{ID: "call_3", Name: "ls", Arguments: `{"path":"core"}`}}},
		{Role: provider.RoleTool, ToolCallID: "call_3", Content: "provider/\ntool/"},
	}
}

func tools() []provider.ToolSchema {
	return []provider.ToolSchema{
		{Name: "ls", Description: "List a directory.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "noargs", Description: "Takes nothing."},
		{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage("{\n  \"type\": \"object\",\n  \"required\": [\"path\"],\n  \"properties\": {\"path\": {\"type\": \"string\"}}\n}")},
	}
}

func TestRequestGolden(t *testing.T) {
	t.Parallel()
	req := provider.Request{Messages: conversation(), Tools: tools(), Temperature: 0.2, MaxTokens: 4096, ReasoningEffort: "high"}
	got, err := encodeRequest(req, "deepseek-chat", true)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "request.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("request body differs from %s:\n%s", golden, got)
	}
}

func TestRequestShape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		req           provider.Request
		omitReasoning bool
		contains      []string
		absent        []string
	}{
		{
			name: "tool-only assistant has null content",
			req:  provider.Request{Messages: conversation()},
			contains: []string{
				`{"role":"assistant","content":null,"reasoning_content":"cur-2","tool_calls":[{"id":"call_3","type":"function","function":{"name":"ls","arguments":"{\"path\":\"core\"}"}}]}`,
				`{"role":"tool","content":"","tool_call_id":"call_2"}`,
				`{"role":"assistant","content":"Listing.","reasoning_content":"cur-1","tool_calls":`,
			},
		},
		{
			name: "reasoning of earlier user turns sent back",
			req:  provider.Request{Messages: conversation()},
			contains: []string{
				`{"role":"assistant","content":null,"reasoning_content":"old-1","tool_calls":`,
				`{"role":"assistant","content":"It declares module reasonix.","reasoning_content":"old-2"}`,
				`"reasoning_content":"cur-1"`, `"reasoning_content":"cur-2"`,
			},
		},
		{
			name:     "empty reasoning omitted",
			req:      provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: "u"}, {Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c", Name: "ls", Arguments: "{}"}}}}},
			absent:   []string{`reasoning_content`},
			contains: []string{`{"role":"assistant","content":null,"tool_calls":`},
		},
		{
			name:          "omitted reasoning sends none",
			req:           provider.Request{Messages: conversation()},
			omitReasoning: true,
			absent:        []string{`reasoning_content`, `old-1`, `cur-2`},
			contains:      []string{`{"role":"assistant","content":null,"tool_calls":[{"id":"call_3",`},
		},
		{
			name:   "optional fields omitted",
			req:    userReq("hi"),
			absent: []string{`"tools"`, `"max_tokens"`, `"reasoning_effort"`},
			contains: []string{
				`"temperature":0,`,
				`"stream":true,"stream_options":{"include_usage":true}}`,
			},
		},
		{
			name:     "request model overrides config",
			req:      provider.Request{Model: "deepseek-reasoner", Messages: []provider.Message{{Role: provider.RoleUser, Content: "x"}}},
			contains: []string{`{"model":"deepseek-reasoner",`},
		},
		{
			name:     "html not escaped",
			req:      userReq("a <b> & c"),
			contains: []string{`"content":"a <b> & c"`},
		},
		{
			name:     "tool without schema gets an empty object schema",
			req:      provider.Request{Messages: conversation(), Tools: tools()},
			contains: []string{`{"type":"function","function":{"name":"noargs","description":"Takes nothing.","parameters":{"type":"object","properties":{}}}}`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := encodeRequest(tc.req, "fake-model", !tc.omitReasoning)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.contains {
				if !bytes.Contains(b, []byte(s)) {
					t.Errorf("body lacks %s\nbody: %s", s, b)
				}
			}
			for _, s := range tc.absent {
				if bytes.Contains(b, []byte(s)) {
					t.Errorf("body has %s\nbody: %s", s, b)
				}
			}
		})
	}
}

func TestRequestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		req   provider.Request
		model string
		want  string
	}{
		{name: "no model", req: userReq("x"), want: "no model"},
		{name: "bad schema", req: provider.Request{Tools: []provider.ToolSchema{{Name: "t", Parameters: json.RawMessage(`{oops`)}}}, model: "m", want: `tool "t"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := encodeRequest(tc.req, tc.model, true); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestRequestDeterminism sends the same request twice over the wire and
// compares the bytes the server received.
func TestRequestDeterminism(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Text: "1"}, providertest.Turn{Text: "2"})
	p, _ := fakeProvider(t, testConfig(t, srv))
	req := provider.Request{Messages: conversation(), Tools: tools(), Temperature: 0.7}
	stream(t, p, req)
	stream(t, p, req)
	reqs := srv.Requests()
	if !bytes.Equal(reqs[0].Body, reqs[1].Body) {
		t.Fatalf("bodies differ:\n%s\n%s", reqs[0].Body, reqs[1].Body)
	}
	// The fake's parsed view confirms the send-back rule end to end.
	var reasoning []string
	for _, m := range reqs[0].Messages {
		if m.ReasoningContent != "" {
			reasoning = append(reasoning, m.ReasoningContent)
		}
	}
	if strings.Join(reasoning, ",") != "old-1,old-2,cur-1,cur-2" {
		t.Fatalf("reasoning sent back = %v, want [old-1 old-2 cur-1 cur-2]", reasoning)
	}
}

// TestStreamRequestErrorsReturnedEarly checks that a request that cannot
// be encoded fails in Stream without touching the network.
func TestStreamRequestErrorsReturnedEarly(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t)
	cfg := testConfig(t, srv)
	cfg.Model = ""
	p, _ := fakeProvider(t, cfg)
	if _, err := p.Stream(context.Background(), userReq("x")); err == nil {
		t.Fatal("Stream without a model succeeded")
	}
	if srv.Count() != 0 {
		t.Fatalf("requests = %d, want 0", srv.Count())
	}
}
