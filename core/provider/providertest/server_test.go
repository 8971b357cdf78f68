package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/core/sse"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// client returns an HTTP client whose idle connections are closed when the
// test ends, so no transport goroutine outlives it.
func client(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

const streamBody = `{"model":"deepseek-chat","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hello"}],"stream":true,"stream_options":{"include_usage":true}}`

func post(t *testing.T, c *http.Client, srv *Server, body string) *http.Response {
	t.Helper()
	return postCtx(t, context.Background(), c, srv, body)
}

func postCtx(t *testing.T, ctx context.Context, c *http.Client, srv *Server, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads every SSE data payload and the error that ended the stream.
func events(t *testing.T, body io.Reader) ([]string, error) {
	t.Helper()
	r := sse.NewReader(body)
	var out []string
	for {
		ev, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev.Data)
	}
}

// assembled is what a client reconstructs from a stream.
type assembled struct {
	Text, Reasoning string
	Calls           map[int]*ToolCall
	Finish          string
	Usage           map[string]any
	Done            bool
}

func assemble(t *testing.T, datas []string) assembled {
	t.Helper()
	a := assembled{Calls: map[int]*ToolCall{}}
	for _, d := range datas {
		if d == "[DONE]" {
			a.Done = true
			continue
		}
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Content          *string `json:"content"`
					ReasoningContent *string `json:"reasoning_content"`
					Reasoning        *string `json:"reasoning"`
					ToolCalls        []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("chunk %q: %v", d, err)
		}
		if c.Object != "chat.completion.chunk" {
			t.Fatalf("object = %q", c.Object)
		}
		if c.Usage != nil {
			a.Usage = c.Usage
		}
		for _, ch := range c.Choices {
			if p := ch.Delta.Content; p != nil {
				a.Text += *p
			}
			if p := ch.Delta.ReasoningContent; p != nil {
				a.Reasoning += *p
			}
			if p := ch.Delta.Reasoning; p != nil {
				a.Reasoning += *p
			}
			for _, tc := range ch.Delta.ToolCalls {
				call := a.Calls[tc.Index]
				if call == nil {
					call = &ToolCall{}
					a.Calls[tc.Index] = call
				}
				if tc.ID != "" {
					call.ID = tc.ID
				}
				call.Name += tc.Function.Name
				call.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				a.Finish = *ch.FinishReason
			}
		}
	}
	return a
}

var createdRE = regexp.MustCompile(`"created":\d+`)

func TestGoldenStream(t *testing.T) {
	t.Parallel()
	turn := Turn{
		Reasoning:  "think <first>",
		Text:       "Hi & bye",
		ToolCalls:  []ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}},
		Usage:      &Usage{PromptTokens: 100, CompletionTokens: 20, CacheHitTokens: 64, ReasoningTokens: 5},
		ChunkBytes: 6,
	}
	for _, d := range []Dialect{DeepSeek, OpenAI} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			srv := Start(t, WithDialect(d))
			srv.Push(turn)
			resp := post(t, client(t), srv, streamBody)
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("Content-Type = %q", ct)
			}
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			got = createdRE.ReplaceAll(got, []byte(`"created":1700000000`))
			golden := filepath.Join("testdata", "stream_"+string(d)+".golden")
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
				t.Fatalf("stream differs from %s:\n%s", golden, got)
			}
		})
	}
}

