package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"reasonix/core/provider"
	"reasonix/core/sse"
)

// errAborted ends decoding when the consumer is gone; the caller replaces
// it with the context's error.
var errAborted = errors.New("stream aborted")

// The wire structs of one streamed chunk. Text-bearing fields are raw so
// that they can be unquoted byte for byte (see unquote).

type wireChunk struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type wireDelta struct {
	Content          json.RawMessage     `json:"content"`
	ReasoningContent json.RawMessage     `json:"reasoning_content"`
	Reasoning        json.RawMessage     `json:"reasoning"`
	ToolCalls        []wireToolCallDelta `json:"tool_calls"`
}

type wireToolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens          int  `json:"prompt_tokens"`
	CompletionTokens      int  `json:"completion_tokens"`
	TotalTokens           int  `json:"total_tokens"`
	PromptCacheHitTokens  *int `json:"prompt_cache_hit_tokens"`
	PromptCacheMissTokens *int `json:"prompt_cache_miss_tokens"`
	PromptTokensDetails   *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// usage maps both vendors' shapes onto provider.Usage. DeepSeek's explicit
// hit/miss counts win; otherwise OpenAI's cached_tokens is the hit count
// and the miss count is what remains of the prompt.
func (w *wireUsage) usage() provider.Usage {
	u := provider.Usage{
		PromptTokens:     w.PromptTokens,
		CompletionTokens: w.CompletionTokens,
		TotalTokens:      w.TotalTokens,
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	switch {
	case w.PromptCacheHitTokens != nil:
		u.CacheHitTokens = *w.PromptCacheHitTokens
	case w.PromptTokensDetails != nil:
		u.CacheHitTokens = w.PromptTokensDetails.CachedTokens
	}
	if w.PromptCacheMissTokens != nil {
		u.CacheMissTokens = *w.PromptCacheMissTokens
	} else {
		u.CacheMissTokens = max(u.PromptTokens-u.CacheHitTokens, 0)
	}
	if w.CompletionTokensDetails != nil {
		u.ReasoningTokens = w.CompletionTokensDetails.ReasoningTokens
	}
	return u
}

// pendingCall is a tool call still being assembled from deltas.
type pendingCall struct {
	index int
	id    string
	name  string
	args  []byte
}

// decoder turns chunk payloads into provider chunks. Tool calls are held
// until their choice finishes (or [DONE]) so that only complete calls are
// emitted; usage is held so that exactly one usage chunk, the last report,
// precedes Done.
type decoder struct {
	emit   func(provider.Chunk) bool
	calls  []*pendingCall
	finish string
	usage  *provider.Usage
}

// decode reads an event stream from r, passing non-terminal chunks to emit
// in order, and returns the single terminal chunk. emit reporting false
// means the consumer is gone and decoding stops with errAborted.
func decode(r io.Reader, emit func(provider.Chunk) bool) provider.Chunk {
	d := decoder{emit: emit}
	err := d.run(sse.NewReader(r))
	if err != nil {
		return provider.Chunk{Type: provider.ChunkError, Err: err}
	}
	return provider.Chunk{Type: provider.ChunkDone, FinishReason: d.finish}
}

func (d *decoder) run(sr *sse.Reader) error {
	for {
		ev, err := sr.Next()
		switch {
		case err == io.EOF:
			return d.cut(io.ErrUnexpectedEOF)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return d.cut(err)
		case err != nil:
			return fmt.Errorf("read stream: %w", err)
		}
		data := strings.TrimSpace(ev.Data)
		switch {
		case data == "":
			continue
		case data == "[DONE]":
			if err := d.flush(); err != nil {
				return err
			}
			if d.usage != nil && !d.emit(provider.Chunk{Type: provider.ChunkUsage, Usage: d.usage}) {
				return errAborted
			}
			return nil
		case ev.Event == "error":
			return apiError([]byte(data))
		}
		if err := d.chunk([]byte(data)); err != nil {
			return err
		}
	}
}

// cut reports a stream that ended before [DONE], naming the tool call it
// interrupted if any, so a half-written call is never mistaken for done.
func (d *decoder) cut(err error) error {
	if len(d.calls) > 0 {
		last := d.calls[len(d.calls)-1]
		return fmt.Errorf("stream ended before [DONE] inside tool call %q: %w", last.name, err)
	}
	return fmt.Errorf("stream ended before [DONE]: %w", err)
}

func (d *decoder) chunk(data []byte) error {
	var c wireChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("malformed stream chunk %q: %w", excerpt(data, 120), err)
	}
	if len(c.Error) > 0 && !bytes.Equal(c.Error, []byte("null")) {
		return apiError(c.Error)
	}
	for _, ch := range c.Choices {
		// Only one completion is requested; other indexes are ignored.
		if ch.Index != 0 {
			continue
		}
		if err := d.delta(&ch.Delta); err != nil {
			return err
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			d.finish = *ch.FinishReason
			if err := d.flush(); err != nil {
				return err
			}
		}
	}
	if c.Usage != nil {
		u := c.Usage.usage()
		d.usage = &u
	}
	return nil
}

