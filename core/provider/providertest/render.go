package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// The wire structs below fix the field order of every chunk, so the fake's
// output is byte-stable and matches the order the real APIs use.

type chunk struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []choice        `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"`
}

type choice struct {
	Index        int             `json:"index"`
	Delta        delta           `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type delta struct {
	Role             string          `json:"role,omitempty"`
	Content          json.RawMessage `json:"content,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	Reasoning        *string         `json:"reasoning,omitempty"`
	ToolCalls        []toolDelta     `json:"tool_calls,omitempty"`
}

type toolDelta struct {
	Index    int       `json:"index"`
	ID       string    `json:"id,omitempty"`
	Type     string    `json:"type,omitempty"`
	Function funcDelta `json:"function"`
}

type funcDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type usageWire struct {
	PromptTokens            int           `json:"prompt_tokens"`
	CompletionTokens        int           `json:"completion_tokens"`
	TotalTokens             int           `json:"total_tokens"`
	PromptTokensDetails     promptDetails `json:"prompt_tokens_details"`
	CompletionTokensDetails complDetails  `json:"completion_tokens_details"`
	PromptCacheHitTokens    *int          `json:"prompt_cache_hit_tokens,omitempty"`
	PromptCacheMissTokens   *int          `json:"prompt_cache_miss_tokens,omitempty"`
}

type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type complDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

var jsonNull = json.RawMessage("null")

// marshal encodes v without HTML escaping, as the vendors' servers do.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("providertest: marshal %T: %v", v, err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func event(payload []byte) []byte {
	out := make([]byte, 0, len(payload)+8)
	out = append(out, "data: "...)
	out = append(out, payload...)
	return append(out, "\n\n"...)
}

func str(s string) *string { return &s }