func TestStreamReassembles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		dialect Dialect
		turn    Turn
		usage   map[string]float64
	}{
		{
			name: "text one byte pieces",
			turn: Turn{Text: "héllo, 世界 🎉!", ChunkBytes: 1},
		},
		{
			name:    "reasoning and text openai",
			dialect: OpenAI,
			turn:    Turn{Reasoning: "let me think about it", Text: "answer", ChunkBytes: 5},
		},
		{
			name: "interleaved calls",
			turn: Turn{ChunkBytes: 3, Interleave: true, ToolCalls: []ToolCall{
				{Name: "a", Arguments: `{"x":1,"y":"long value"}`},
				{Name: "b", Arguments: `{}`},
				{ID: "mine", Name: "c", Arguments: `{"z":"ζ"}`},
			}},
		},
		{
			name:  "deepseek usage",
			turn:  Turn{Text: "x", Usage: &Usage{PromptTokens: 100, CompletionTokens: 7, CacheHitTokens: 60, ReasoningTokens: 3}},
			usage: map[string]float64{"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107, "prompt_cache_hit_tokens": 60, "prompt_cache_miss_tokens": 40},
		},
		{
			name:    "openai usage",
			dialect: OpenAI,
			turn:    Turn{Text: "x", Usage: &Usage{PromptTokens: 100, CompletionTokens: 7, CacheHitTokens: 60}},
			usage:   map[string]float64{"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := []Option{}
			if tc.dialect != "" {
				opts = append(opts, WithDialect(tc.dialect))
			}
			srv := Start(t, opts...)
			srv.Push(tc.turn)
			datas, err := events(t, post(t, client(t), srv, streamBody).Body)
			if err != io.EOF {
				t.Fatalf("stream ended with %v, want clean EOF", err)
			}
			a := assemble(t, datas)
			if !a.Done {
				t.Error("no [DONE]")
			}
			if a.Text != tc.turn.Text || a.Reasoning != tc.turn.Reasoning {
				t.Errorf("text %q reasoning %q, want %q %q", a.Text, a.Reasoning, tc.turn.Text, tc.turn.Reasoning)
			}
			if a.Finish != tc.turn.finishReason() {
				t.Errorf("finish = %q, want %q", a.Finish, tc.turn.finishReason())
			}
			if len(a.Calls) != len(tc.turn.ToolCalls) {
				t.Fatalf("got %d calls, want %d", len(a.Calls), len(tc.turn.ToolCalls))
			}
			for i, want := range tc.turn.ToolCalls {
				if want.ID == "" {
					want.ID = fmt.Sprintf("call_0_%d", i)
				}
				if got := *a.Calls[i]; got != want {
					t.Errorf("call %d = %+v, want %+v", i, got, want)
				}
			}
			for k, v := range tc.usage {
				if a.Usage[k] != v {
					t.Errorf("usage %s = %v, want %v (usage %v)", k, a.Usage[k], v, a.Usage)
				}
			}
			if tc.dialect == OpenAI && a.Usage["prompt_cache_hit_tokens"] != nil {
				t.Errorf("openai dialect sent deepseek cache fields: %v", a.Usage)
			}
		})
	}
}

func TestNoUsageUnlessAsked(t *testing.T) {
	t.Parallel()
	srv := Start(t)
	srv.Push(Turn{Text: "x"})
	datas, _ := events(t, post(t, client(t), srv, `{"model":"m","messages":[],"stream":true}`).Body)
	for _, d := range datas {
		if strings.Contains(d, `"usage"`) {
			t.Fatalf("usage sent without include_usage: %s", d)
		}
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	long := Turn{Text: strings.Repeat("abcdefgh", 10)} // 10 text events + role + finish
	tests := []struct {
		name      string
		turn      Turn
		wantEnd   func(error) bool
		wantCount int // data payloads before the end
		check     func(t *testing.T, datas []string)
	}{
		{
			name:      "cut after 3",
			turn:      withFault(long, func(t *Turn) { t.CutAfterEvents = 3 }),
			wantEnd:   func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) },
			wantCount: 3,
		},
		{
			name:      "cut before done",
			turn:      withFault(long, func(t *Turn) { t.CutAfterEvents = 1000 }),
			wantEnd:   func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) },
			wantCount: 12,
		},
		{
			name:      "cut after headers",
			turn:      withFault(long, func(t *Turn) { t.CutAfterEvents = -1 }),
			wantEnd:   func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) },
			wantCount: 0,
		},
		{
			name:      "malformed",
			turn:      withFault(long, func(t *Turn) { t.Malformed = true; t.FaultAfterEvents = 2 }),
			wantEnd:   func(err error) bool { return err == io.EOF },
			wantCount: 14,
			check: func(t *testing.T, datas []string) {
				if json.Valid([]byte(datas[2])) || !json.Valid([]byte(datas[1])) {
					t.Errorf("event 2 should be the only broken one: %q", datas[:3])
				}
				if datas[13] != "[DONE]" {
					t.Errorf("last = %q, want [DONE]", datas[13])
				}
			},
		},
		{
			name:      "stream error",
			turn:      withFault(long, func(t *Turn) { t.StreamError = "overloaded"; t.FaultAfterEvents = 1 }),
			wantEnd:   func(err error) bool { return err == io.EOF },
			wantCount: 2,
			check: func(t *testing.T, datas []string) {
				if !strings.Contains(datas[1], `"error":{"message":"overloaded"`) {
					t.Errorf("error event = %q", datas[1])
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := Start(t)
			srv.Push(tc.turn)
			datas, err := events(t, post(t, client(t), srv, streamBody).Body)
			if !tc.wantEnd(err) {
				t.Fatalf("stream ended with %v", err)
			}
			if len(datas) != tc.wantCount {
				t.Fatalf("got %d events, want %d: %q", len(datas), tc.wantCount, datas)
			}
			if tc.check != nil {
				tc.check(t, datas)
			}
		})
	}
}

