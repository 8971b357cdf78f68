package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"reasonix/core/provider"
)

// The wire structs fix the order and presence of every field. Maps are
// never used: the request body must be byte-identical for equal inputs so
// the endpoint's prompt cache can reuse the shared prefix.

type chatRequest struct {
	Model           string        `json:"model"`
	Messages        []wireMessage `json:"messages"`
	Tools           []wireTool    `json:"tools,omitempty"`
	Temperature     float64       `json:"temperature"`
	MaxTokens       int           `json:"max_tokens,omitempty"`
	ReasoningEffort string        `json:"reasoning_effort,omitempty"`
	Stream          bool          `json:"stream"`
	StreamOptions   streamOptions `json:"stream_options"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role string `json:"role"`
	// Content is a pointer so that an assistant message carrying only
	// tool calls encodes "content": null, as the API returns it, while
	// every other message always carries a string, possibly empty.
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
	Name             string         `json:"name,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string      `json:"type"`
	Function wireToolDef `json:"function"`
}

type wireToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptyParameters stands in for a tool that declares no schema; the API
// requires an object schema.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// encodeRequest builds the request body. The tools keep the caller's order
// (the tool registry already sorts them), and HTML characters are not
// escaped so the body carries the caller's text unchanged. With
// sendReasoning false no message carries reasoning_content, for endpoints
// that reject the field.
func encodeRequest(req provider.Request, model string, sendReasoning bool) ([]byte, error) {
	if req.Model != "" {
		model = req.Model
	}
	if model == "" {
		return nil, fmt.Errorf("no model configured")
	}
	cr := chatRequest{
		Model:           model,
		Messages:        wireMessages(req.Messages, sendReasoning),
		Temperature:     req.Temperature,
		MaxTokens:       max(req.MaxTokens, 0),
		ReasoningEffort: req.ReasoningEffort,
		Stream:          true,
		StreamOptions:   streamOptions{IncludeUsage: true},
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 {
			params = emptyParameters
		} else if !json.Valid(params) {
			return nil, fmt.Errorf("tool %q: parameters are not valid JSON", t.Name)
		}
		cr.Tools = append(cr.Tools, wireTool{
			Type:     "function",
			Function: wireToolDef{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cr); err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// wireMessages converts the conversation. Every assistant message carries
// its reasoning_content, in every request, whatever turn it belongs to:
// DeepSeek's thinking mode rejects a request in which a tool-calling
// assistant message has lost its reasoning, and a message whose bytes
// depended on its position (say, on whether a user message follows it)
// would change between requests and break the cached prefix. Plain answers
// keep theirs too, so that a message's encoding depends on the message
// alone; DeepSeek ignores reasoning where it does not need it.
func wireMessages(msgs []provider.Message, sendReasoning bool) []wireMessage {
	out := make([]wireMessage, len(msgs))
	for i, m := range msgs {
		content := m.Content
		w := wireMessage{
			Role:       string(m.Role),
			Content:    &content,
			ToolCallID: m.ToolCallID,
			Name:       m.Name,
		}
		if m.Role == provider.RoleAssistant {
			if m.Content == "" && len(m.ToolCalls) > 0 {
				w.Content = nil
			}
			if sendReasoning {
				w.ReasoningContent = m.ReasoningContent
			}
			for _, tc := range m.ToolCalls {
				w.ToolCalls = append(w.ToolCalls, wireToolCall{
					ID:       tc.ID,
					Type:     "function",
					Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments},
				})
			}
		}
		out[i] = w
	}
	return out
}
