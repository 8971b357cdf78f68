package providertest

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Dialect selects which vendor's streaming details the fake imitates where
// OpenAI-compatible APIs differ.
type Dialect string

const (
	// DeepSeek streams reasoning as reasoning_content, puts usage in the
	// chunk that carries finish_reason, and reports cache use as
	// prompt_cache_hit_tokens / prompt_cache_miss_tokens (plus the OpenAI
	// cached_tokens detail). It is the default.
	DeepSeek Dialect = "deepseek"
	// OpenAI sends usage in a separate last chunk with no choices and
	// reports cache use only as prompt_tokens_details.cached_tokens.
	// Reasoning, when scripted, is streamed as "reasoning" as several
	// OpenAI-compatible servers do.
	OpenAI Dialect = "openai"
)

// DefaultChunkBytes is the piece size used when a Turn leaves ChunkBytes
// zero. It is small on purpose so that every test exercises reassembly.
const DefaultChunkBytes = 8

// Turn is one scripted reply. The zero value streams an empty "stop" reply.
type Turn struct {
	// Text is the assistant content, streamed in pieces.
	Text string `json:"text,omitempty"`
	// Reasoning is streamed before Text as the dialect's reasoning field.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are streamed after Text, each as a header delta (index,
	// id, name) followed by argument pieces.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Interleave streams the argument pieces of several tool calls
	// round-robin instead of one call after another.
	Interleave bool `json:"interleave,omitempty"`
	// Usage is reported when the request asks for it; nil synthesises
	// plausible counts from the request and reply sizes.
	Usage *Usage `json:"usage,omitempty"`
	// FinishReason defaults to "tool_calls" when ToolCalls is set and to
	// "stop" otherwise.
	FinishReason string `json:"finish_reason,omitempty"`
	// ChunkBytes is the largest piece of text, reasoning or arguments per
	// event; zero means DefaultChunkBytes. A multi-byte character is never
	// split, since the real APIs send valid UTF-8 in every chunk.
	ChunkBytes int `json:"chunk_bytes,omitempty"`
	// Dialect overrides the server's dialect for this turn.
	Dialect Dialect `json:"dialect,omitempty"`

	// Status, when set to anything but 200, answers with that status,
	// Body (an OpenAI-style error object when empty) and, when
	// RetryAfter is set, a Retry-After header with exactly that value.
	Status     int    `json:"status,omitempty"`
	Body       string `json:"body,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`

	// Latency delays the response headers.
	Latency time.Duration `json:"-"`
	// ChunkDelay is slept between events.
	ChunkDelay time.Duration `json:"-"`

	// CutAfterEvents, when positive, aborts the connection after that
	// many events without a clean end and without [DONE]; a value at or
	// past the number of chunk events drops only [DONE]. A negative
	// value aborts right after the headers.
	CutAfterEvents int `json:"cut_after_events,omitempty"`

	// FaultAfterEvents is where Malformed, StreamError and Stall strike:
	// after that many events have been written (clamped to just before
	// [DONE]).
	FaultAfterEvents int `json:"fault_after_events,omitempty"`
	// Malformed inserts a data line holding truncated JSON; the rest of
	// the stream, [DONE] included, follows as normal.
	Malformed bool `json:"malformed,omitempty"`
	// StreamError sends an in-stream error object with this message and
	// ends the response without [DONE].
	StreamError string `json:"stream_error,omitempty"`
	// Stall stops writing and holds the connection open until the client
	// goes away or the server is closed.
	Stall bool `json:"stall,omitempty"`
	// Hold, when set, pauses the stream after FaultAfterEvents events
	// (clamped like the faults) until the channel is closed, then goes on
	// with the rest; the response ends early if the client goes away or
	// the server closes first. A test closes it when something it waits
	// for has happened, so a turn can be held open mid-stream (its first
	// bytes already delivered) without a timer.
	Hold <-chan struct{} `json:"-"`
}

// ToolCall is one scripted tool call. An empty ID is filled in as
// call_<request seq>_<position>.
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage is the token accounting a Turn reports. TotalTokens is always
// PromptTokens + CompletionTokens; a zero CacheMissTokens is reported as
// PromptTokens - CacheHitTokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CacheHitTokens   int `json:"cache_hit_tokens,omitempty"`
	CacheMissTokens  int `json:"cache_miss_tokens,omitempty"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
}

// plainTurn has Turn's fields without its methods, so the JSON methods can
// delegate to the default encoding for everything but the durations.
type plainTurn Turn

// turnJSON writes durations as Go duration strings ("200ms") so scripts
// stay readable; the embedded fields carry the rest.
type turnJSON struct {
	*plainTurn
	Latency    string `json:"latency,omitempty"`
	ChunkDelay string `json:"chunk_delay,omitempty"`
}

// MarshalJSON encodes the turn with durations as strings such as "200ms".
func (t Turn) MarshalJSON() ([]byte, error) {
	p := plainTurn(t)
	j := turnJSON{plainTurn: &p}
	if t.Latency != 0 {
		j.Latency = t.Latency.String()
	}
	if t.ChunkDelay != 0 {
		j.ChunkDelay = t.ChunkDelay.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes a turn, reading latency and chunk_delay as Go
// duration strings.
func (t *Turn) UnmarshalJSON(b []byte) error {
	var p plainTurn
	j := turnJSON{plainTurn: &p}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		in   string
		out  *time.Duration
	}{{"latency", j.Latency, &p.Latency}, {"chunk_delay", j.ChunkDelay, &p.ChunkDelay}} {
		if d.in == "" {
			continue
		}
		v, err := time.ParseDuration(d.in)
		if err != nil {
			return fmt.Errorf("turn %s: %w", d.name, err)
		}
		*d.out = v
	}
	*t = Turn(p)
	return nil
}

// LoadScript reads a JSON array of turns from path, typically a file under
// the calling test's testdata directory.
func LoadScript(path string) ([]Turn, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	var turns []Turn
	if err := json.Unmarshal(b, &turns); err != nil {
		return nil, fmt.Errorf("load script %s: %w", path, err)
	}
	return turns, nil
}

func (t Turn) finishReason() string {
	switch {
	case t.FinishReason != "":
		return t.FinishReason
	case len(t.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (t Turn) chunkBytes() int {
	if t.ChunkBytes > 0 {
		return t.ChunkBytes
	}
	return DefaultChunkBytes
}
