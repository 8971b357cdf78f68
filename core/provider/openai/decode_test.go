package openai

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"reasonix/core/provider"
)

// quoteRaw encodes s as a JSON string, escaping only what JSON requires and
// copying every other byte as is, invalid UTF-8 included, the way a server
// that splits a character between chunks would send it.
func quoteRaw(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func sseData(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\n\n")
	}
	return b.String()
}

func deltaChunk(delta string) string {
	return `{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
}

func finishChunk(reason string) string {
	return `{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

func decodeAll(t testing.TB, in string) result {
	t.Helper()
	var cs []provider.Chunk
	term := decode(strings.NewReader(in), func(c provider.Chunk) bool {
		cs = append(cs, c)
		return true
	})
	cs = append(cs, term)
	checkTerminal(t, cs)
	return fold(cs)
}

// TestArgumentsSplitAtEveryByte splits tool-call arguments, and text, at
// every byte position, including inside multi-byte characters and next to
// escapes, and checks that they reassemble exactly.
func TestArgumentsSplitAtEveryByte(t *testing.T) {
	t.Parallel()
	args := `{"path":"docs/读我.md","content":"line1\nline2 \"quoted\" \\ tab\t 🎉"}`
	text := "héllo 世界 🎉 \"q\" \\ end"
	for i := 0; i <= len(args); i++ {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			j := min(i, len(text))
			in := sseData(
				deltaChunk(`{"role":"assistant","content":`+quoteRaw(text[:j])+`}`),
				deltaChunk(`{"content":`+quoteRaw(text[j:])+`}`),
				deltaChunk(`{"tool_calls":[{"index":0,"id":"c0","type":"function","function":{"name":"write_file","arguments":`+quoteRaw(args[:i])+`}}]}`),
				deltaChunk(`{"tool_calls":[{"index":1,"id":"c1","type":"function","function":{"name":"ls","arguments":""}}]}`),
				deltaChunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+quoteRaw(args[i:])+`}}]}`),
				deltaChunk(`{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}`),
				finishChunk("tool_calls"),
				"[DONE]",
			)
			r := decodeAll(t, in)
			if r.term.Type != provider.ChunkDone {
				t.Fatalf("terminal = %v", r.term.Err)
			}
			if r.text != text {
				t.Fatalf("text = %q, want %q", r.text, text)
			}
			if len(r.calls) != 2 || r.calls[0].Arguments != args || r.calls[1].Name != "ls" {
				t.Fatalf("calls = %+v", r.calls)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		want   result
		errIs  error
		errHas string
	}{
		{
			name:  "clean end without done",
			in:    sseData(deltaChunk(`{"content":"hi"}`), finishChunk("stop")),
			want:  result{text: "hi"},
			errIs: io.ErrUnexpectedEOF,
		},
		{
			name:  "cut mid event",
			in:    sseData(deltaChunk(`{"content":"hi"}`)) + "data: {\"choi",
			want:  result{text: "hi"},
			errIs: io.ErrUnexpectedEOF,
		},
		{
			name:   "error event type",
			in:     "event: error\ndata: {\"message\":\"quota exceeded\",\"code\":429}\n\n",
			errHas: "api error: quota exceeded (429)",
		},
		{
			name:   "error string",
			in:     sseData(`{"error":"upstream timeout"}`),
			errHas: "api error: upstream timeout",
		},
		{
			name: "null error is no error",
			in:   sseData(`{"error":null,"choices":[{"index":0,"delta":{"content":"ok"}}]}`, "[DONE]"),
			want: result{text: "ok"},
		},
		{
			name: "comments blanks and whitespace",
			in:   ": keep-alive\n\ndata:\n\n" + sseData(deltaChunk(`{"content":"a"}`)) + "data:  [DONE] \n\n",
			want: result{text: "a"},
		},
		{
			name: "calls without index",
			in: sseData(
				deltaChunk(`{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\":"}}]}`),
				deltaChunk(`{"tool_calls":[{"function":{"arguments":"1}"}}]}`),
				deltaChunk(`{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{}"}}]}`),
				finishChunk("tool_calls"), "[DONE]"),
			want: result{calls: []provider.ToolCall{{ID: "a", Name: "f", Arguments: `{"x":1}`}, {ID: "b", Name: "g", Arguments: "{}"}}},
		},
		{
			name: "indexes out of order",
			in: sseData(
				deltaChunk(`{"tool_calls":[{"index":2,"id":"c","function":{"name":"h","arguments":"{}"}}]}`),
				deltaChunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}`),
				"[DONE]"),
			want: result{calls: []provider.ToolCall{{ID: "a", Name: "f", Arguments: "{}"}, {ID: "c", Name: "h", Arguments: "{}"}}},
		},
		{
			name: "arguments as object",
			in:   sseData(deltaChunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":{"k": [1, 2]}}}]}`), "[DONE]"),
			want: result{calls: []provider.ToolCall{{ID: "a", Name: "f", Arguments: `{"k":[1,2]}`}}},
		},
		{
			name: "empty arguments and id filled in",
			in:   sseData(deltaChunk(`{"tool_calls":[{"index":3,"function":{"name":"f"}}]}`), "[DONE]"),
			want: result{calls: []provider.ToolCall{{ID: "call_3", Name: "f", Arguments: "{}"}}},
		},
		{
			name:   "call without name",
			in:     sseData(deltaChunk(`{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{}"}}]}`), "[DONE]"),
			errHas: "no function name",
		},
		{
			name: "both reasoning fields count once",
			in:   sseData(deltaChunk(`{"reasoning_content":"think","reasoning":"think"}`), deltaChunk(`{"reasoning":" more"}`), "[DONE]"),
			want: result{reasoning: "think more"},
		},
		{
			name: "last usage reported once before done",
			in: sseData(
				`{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"prompt_cache_hit_tokens":4,"prompt_cache_miss_tokens":1}}`,
				`{"choices":[],"usage":null}`,
				"[DONE]"),
			want: result{text: "a", usage: []provider.Usage{{PromptTokens: 5, CompletionTokens: 2, TotalTokens: 7, CacheHitTokens: 4, CacheMissTokens: 1}}},
		},
		{
			name: "other choices ignored",
			in:   sseData(`{"choices":[{"index":1,"delta":{"content":"no"}},{"index":0,"delta":{"content":"yes"}}]}`, "[DONE]"),
			want: result{text: "yes"},
		},
		{
			name: "escapes and surrogates",
			in:   sseData(deltaChunk(`{"content":"\u00e9\ud83c\udf89\ud800x\/\b\f\r\t"}`), "[DONE]"),
			want: result{text: "é🎉\uFFFDx/\b\f\r\t"},
		},
		{
			name:   "content of the wrong type",
			in:     sseData(deltaChunk(`{"content":42}`)),
			errHas: "content: expected a string",
		},
		{
			name:   "not json",
			in:     sseData("hello"),
			errHas: "malformed stream chunk",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := decodeAll(t, tc.in)
			wantErr := tc.errIs != nil || tc.errHas != ""
			if (r.term.Type == provider.ChunkError) != wantErr {
				t.Fatalf("terminal = %v %v, want error %v", r.term.Type, r.term.Err, wantErr)
			}
			if tc.errIs != nil && !errors.Is(r.term.Err, tc.errIs) {
				t.Errorf("err = %v, want %v", r.term.Err, tc.errIs)
			}
			if tc.errHas != "" && !strings.Contains(fmt.Sprint(r.term.Err), tc.errHas) {
				t.Errorf("err = %v, want it to contain %q", r.term.Err, tc.errHas)
			}
			if r.text != tc.want.text || r.reasoning != tc.want.reasoning {
				t.Errorf("text %q reasoning %q, want %q %q", r.text, r.reasoning, tc.want.text, tc.want.reasoning)
			}
			if fmt.Sprint(r.calls) != fmt.Sprint(tc.want.calls) {
				t.Errorf("calls = %+v, want %+v", r.calls, tc.want.calls)
			}
			if fmt.Sprint(r.usage) != fmt.Sprint(tc.want.usage) {
				t.Errorf("usage = %+v, want %+v", r.usage, tc.want.usage)
			}
		})
	}
}

