package provider

import (
	"context"
	"encoding/json"
)

// Role is the author of a Message, as the OpenAI chat format names it.
type Role string

// The roles a Message can have.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation. It is also the transcript record,
// so its JSON form is stable: changing a tag breaks saved sessions and the
// byte-identical prompt prefix the provider cache depends on.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ReasoningContent is the model's visible reasoning (DeepSeek's
	// reasoning_content). It is kept so it can be sent back when an API
	// requires it for tool-call continuations.
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
	Name             string     `json:"name,omitempty"`
}

// ToolCall is one complete call the model asked for. Arguments is the raw
// JSON text exactly as the model produced it.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSchema describes a tool to the model. Parameters is a canonical JSON
// Schema (see the tool package) so that requests stay byte-identical.
type ToolSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one chat completion request. Model overrides the provider's
// configured model when set; ReasoningEffort is passed through to APIs that
// accept it and omitted when empty.
type Request struct {
	Model           string
	Messages        []Message
	Tools           []ToolSchema
	Temperature     float64
	MaxTokens       int
	ReasoningEffort string
}

// ChunkType tells which field of a Chunk is set.
type ChunkType int

// The kinds of chunk a stream carries. Done and Error are terminal.
const (
	ChunkText ChunkType = iota
	ChunkToolCall
	ChunkDone
	ChunkError
	ChunkReasoning
	ChunkUsage
)

// String names the chunk type for logs and test failures.
func (t ChunkType) String() string {
	switch t {
	case ChunkText:
		return "text"
	case ChunkToolCall:
		return "tool_call"
	case ChunkDone:
		return "done"
	case ChunkError:
		return "error"
	case ChunkReasoning:
		return "reasoning"
	case ChunkUsage:
		return "usage"
	}
	return "unknown"
}

// Chunk is one item of a stream.
type Chunk struct {
	Type ChunkType
	// Text is set for ChunkText and ChunkReasoning.
	Text string
	// ToolCall is set for ChunkToolCall; it is always complete.
	ToolCall *ToolCall
	// Usage is set for ChunkUsage.
	Usage *Usage
	// FinishReason is set on ChunkDone when the API reported one
	// ("stop", "tool_calls", "length", ...).
	FinishReason string
	// Err is set for ChunkError.
	Err error
}

// Usage counts tokens as the OpenAI and DeepSeek APIs report them.
// CacheHitTokens and CacheMissTokens split PromptTokens: DeepSeek reports
// prompt_cache_hit_tokens / prompt_cache_miss_tokens, OpenAI reports
// prompt_tokens_details.cached_tokens (the miss count is then derived).
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CacheHitTokens   int `json:"cache_hit_tokens"`
	CacheMissTokens  int `json:"cache_miss_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens"`
}

// Add accumulates o into u, for totals across turns.
func (u *Usage) Add(o Usage) {
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.TotalTokens += o.TotalTokens
	u.CacheHitTokens += o.CacheHitTokens
	u.CacheMissTokens += o.CacheMissTokens
	u.ReasoningTokens += o.ReasoningTokens
}

// Provider streams chat completions from one vendor endpoint.
type Provider interface {
	// Name is the configured instance name, e.g. "deepseek".
	Name() string
	// Stream starts a completion. An error is returned only when the
	// request could not be started; failures after that arrive as a
	// ChunkError on the channel.
	Stream(ctx context.Context, req Request) (<-chan Chunk, error)
}
