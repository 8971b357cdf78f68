package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
)

func TestStreamText(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t, providertest.WithAPIKey("sk-test"))
	srv.Push(providertest.Turn{Text: "Hello, world! 你好 🎉 <b>&</b>", ChunkBytes: 3})
	p, _ := fakeProvider(t, testConfig(t, srv))
	r := stream(t, p, userReq("hi"))
	if r.text != "Hello, world! 你好 🎉 <b>&</b>" {
		t.Errorf("text = %q", r.text)
	}
	if r.term.Type != provider.ChunkDone || r.term.FinishReason != "stop" {
		t.Errorf("terminal = %+v", r.term)
	}
	if got := squeeze(r.order); got != "tu." {
		t.Errorf("chunk order = %q, want text, usage, done", got)
	}
	req := srv.Requests()[0]
	if req.Path != "/v1/chat/completions" || req.Header.Get("Accept") != "text/event-stream" ||
		req.Header.Get("Content-Type") != "application/json" {
		t.Errorf("request path %q headers %v", req.Path, req.Header)
	}
	if req.Model != "fake-model" || !req.Stream || !req.IncludeUsage {
		t.Errorf("request model %q stream %v include_usage %v", req.Model, req.Stream, req.IncludeUsage)
	}
}

func TestStreamNoKeyNoAuthHeader(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Text: "x"})
	cfg := testConfig(t, srv)
	cfg.APIKey = ""
	p, _ := fakeProvider(t, cfg)
	stream(t, p, userReq("hi"))
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Fatalf("Authorization = %q, want none", h)
	}
}

func TestStreamReasoning(t *testing.T) {
	t.Parallel()
	for _, d := range []providertest.Dialect{providertest.DeepSeek, providertest.OpenAI} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			srv := providertest.Start(t, providertest.WithDialect(d))
			srv.Push(providertest.Turn{Reasoning: "First, consider the question.", Text: "42"})
			p, _ := fakeProvider(t, testConfig(t, srv))
			r := stream(t, p, userReq("q"))
			if r.reasoning != "First, consider the question." || r.text != "42" {
				t.Fatalf("reasoning %q text %q", r.reasoning, r.text)
			}
			if got := squeeze(r.order); got != "rtu." {
				t.Fatalf("chunk order = %q, want reasoning, text, usage, done", got)
			}
		})
	}
}

func TestStreamToolCalls(t *testing.T) {
	t.Parallel()
	calls := []providertest.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: `{"path":"main.go","limit":200}`},
		{ID: "call_b", Name: "grep", Arguments: `{"pattern":"func \\w+\\(","glob":"**/*.go"}`},
		{ID: "call_c", Name: "ls", Arguments: `{}`},
	}
	tests := []struct {
		name  string
		turn  providertest.Turn
		order string
	}{
		{name: "single", turn: providertest.Turn{ToolCalls: calls[:1]}, order: "cu."},
		{name: "sequential", turn: providertest.Turn{ToolCalls: calls}, order: "cu."},
		{name: "interleaved", turn: providertest.Turn{ToolCalls: calls, Interleave: true, ChunkBytes: 2}, order: "cu."},
		{name: "after text", turn: providertest.Turn{Text: "Let me look.", ToolCalls: calls}, order: "tcu."},
		{name: "one byte pieces", turn: providertest.Turn{ToolCalls: calls, ChunkBytes: 1}, order: "cu."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.Start(t)
			srv.Push(tc.turn)
			p, _ := fakeProvider(t, testConfig(t, srv))
			r := stream(t, p, userReq("go"))
			if len(r.calls) != len(tc.turn.ToolCalls) {
				t.Fatalf("got %d calls, want %d", len(r.calls), len(tc.turn.ToolCalls))
			}
			for i, want := range tc.turn.ToolCalls {
				got := r.calls[i]
				if got.ID != want.ID || got.Name != want.Name || got.Arguments != want.Arguments {
					t.Errorf("call %d = %+v, want %+v", i, got, want)
				}
			}
			if r.term.FinishReason != "tool_calls" {
				t.Errorf("finish = %q", r.term.FinishReason)
			}
			if got := squeeze(r.order); got != tc.order {
				t.Errorf("chunk order = %q, want %q", got, tc.order)
			}
		})
	}
}

func TestStreamUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		dialect providertest.Dialect
		usage   providertest.Usage
		want    provider.Usage
	}{
		{
			name:    "deepseek",
			dialect: providertest.DeepSeek,
			usage:   providertest.Usage{PromptTokens: 1200, CompletionTokens: 300, CacheHitTokens: 1024, CacheMissTokens: 176, ReasoningTokens: 120},
			want:    provider.Usage{PromptTokens: 1200, CompletionTokens: 300, TotalTokens: 1500, CacheHitTokens: 1024, CacheMissTokens: 176, ReasoningTokens: 120},
		},
		{
			name:    "openai derives miss",
			dialect: providertest.OpenAI,
			usage:   providertest.Usage{PromptTokens: 2000, CompletionTokens: 50, CacheHitTokens: 1536, ReasoningTokens: 10},
			want:    provider.Usage{PromptTokens: 2000, CompletionTokens: 50, TotalTokens: 2050, CacheHitTokens: 1536, CacheMissTokens: 464, ReasoningTokens: 10},
		},
		{
			name:    "openai no cache",
			dialect: providertest.OpenAI,
			usage:   providertest.Usage{PromptTokens: 10, CompletionTokens: 5},
			want:    provider.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15, CacheMissTokens: 10},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.Start(t, providertest.WithDialect(tc.dialect))
			srv.Push(providertest.Turn{Text: "ok", Usage: &tc.usage})
			p, _ := fakeProvider(t, testConfig(t, srv))
			r := stream(t, p, userReq("q"))
			if len(r.usage) != 1 || r.usage[0] != tc.want {
				t.Fatalf("usage = %+v, want [%+v]", r.usage, tc.want)
			}
		})
	}
}

func TestStreamFailures(t *testing.T) {
	t.Parallel()
	call := []providertest.ToolCall{{ID: "c1", Name: "write_file", Arguments: `{"path":"a.txt","content":"hello world"}`}}
	tests := []struct {
		name  string
		turn  providertest.Turn
		check func(t *testing.T, err error)
		calls int
	}{
		{
			name: "cut inside tool call",
			// role, call header, one argument piece, then the cut.
			turn: providertest.Turn{ToolCalls: call, CutAfterEvents: 3},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "write_file") {
					t.Errorf("err = %v, want a cut naming write_file", err)
				}
			},
		},
		{
			name: "cut before done",
			turn: providertest.Turn{ToolCalls: call, CutAfterEvents: 1000},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("err = %v, want unexpected EOF", err)
				}
			},
			// The choice finished before the cut, so the call was
			// complete and delivered; the stream still ends in error.
			calls: 1,
		},
		{
			name: "malformed chunk",
			turn: providertest.Turn{Text: "some text here", Malformed: true, FaultAfterEvents: 2},
			check: func(t *testing.T, err error) {
				var se *json.SyntaxError
				if !errors.As(err, &se) || !strings.Contains(err.Error(), "malformed stream chunk") {
					t.Errorf("err = %v, want a malformed-chunk syntax error", err)
				}
			},
		},
		{
			name: "error object",
			turn: providertest.Turn{Text: "some text", StreamError: "backend overloaded", FaultAfterEvents: 2},
			check: func(t *testing.T, err error) {
				var ae *APIError
				if !errors.As(err, &ae) || ae.Message != "backend overloaded" || ae.Type != "server_error" {
					t.Errorf("err = %v, want APIError backend overloaded", err)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.Start(t)
			srv.Push(tc.turn, providertest.Turn{Text: "must not be requested"})
			p, _ := fakeProvider(t, testConfig(t, srv))
			r := stream(t, p, userReq("q"))
			if r.term.Type != provider.ChunkError {
				t.Fatalf("terminal = %v, want error", r.term.Type)
			}
			tc.check(t, r.term.Err)
			if len(r.calls) != tc.calls {
				t.Errorf("got %d tool calls, want %d", len(r.calls), tc.calls)
			}
			// A stream that had started is never retried.
			if srv.Count() != 1 {
				t.Errorf("requests = %d, want 1", srv.Count())
			}
		})
	}
}

// TestStall runs alone (not parallel) so goleak can check that nothing of
// the stalled exchange is left behind.
func TestStall(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	const stall = 200 * time.Millisecond
	t.Run("mid stream", func(t *testing.T) {
		srv := providertest.Start(t)
		srv.Push(providertest.Turn{Text: "abcdefgh", ChunkBytes: 2, Stall: true, FaultAfterEvents: 2})
		cfg := testConfig(t, srv)
		cfg.StallTimeout = stall
		p, _ := fakeProvider(t, cfg)
		start := time.Now()
		r := stream(t, p, userReq("q"))
		if !errors.Is(r.term.Err, ErrStalled) || !strings.Contains(r.term.Err.Error(), "0.2s") {
			t.Fatalf("terminal = %v, want a stall after 0.2s", r.term.Err)
		}
		if r.text != "ab" {
			t.Errorf("text before the stall = %q, want %q", r.text, "ab")
		}
		if elapsed := time.Since(start); elapsed < stall {
			t.Errorf("stall reported after %v, before the %v timeout", elapsed, stall)
		}
	})
	t.Run("before headers", func(t *testing.T) {
		srv := providertest.Start(t)
		srv.Push(providertest.Turn{Latency: time.Hour})
		cfg := testConfig(t, srv)
		cfg.StallTimeout = stall
		cfg.MaxRetries = -1
		p, _ := fakeProvider(t, cfg)
		_, err := p.Stream(context.Background(), userReq("q"))
		if !errors.Is(err, ErrStalled) {
			t.Fatalf("err = %v, want a stall", err)
		}
	})
}