func (d *decoder) delta(dl *wireDelta) error {
	// DeepSeek names the field reasoning_content; several other
	// compatible servers name it reasoning. A server sending both means
	// the same text, so the first non-empty one wins.
	reasoning, err := unquote(dl.ReasoningContent)
	if err != nil {
		return fmt.Errorf("reasoning_content: %w", err)
	}
	if reasoning == "" {
		if reasoning, err = unquote(dl.Reasoning); err != nil {
			return fmt.Errorf("reasoning: %w", err)
		}
	}
	if reasoning != "" && !d.emit(provider.Chunk{Type: provider.ChunkReasoning, Text: reasoning}) {
		return errAborted
	}
	text, err := unquote(dl.Content)
	if err != nil {
		return fmt.Errorf("content: %w", err)
	}
	if text != "" && !d.emit(provider.Chunk{Type: provider.ChunkText, Text: text}) {
		return errAborted
	}
	for i := range dl.ToolCalls {
		if err := d.toolDelta(&dl.ToolCalls[i]); err != nil {
			return err
		}
	}
	return nil
}

// toolDelta folds one tool-call fragment into its call. The id and name
// arrive once, in the first fragment; arguments arrive in pieces. A
// fragment without an index (some compatible servers omit it) continues
// the latest call unless it brings a new id.
func (d *decoder) toolDelta(td *wireToolCallDelta) error {
	var call *pendingCall
	if td.Index != nil {
		for _, c := range d.calls {
			if c.index == *td.Index {
				call = c
				break
			}
		}
		if call == nil {
			call = &pendingCall{index: *td.Index}
			d.calls = append(d.calls, call)
		}
	} else {
		if n := len(d.calls); n > 0 && (td.ID == "" || td.ID == d.calls[n-1].id) {
			call = d.calls[n-1]
		} else {
			next := 0
			for _, c := range d.calls {
				next = max(next, c.index+1)
			}
			call = &pendingCall{index: next}
			d.calls = append(d.calls, call)
		}
	}
	if call.id == "" {
		call.id = td.ID
	}
	if call.name == "" {
		call.name = td.Function.Name
	}
	args, err := argumentsText(td.Function.Arguments)
	if err != nil {
		return fmt.Errorf("tool call arguments: %w", err)
	}
	call.args = append(call.args, args...)
	return nil
}

// flush emits the assembled tool calls in index order. An empty argument
// string becomes "{}" so the call is always valid JSON for a no-argument
// tool; anything else is passed through exactly as received.
func (d *decoder) flush() error {
	slices.SortStableFunc(d.calls, func(a, b *pendingCall) int { return a.index - b.index })
	for _, c := range d.calls {
		if c.name == "" {
			return fmt.Errorf("tool call at index %d has no function name", c.index)
		}
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", c.index)
		}
		args := string(c.args)
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		tc := &provider.ToolCall{ID: id, Name: c.name, Arguments: args}
		if !d.emit(provider.Chunk{Type: provider.ChunkToolCall, ToolCall: tc}) {
			return errAborted
		}
	}
	d.calls = d.calls[:0]
	return nil
}

// apiError reads an error object (or a bare message) sent in the stream.
func apiError(raw []byte) error {
	var obj struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &obj) == nil && len(obj.Error) > 0 {
		raw = obj.Error
	}
	var e struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Message == "" {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return &APIError{Message: s}
		}
		return &APIError{Message: excerpt(raw, bodyExcerptBytes)}
	}
	code := strings.Trim(string(e.Code), `"`)
	if code == "null" {
		code = ""
	}
	return &APIError{Message: e.Message, Type: e.Type, Code: code}
}

// argumentsText reads tool-call arguments: normally a JSON string, but
// some compatible servers send the arguments object itself, which is then
// kept as its compact JSON text.
func argumentsText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return "", err
		}
		return b.String(), nil
	}
	return unquote(raw)
}

// unquote decodes a JSON string value, treating null or absence as empty.
// Unlike encoding/json it copies bytes outside escape sequences verbatim,
// invalid UTF-8 included, so text a server split in the middle of a
// multi-byte character reassembles exactly when the pieces are joined.
func unquote(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", fmt.Errorf("expected a string, got %s", excerpt(raw, 40))
	}
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s), nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return "", errors.New("truncated escape")
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s[i+2:])
			if !ok {
				return "", errors.New("bad \\u escape")
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if len(s) >= i+6 && s[i] == '\\' && s[i+1] == 'u' {
					if lo, ok := hex4(s[i+2:]); ok {
						if p := utf16.DecodeRune(r, lo); p != utf8.RuneError {
							r2 = p
							i += 6
						}
					}
				}
				r = r2
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return "", fmt.Errorf("bad escape \\%c", e)
		}
		i += 2
	}
	return string(out), nil
}

// hex4 parses the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}