// split cuts s into pieces of at most n bytes without splitting a UTF-8
// sequence; a character longer than n bytes forms a piece of its own.
func split(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		if end == 0 {
			_, size := utf8.DecodeRuneInString(s)
			end = size
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

func callID(req Request, i int, tc ToolCall) string {
	if tc.ID != "" {
		return tc.ID
	}
	return fmt.Sprintf("call_%d_%d", req.Seq, i)
}

func model(req Request) string {
	if req.Model != "" {
		return req.Model
	}
	return "fake-model"
}

// usageFor returns the usage a turn reports, synthesising counts when the
// script gives none.
func usageFor(t Turn, req Request) Usage {
	if t.Usage != nil {
		return *t.Usage
	}
	out := len(t.Text) + len(t.Reasoning)
	for _, tc := range t.ToolCalls {
		out += len(tc.Name) + len(tc.Arguments)
	}
	prompt := max(1, len(req.Body)/4)
	return Usage{
		PromptTokens:     prompt,
		CompletionTokens: max(1, out/4),
		ReasoningTokens:  len(t.Reasoning) / 4,
		CacheHitTokens:   min(req.cacheHit, prompt),
	}
}

func usageJSON(u Usage, d Dialect) []byte {
	w := usageWire{
		PromptTokens:            u.PromptTokens,
		CompletionTokens:        u.CompletionTokens,
		TotalTokens:             u.PromptTokens + u.CompletionTokens,
		PromptTokensDetails:     promptDetails{CachedTokens: u.CacheHitTokens},
		CompletionTokensDetails: complDetails{ReasoningTokens: u.ReasoningTokens},
	}
	if d != OpenAI {
		miss := u.CacheMissTokens
		if miss == 0 {
			miss = max(0, u.PromptTokens-u.CacheHitTokens)
		}
		w.PromptCacheHitTokens, w.PromptCacheMissTokens = &u.CacheHitTokens, &miss
	}
	return marshal(w)
}

// renderStream builds every event of a streamed turn, [DONE] last.
func renderStream(t Turn, req Request) [][]byte {
	base := chunk{
		ID:                fmt.Sprintf("chatcmpl-fake%d", req.Seq),
		Object:            "chat.completion.chunk",
		Created:           req.Arrived.Unix(),
		Model:             model(req),
		SystemFingerprint: "fp_providertest",
	}
	if req.IncludeUsage && t.Dialect == OpenAI {
		base.Usage = jsonNull
	}
	var events [][]byte
	emit := func(d delta, finish *string, usage json.RawMessage) {
		c := base
		c.Choices = []choice{{Delta: d, Logprobs: jsonNull, FinishReason: finish}}
		if usage != nil {
			c.Usage = usage
		}
		events = append(events, event(marshal(c)))
	}
	n := t.chunkBytes()

	emit(delta{Role: "assistant", Content: json.RawMessage(`""`)}, nil, nil)
	for _, p := range split(t.Reasoning, n) {
		if t.Dialect == OpenAI {
			emit(delta{Reasoning: str(p)}, nil, nil)
		} else {
			emit(delta{Content: jsonNull, ReasoningContent: str(p)}, nil, nil)
		}
	}
	for _, p := range split(t.Text, n) {
		emit(delta{Content: marshal(p)}, nil, nil)
	}

	header := func(i int) {
		tc := t.ToolCalls[i]
		emit(delta{ToolCalls: []toolDelta{{Index: i, ID: callID(req, i, tc), Type: "function", Function: funcDelta{Name: tc.Name}}}}, nil, nil)
	}
	piece := func(i int, p string) {
		emit(delta{ToolCalls: []toolDelta{{Index: i, Function: funcDelta{Arguments: p}}}}, nil, nil)
	}
	pieces := make([][]string, len(t.ToolCalls))
	for i, tc := range t.ToolCalls {
		pieces[i] = split(tc.Arguments, n)
	}
	if t.Interleave {
		for i := range t.ToolCalls {
			header(i)
		}
		for k := 0; ; k++ {
			sent := false
			for i := range pieces {
				if k < len(pieces[i]) {
					piece(i, pieces[i][k])
					sent = true
				}
			}
			if !sent {
				break
			}
		}
	} else {
		for i := range t.ToolCalls {
			header(i)
			for _, p := range pieces[i] {
				piece(i, p)
			}
		}
	}

	var usage json.RawMessage
	if req.IncludeUsage {
		usage = usageJSON(usageFor(t, req), t.Dialect)
	}
	finish := str(t.finishReason())
	if t.Dialect == OpenAI {
		emit(delta{}, finish, nil)
		if usage != nil {
			c := base
			c.Choices = []choice{}
			c.Usage = usage
			events = append(events, event(marshal(c)))
		}
	} else {
		emit(delta{Content: json.RawMessage(`""`)}, finish, usage)
	}
	return append(events, []byte("data: [DONE]\n\n"))
}

// renderWhole builds the non-streaming chat.completion object for a turn.
func renderWhole(t Turn, req Request) []byte {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type message struct {
		Role             string  `json:"role"`
		Content          *string `json:"content"`
		ReasoningContent string  `json:"reasoning_content,omitempty"`
		ToolCalls        []call  `json:"tool_calls,omitempty"`
	}
	type wholeChoice struct {
		Index        int             `json:"index"`
		Message      message         `json:"message"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason string          `json:"finish_reason"`
	}
	msg := message{Role: "assistant", Content: str(t.Text), ReasoningContent: t.Reasoning}
	if t.Text == "" && len(t.ToolCalls) > 0 {
		msg.Content = nil
	}
	for i, tc := range t.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, call{ID: callID(req, i, tc), Type: "function", Function: fn{tc.Name, tc.Arguments}})
	}
	return marshal(struct {
		ID                string          `json:"id"`
		Object            string          `json:"object"`
		Created           int64           `json:"created"`
		Model             string          `json:"model"`
		SystemFingerprint string          `json:"system_fingerprint"`
		Choices           []wholeChoice   `json:"choices"`
		Usage             json.RawMessage `json:"usage"`
	}{
		ID:                fmt.Sprintf("chatcmpl-fake%d", req.Seq),
		Object:            "chat.completion",
		Created:           req.Arrived.Unix(),
		Model:             model(req),
		SystemFingerprint: "fp_providertest",
		Choices:           []wholeChoice{{Message: msg, Logprobs: jsonNull, FinishReason: t.finishReason()}},
		Usage:             usageJSON(usageFor(t, req), t.Dialect),
	})
}

// apiError is the error object of an OpenAI-style error reply.
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Param   json.RawMessage `json:"param"`
	Code    json.RawMessage `json:"code"`
}

// errorBody is an OpenAI-style error object.
func errorBody(msg, typ string) []byte {
	return marshal(struct {
		Error apiError `json:"error"`
	}{apiError{Message: msg, Type: typ, Param: jsonNull, Code: jsonNull}})
}

// missingReasoningBody is the error DeepSeek's thinking mode answers when
// the assistant message at index lacks its reasoning_content.
func missingReasoningBody(index int) []byte {
	msg := fmt.Sprintf("Missing `reasoning_content` field in the assistant message at message index %d. "+
		"For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls", index)
	return marshal(struct {
		Error apiError `json:"error"`
	}{apiError{Message: msg, Type: "invalid_request_error", Param: jsonNull, Code: marshal("invalid_request_error")}})
}

func errorEvent(msg string) []byte { return event(errorBody(msg, "server_error")) }

// malformedEvent is a chunk cut off in the middle of its JSON.
func malformedEvent(seq int) []byte {
	return event(fmt.Appendf(nil, `{"id":"chatcmpl-fake%d","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"tru`, seq))
}