// TestSteadyStreamIsNoStall sends a reply whose gaps are all far below the
// stall timeout while the whole reply outlasts it twice, so only a timer
// re-armed on every read lets it through. The margins are wide because the
// test machines are shared and noisy.
func TestSteadyStreamIsNoStall(t *testing.T) {
	t.Parallel()
	const stall = time.Second
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Text: "0123456789abcdefghi", ChunkBytes: 1, ChunkDelay: 110 * time.Millisecond})
	cfg := testConfig(t, srv)
	cfg.StallTimeout = stall
	p, _ := fakeProvider(t, cfg)
	start := time.Now()
	r := stream(t, p, userReq("q"))
	if r.term.Type != provider.ChunkDone || r.text != "0123456789abcdefghi" {
		t.Fatalf("terminal %v %v, text %q", r.term.Type, r.term.Err, r.text)
	}
	if elapsed := time.Since(start); elapsed < 2*stall {
		t.Fatalf("reply took %v; the test needs it to outlast the timeout twice", elapsed)
	}
}

// TestCancelMidStream runs alone so goleak can prove the producer and the
// connection are gone once the channel closes.
func TestCancelMidStream(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	tests := []struct {
		name string
		// read is how many chunks the consumer takes before cancelling;
		// it then keeps draining or, with walkAway, never reads again.
		read     int
		walkAway bool
	}{
		{name: "consumer drains", read: 1},
		{name: "consumer walks away", read: 0, walkAway: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.Start(t)
			srv.Push(providertest.Turn{Text: strings.Repeat("word ", 200), ChunkBytes: 5, Stall: true, FaultAfterEvents: 100})
			p, _ := fakeProvider(t, testConfig(t, srv))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch, err := p.Stream(ctx, userReq("q"))
			if err != nil {
				t.Fatal(err)
			}
			for range tc.read {
				<-ch
			}
			cancel()
			if tc.walkAway {
				return // goleak checks the producer still exits
			}
			rest := collect(t, ch)
			last := rest[len(rest)-1]
			if last.Type != provider.ChunkError || !errors.Is(last.Err, context.Canceled) {
				t.Fatalf("last chunk = %+v, want a cancellation error", last)
			}
		})
	}
}

func TestCancelBeforeHeaders(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Latency: time.Hour})
	p, _ := fakeProvider(t, testConfig(t, srv))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		if _, err := srv.WaitRequests(1, 10*time.Second); err == nil {
			cancel()
		}
	}()
	_, err := p.Stream(ctx, userReq("q"))
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if srv.Count() != 1 {
		t.Fatalf("requests = %d, want 1 (no retry after cancel)", srv.Count())
	}
}

func TestRegistered(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Text: "via registry"})
	cfg := testConfig(t, srv)
	p, err := provider.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "fake" {
		t.Errorf("Name = %q", p.Name())
	}
	ch, err := p.Stream(context.Background(), userReq("q"))
	if err != nil {
		t.Fatal(err)
	}
	if r := fold(collect(t, ch)); r.text != "via registry" {
		t.Fatalf("text = %q", r.text)
	}
}

func TestDeliverMakesRoom(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		buffered int
		cancel   bool
	}{
		{name: "room left", buffered: 2},
		{name: "full and cancelled", buffered: 4, cancel: true},
		{name: "empty and cancelled", buffered: 0, cancel: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ch := make(chan provider.Chunk, 4)
			for range tc.buffered {
				ch <- provider.Chunk{Type: provider.ChunkText, Text: "stale"}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			term := provider.Chunk{Type: provider.ChunkError, Err: context.Canceled}
			deliver(ctx, ch, term) // must return without a reader
			close(ch)
			var last provider.Chunk
			n := 0
			for c := range ch {
				last, n = c, n+1
			}
			if last.Type != provider.ChunkError || n > cap(ch) {
				t.Fatalf("last of %d chunks = %v, want the terminal error", n, last.Type)
			}
		})
	}
}

func TestJSONReplyIsNotAStream(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = io.WriteString(w, `{"object":"chat.completion","choices":[]}`)
	}))
	t.Cleanup(hs.Close)
	p, _ := fakeProvider(t, provider.Config{BaseURL: hs.URL, Model: "m", HTTPClient: testClient(t)})
	_, err := p.Stream(context.Background(), userReq("q"))
	if err == nil || !strings.Contains(err.Error(), "instead of an event stream") || !strings.Contains(err.Error(), "chat.completion") {
		t.Fatalf("err = %v", err)
	}
}