func TestDecodeStopsWhenConsumerLeaves(t *testing.T) {
	t.Parallel()
	in := sseData(deltaChunk(`{"content":"a"}`), deltaChunk(`{"content":"b"}`), "[DONE]")
	calls := 0
	term := decode(strings.NewReader(in), func(provider.Chunk) bool {
		calls++
		return false
	})
	if calls != 1 || !errors.Is(term.Err, errAborted) {
		t.Fatalf("emit called %d times, terminal %v; want 1 and errAborted", calls, term.Err)
	}
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{name: "short", in: "  hi \n", n: 10, want: "hi"},
		{name: "cut ascii", in: "abcdef", n: 3, want: "abc"},
		{name: "no half character", in: "ab世界", n: 4, want: "ab"},
		{name: "invalid bytes replaced", in: "a\xffb", n: 10, want: "a\uFFFDb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := excerpt([]byte(tc.in), tc.n); got != tc.want {
				t.Fatalf("excerpt(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}

// FuzzStream feeds arbitrary bytes through the chunk decoder: it must never
// panic or hang, must end with exactly one terminal chunk, and must only
// emit complete, well-formed chunks before it.
func FuzzStream(f *testing.F) {
	f.Add([]byte(sseData(deltaChunk(`{"role":"assistant","content":"hi"}`), finishChunk("stop"), "[DONE]")))
	f.Add([]byte(sseData(
		deltaChunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}`),
		deltaChunk(`{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}`),
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":2}}}`,
		"[DONE]")))
	f.Add([]byte("event: error\ndata: {\"error\":{\"message\":\"x\"}}\n\n"))
	f.Add([]byte(sseData(deltaChunk(`{"reasoning_content":"\ud83c","content":"\u00e9\\"}`))))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":{}}}]}}]}\r\n\r\ndata: [DONE]\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var cs []provider.Chunk
		usages := 0
		term := decode(bytes.NewReader(in), func(c provider.Chunk) bool {
			switch c.Type {
			case provider.ChunkText, provider.ChunkReasoning:
				if c.Text == "" {
					t.Fatalf("empty %v chunk", c.Type)
				}
			case provider.ChunkToolCall:
				if c.ToolCall == nil || c.ToolCall.Name == "" || c.ToolCall.ID == "" || c.ToolCall.Arguments == "" {
					t.Fatalf("incomplete tool call %+v", c.ToolCall)
				}
			case provider.ChunkUsage:
				usages++
				if c.Usage == nil || usages > 1 {
					t.Fatalf("bad usage chunk %d: %+v", usages, c.Usage)
				}
			default:
				t.Fatalf("emit got a %v chunk", c.Type)
			}
			cs = append(cs, c)
			return true
		})
		switch term.Type {
		case provider.ChunkDone:
		case provider.ChunkError:
			if term.Err == nil {
				t.Fatal("error chunk without an error")
			}
		default:
			t.Fatalf("terminal chunk of type %v", term.Type)
		}
		checkTerminal(t, append(cs, term))
	})
}
