package openai

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeClock records every sleep and advances instantly, so backoff and
// Retry-After handling are observable without waiting.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Now()} }

func (f *fakeClock) clock() clock { return clock{now: f.now, sleep: f.sleep} }

func (f *fakeClock) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sleeps = append(f.sleeps, d)
	f.t = f.t.Add(d)
	return nil
}

func (f *fakeClock) slept() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// testConfig points a provider at srv with a private transport whose idle
// connections close when the test ends.
func testConfig(t *testing.T, srv *providertest.Server) provider.Config {
	t.Helper()
	return provider.Config{
		Name:       "fake",
		Kind:       Kind,
		BaseURL:    srv.URL(),
		Model:      "fake-model",
		APIKey:     "sk-test",
		HTTPClient: testClient(t),
	}
}

func testClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// fakeProvider builds a provider on a fake clock with its own gates, so
// tests never share backoff state.
func fakeProvider(t *testing.T, cfg provider.Config) (*Provider, *fakeClock) {
	t.Helper()
	fc := newFakeClock()
	p, err := newProvider(cfg, fc.clock(), &gateSet{gates: map[string]*gate{}})
	if err != nil {
		t.Fatal(err)
	}
	return p, fc
}

// collect drains a stream, failing if it does not end in time or breaks
// the one-terminal-chunk contract.
func collect(t *testing.T, ch <-chan provider.Chunk) []provider.Chunk {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	var out []provider.Chunk
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				checkTerminal(t, out)
				return out
			}
			out = append(out, c)
		case <-timeout.C:
			t.Fatalf("stream did not end; got %d chunks", len(out))
		}
	}
}

func isTerminal(c provider.Chunk) bool {
	return c.Type == provider.ChunkDone || c.Type == provider.ChunkError
}

func checkTerminal(t testing.TB, cs []provider.Chunk) {
	t.Helper()
	if len(cs) == 0 || !isTerminal(cs[len(cs)-1]) {
		t.Fatalf("stream did not end with a terminal chunk: %v", types(cs))
	}
	for _, c := range cs[:len(cs)-1] {
		if isTerminal(c) {
			t.Fatalf("terminal chunk before the end: %v", types(cs))
		}
	}
}

func types(cs []provider.Chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Type.String()
	}
	return out
}

// result is a stream folded into what a consumer keeps.
type result struct {
	text, reasoning string
	calls           []provider.ToolCall
	usage           []provider.Usage
	term            provider.Chunk
	order           string // one letter per chunk kind, in arrival order
}

func fold(cs []provider.Chunk) result {
	var r result
	var text, reasoning strings.Builder
	for _, c := range cs {
		switch c.Type {
		case provider.ChunkText:
			text.WriteString(c.Text)
			r.order += "t"
		case provider.ChunkReasoning:
			reasoning.WriteString(c.Text)
			r.order += "r"
		case provider.ChunkToolCall:
			r.calls = append(r.calls, *c.ToolCall)
			r.order += "c"
		case provider.ChunkUsage:
			r.usage = append(r.usage, *c.Usage)
			r.order += "u"
		default:
			r.term = c
			r.order += "."
		}
	}
	r.text, r.reasoning = text.String(), reasoning.String()
	return r
}

// squeeze collapses runs of the same letter so that chunk order can be
// asserted without depending on how many pieces each part was sent in.
func squeeze(s string) string {
	var b strings.Builder
	for i := range len(s) {
		if i == 0 || s[i] != s[i-1] {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func stream(t *testing.T, p *Provider, req provider.Request) result {
	t.Helper()
	ch, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	return fold(collect(t, ch))
}

func userReq(text string) provider.Request {
	return provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: text}}}
}