func withFault(t Turn, f func(*Turn)) Turn {
	f(&t)
	return t
}

func TestStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		turn       Turn
		wantStatus int
		wantRetry  string
		wantBody   string
	}{
		{name: "429 with retry-after", turn: Turn{Status: 429, RetryAfter: "1"}, wantStatus: 429, wantRetry: "1", wantBody: `"message":"fake: scripted status 429"`},
		{name: "custom body", turn: Turn{Status: 503, Body: `{"error":{"message":"busy"}}`}, wantStatus: 503, wantBody: `busy`},
		{name: "explicit 200 streams", turn: Turn{Status: 200, Text: "ok"}, wantStatus: 200, wantBody: `data: [DONE]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := Start(t)
			srv.Push(tc.turn)
			resp := post(t, client(t), srv, streamBody)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus || resp.Header.Get("Retry-After") != tc.wantRetry {
				t.Fatalf("status %d retry-after %q, want %d %q", resp.StatusCode, resp.Header.Get("Retry-After"), tc.wantStatus, tc.wantRetry)
			}
			if !strings.Contains(string(body), tc.wantBody) {
				t.Fatalf("body %q lacks %q", body, tc.wantBody)
			}
		})
	}
}

func TestQueueThenResponderThenEmpty(t *testing.T) {
	t.Parallel()
	t.Run("queue before responder", func(t *testing.T) {
		t.Parallel()
		srv := Start(t, WithResponder(func(r Request) Turn { return Turn{Text: "echo " + r.FirstUser()} }))
		srv.Push(Turn{Text: "first"}, Turn{Text: "second"})
		c := client(t)
		for _, want := range []string{"first", "second", "echo hello", "echo hello"} {
			datas, _ := events(t, post(t, c, srv, streamBody).Body)
			if got := assemble(t, datas).Text; got != want {
				t.Fatalf("text = %q, want %q", got, want)
			}
		}
		if srv.Remaining() != 0 || srv.Count() != 4 {
			t.Fatalf("remaining %d count %d", srv.Remaining(), srv.Count())
		}
	})
	t.Run("empty answers 500", func(t *testing.T) {
		t.Parallel()
		srv := Start(t)
		resp := post(t, client(t), srv, streamBody)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 500 || !strings.Contains(string(body), "fake: no scripted turn left") {
			t.Fatalf("status %d body %q", resp.StatusCode, body)
		}
	})
}

func TestRecordsRequests(t *testing.T) {
	t.Parallel()
	srv := Start(t)
	srv.Push(Turn{})
	body := `{"model":"m1","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},` +
		`{"role":"assistant","content":null,"reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},` +
		`{"role":"tool","content":"out","tool_call_id":"c1"},{"role":"user","content":"last"}],` +
		`"tools":[{"type":"function","function":{"name":"ls","parameters":{}}}],"temperature":0,"max_tokens":9,"reasoning_effort":"high","stream":true}`
	before := time.Now()
	resp := post(t, client(t), srv, body)
	_, _ = io.ReadAll(resp.Body)
	reqs, err := srv.WaitRequests(1, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r := reqs[0]
	if string(r.Body) != body || r.Header.Get("Content-Type") != "application/json" || r.Arrived.Before(before) {
		t.Errorf("raw record wrong: body=%q ct=%q", r.Body, r.Header.Get("Content-Type"))
	}
	want := []Message{
		{Role: "user", Content: "ab"},
		{Role: "assistant", ReasoningContent: "r", ToolCalls: []ToolCall{{ID: "c1", Name: "ls", Arguments: "{}"}}},
		{Role: "tool", Content: "out", ToolCallID: "c1"},
		{Role: "user", Content: "last"},
	}
	if fmt.Sprint(r.Messages) != fmt.Sprint(want) {
		t.Errorf("messages = %+v\nwant %+v", r.Messages, want)
	}
	if r.Model != "m1" || !r.Stream || r.IncludeUsage || r.MaxTokens != 9 || r.ReasoningEffort != "high" ||
		r.Temperature == nil || *r.Temperature != 0 || fmt.Sprint(r.Tools) != "[ls]" {
		t.Errorf("parsed view wrong: %+v", r)
	}
	if r.FirstUser() != "ab" || r.LastUser() != "last" || r.Last().Role != "user" {
		t.Errorf("helpers: first %q last %q", r.FirstUser(), r.LastUser())
	}
}

func TestWaitRequestsTimesOut(t *testing.T) {
	t.Parallel()
	srv := Start(t)
	if _, err := srv.WaitRequests(1, 20*time.Millisecond); err == nil {
		t.Fatal("WaitRequests returned without any request")
	}
}

func TestBadJSONIs400(t *testing.T) {
	t.Parallel()
	srv := Start(t)
	srv.Push(Turn{Text: "x"})
	resp := post(t, client(t), srv, `{not json`)
	if resp.StatusCode != 400 {
		t.Fatalf("status = %d", resp.StatusCode)
	}
	if r := srv.Requests(); len(r) != 1 || r[0].ParseError == "" {
		t.Fatalf("bad request not recorded with a parse error: %+v", r)
	}
}

func TestNonStreaming(t *testing.T) {
	t.Parallel()
	srv := Start(t)
	srv.Push(Turn{ToolCalls: []ToolCall{{Name: "ls", Arguments: "{}"}}})
	resp := post(t, client(t), srv, `{"model":"m","messages":[]}`)
	var got struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID string `json:"id"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	c := got.Choices[0]
	if got.Object != "chat.completion" || c.Message.Content != nil || c.Message.ToolCalls[0].ID != "call_0_0" || c.FinishReason != "tool_calls" {
		t.Fatalf("unexpected completion %+v", got)
	}
}

func TestModelsAndAPIKey(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithModels("a", "b"), WithAPIKey("sk-test"))
	c := client(t)
	tests := []struct {
		name   string
		auth   string
		status int
		body   string
	}{
		{name: "no key", status: 401, body: "wrong API key"},
		{name: "wrong key", auth: "Bearer nope", status: 401, body: "wrong API key"},
		{name: "good key", auth: "Bearer sk-test", status: 200, body: `"data":[{"id":"a"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL()+"/models", nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.body) {
				t.Fatalf("status %d body %s", resp.StatusCode, body)
			}
		})
	}
}

// TestHeldResponsesEnd checks that a stalled stream and a long latency both
// end when the client goes away or the server closes, so neither can hang a
// test run.
func TestHeldResponsesEnd(t *testing.T) {
	t.Parallel()
	t.Run("client cancel", func(t *testing.T) {
		t.Parallel()
		srv := Start(t)
		srv.Push(Turn{Text: "abc", Stall: true, FaultAfterEvents: 1})
		ctx, cancel := context.WithCancel(context.Background())
		resp := postCtx(t, ctx, client(t), srv, streamBody)
		r := sse.NewReader(resp.Body)
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		cancel()
		if _, err := r.Next(); err == nil {
			t.Fatal("read succeeded after cancel")
		}
	})
	t.Run("server close", func(t *testing.T) {
		t.Parallel()
		srv := New()
		srv.Push(Turn{Latency: time.Hour})
		errc := make(chan error, 1)
		c := client(t)
		go func() {
			resp, err := c.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(streamBody))
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		if _, err := srv.WaitRequests(1, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		closed := make(chan struct{})
		go func() { srv.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatal("Close blocked on a delayed response")
		}
		<-errc
	})
}

// TestManyConcurrentSlowStreams is the fleet shape: 64 callers, each with
// latency and paced events, answered by a responder keyed on the request.
func TestManyConcurrentSlowStreams(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithResponder(func(r Request) Turn {
		return Turn{Text: "done:" + r.FirstUser(), Latency: 100 * time.Millisecond, ChunkDelay: time.Millisecond}
	}))
	c := client(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"task %d"}],"stream":true}`, i)
			resp, err := c.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			var text strings.Builder
			r := sse.NewReader(resp.Body)
			for {
				ev, err := r.Next()
				if err != nil {
					break
				}
				var ch struct {
					Choices []struct {
						Delta struct {
							Content string `json:"content"`
						} `json:"delta"`
					} `json:"choices"`
				}
				if json.Unmarshal([]byte(ev.Data), &ch) == nil && len(ch.Choices) > 0 {
					text.WriteString(ch.Choices[0].Delta.Content)
				}
			}
			if want := fmt.Sprintf("done:task %d", i); text.String() != want {
				errs <- fmt.Errorf("caller %d got %q, want %q", i, text.String(), want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if srv.Count() != 64 {
		t.Fatalf("count = %d", srv.Count())
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		n    int
		want []string
	}{
		{name: "empty", in: "", n: 3, want: nil},
		{name: "ascii", in: "abcdefg", n: 3, want: []string{"abc", "def", "g"}},
		{name: "no mid rune cut", in: "aé", n: 2, want: []string{"a", "é"}},
		{name: "wide rune alone", in: "🎉x", n: 1, want: []string{"🎉", "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := split(tc.in, tc.n); fmt.Sprint(got) != fmt.Sprint(tc.want) || len(got) != len(tc.want) {
				t.Fatalf("split(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}

func TestScriptJSON(t *testing.T) {
	t.Parallel()
	turns, err := LoadScript(filepath.Join("testdata", "script.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Turn{
		{Status: 429, RetryAfter: "1"},
		{Text: "hi", Latency: 200 * time.Millisecond, ChunkDelay: 5 * time.Millisecond,
			ToolCalls: []ToolCall{{Name: "ls", Arguments: "{}"}}, Usage: &Usage{PromptTokens: 3, CompletionTokens: 1}},
	}
	if !reflect.DeepEqual(turns, want) {
		t.Fatalf("loaded %+v\nwant   %+v", turns, want)
	}
	b, err := json.Marshal(want[1])
	if err != nil {
		t.Fatal(err)
	}
	var back Turn
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"latency":"200ms"`) || !reflect.DeepEqual(back, want[1]) {
		t.Fatalf("round trip: %s -> %+v", b, back)
	}
	if err := json.Unmarshal([]byte(`{"latency":"soon"}`), &back); err == nil {
		t.Fatal("bad duration accepted")
	}
}

