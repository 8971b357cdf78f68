package providertest

import (
	"encoding/json"
	"net/http"
	"time"
)

// Request is one recorded chat request: the raw bytes as they arrived and a
// parsed view for assertions. It is a snapshot; nothing in it changes after
// it is recorded.
type Request struct {
	// Seq is the 0-based arrival order among chat requests.
	Seq     int
	Arrived time.Time
	Method  string
	Path    string
	Header  http.Header
	Body    []byte

	// The parsed view. ParseError is set, and the rest left zero, when
	// the body is not a JSON object.
	Model           string
	Messages        []Message
	Tools           []string
	Stream          bool
	IncludeUsage    bool
	Temperature     *float64
	MaxTokens       int
	ReasoningEffort string
	ParseError      string

	// cacheHit is the prompt tokens WithPrefixCache found cached.
	cacheHit int
	// tools is the request's tools array as sent, part of every cached
	// prefix.
	tools json.RawMessage
}

// Message is the parsed view of one request message. Content joins the text
// parts when the message uses the array form.
type Message struct {
	Role             string
	Content          string
	ReasoningContent string
	ToolCalls        []ToolCall
	ToolCallID       string
	Name             string
}

// FirstUser returns the content of the first user message, which is what a
// responder usually keys on to tell concurrent callers apart.
func (r Request) FirstUser() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// LastUser returns the content of the last user message.
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Last returns the final message of the request, or the zero Message.
func (r Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// wireRequest is the subset of the chat request the fake understands.
type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role             string          `json:"role"`
		Content          json.RawMessage `json:"content"`
		ReasoningContent string          `json:"reasoning_content"`
		ToolCalls        []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
		Name       string `json:"name"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Temperature     *float64 `json:"temperature"`
	MaxTokens       int      `json:"max_tokens"`
	ReasoningEffort string   `json:"reasoning_effort"`
}

// parse fills the parsed view of r from its body.
func (r *Request) parse() {
	var w wireRequest
	if err := json.Unmarshal(r.Body, &w); err != nil {
		r.ParseError = err.Error()
		return
	}
	r.Model = w.Model
	r.Stream = w.Stream
	r.IncludeUsage = w.StreamOptions != nil && w.StreamOptions.IncludeUsage
	r.Temperature = w.Temperature
	r.MaxTokens = w.MaxTokens
	r.ReasoningEffort = w.ReasoningEffort
	for _, t := range w.Tools {
		r.Tools = append(r.Tools, t.Function.Name)
	}
	var raw struct {
		Tools json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(r.Body, &raw) == nil {
		r.tools = raw.Tools
	}
	for _, m := range w.Messages {
		pm := Message{
			Role:             m.Role,
			Content:          contentText(m.Content),
			ReasoningContent: m.ReasoningContent,
			ToolCallID:       m.ToolCallID,
			Name:             m.Name,
		}
		for _, tc := range m.ToolCalls {
			pm.ToolCalls = append(pm.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		r.Messages = append(r.Messages, pm)
	}
}

// contentText reads a message content that is a string, null, or an array
// of typed parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		for _, p := range parts {
			if p.Type == "text" {
				s += p.Text
			}
		}
	}
	return s
}