// TestThinkingMode checks the DeepSeek rule WithThinkingMode enforces: a
// tool call the fake streamed with reasoning must come back with it.
func TestThinkingMode(t *testing.T) {
	t.Parallel()
	// The first request's tool call gets the ID call_0_0.
	first := Turn{Reasoning: "look first", ToolCalls: []ToolCall{{Name: "ls", Arguments: `{}`}}}
	later := func(id, reasoning string) string {
		return `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"},` +
			`{"role":"assistant","content":null,"reasoning_content":"` + reasoning + `","tool_calls":[{"id":"` + id + `","type":"function","function":{"name":"ls","arguments":"{}"}}]},` +
			`{"role":"tool","content":"a.go","tool_call_id":"` + id + `"}]}`
	}
	const rejected = `{"error":{"message":"Missing ` + "`reasoning_content`" + ` field in the assistant message at message index 1. ` +
		`For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",` +
		`"type":"invalid_request_error","param":null,"code":"invalid_request_error"}}` + "\n"
	tests := []struct {
		name       string
		opts       []Option
		first      Turn
		body       string
		wantStatus int
	}{
		{name: "reasoning sent back", opts: []Option{WithThinkingMode()}, first: first, body: later("call_0_0", "look first"), wantStatus: 200},
		{name: "reasoning missing", opts: []Option{WithThinkingMode()}, first: first, body: later("call_0_0", ""), wantStatus: 400},
		{name: "call the fake did not make", opts: []Option{WithThinkingMode()}, first: first, body: later("call_other", ""), wantStatus: 200},
		{name: "call made without reasoning", opts: []Option{WithThinkingMode()}, first: Turn{ToolCalls: first.ToolCalls}, body: later("call_0_0", ""), wantStatus: 200},
		{name: "check off by default", first: first, body: later("call_0_0", ""), wantStatus: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := Start(t, tc.opts...)
			srv.Push(tc.first, Turn{Text: "done"})
			c := client(t)
			resp := post(t, c, srv, streamBody)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp = post(t, c, srv, tc.body)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.wantStatus, body)
			}
			if tc.wantStatus != 400 {
				return
			}
			if string(body) != rejected {
				t.Errorf("body\n%s\nwant\n%s", body, rejected)
			}
			if srv.Remaining() != 1 || srv.Count() != 2 {
				t.Errorf("remaining %d, count %d: a rejected request must be recorded and consume no turn", srv.Remaining(), srv.Count())
			}
		})
	}
}
