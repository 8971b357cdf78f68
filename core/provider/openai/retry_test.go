package openai

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
)

func TestRetryStatus(t *testing.T) {
	t.Parallel()
	clockNow := time.Now() // only for building HTTP dates; the fake clock starts near it
	tests := []struct {
		name       string
		turns      []providertest.Turn
		maxRetries int
		wantCount  int
		wantErr    int // expected StatusError code, 0 for success
		// checkSleeps inspects what the provider waited.
		checkSleeps func(t *testing.T, sleeps []time.Duration)
	}{
		{
			name:      "429 retry-after seconds",
			turns:     []providertest.Turn{{Status: 429, RetryAfter: "1"}, {Text: "ok"}},
			wantCount: 2,
			checkSleeps: func(t *testing.T, s []time.Duration) {
				if len(s) != 1 || s[0] != time.Second {
					t.Errorf("sleeps = %v, want [1s]", s)
				}
			},
		},
		{
			name:      "429 retry-after http date",
			turns:     []providertest.Turn{{Status: 429, RetryAfter: clockNow.Add(3 * time.Second).UTC().Format(http.TimeFormat)}, {Text: "ok"}},
			wantCount: 2,
			checkSleeps: func(t *testing.T, s []time.Duration) {
				// The date has one-second resolution.
				if len(s) != 1 || s[0] <= time.Second || s[0] > 3*time.Second {
					t.Errorf("sleeps = %v, want one in (1s, 3s]", s)
				}
			},
		},
		{
			name:      "retry-after capped",
			turns:     []providertest.Turn{{Status: 503, RetryAfter: "86400"}, {Text: "ok"}},
			wantCount: 2,
			checkSleeps: func(t *testing.T, s []time.Duration) {
				if len(s) != 1 || s[0] != maxRetryAfter {
					t.Errorf("sleeps = %v, want [%v]", s, maxRetryAfter)
				}
			},
		},
		{
			name:      "429 without retry-after backs off",
			turns:     []providertest.Turn{{Status: 429}, {Status: 429}, {Text: "ok"}},
			wantCount: 3,
			checkSleeps: func(t *testing.T, s []time.Duration) {
				var sum time.Duration
				for _, d := range s {
					sum += d
				}
				// Full jitter over base 100ms: at most 100ms + 200ms.
				if sum > 300*time.Millisecond {
					t.Errorf("slept %v in %v, more than the backoff bound", sum, s)
				}
			},
		},
		{
			name:       "500 until retries run out",
			turns:      []providertest.Turn{{Status: 500, Body: "upstream exploded " + strings.Repeat("x", 1000)}, {Status: 500, Body: "upstream exploded"}, {Status: 500, Body: "upstream exploded " + strings.Repeat("x", 1000)}, {Text: "never"}},
			maxRetries: 2,
			wantCount:  3,
			wantErr:    500,
		},
		{
			name:      "400 is not retried",
			turns:     []providertest.Turn{{Status: 400, Body: `{"error":{"message":"bad"}}`}, {Text: "never"}},
			wantCount: 1,
			wantErr:   400,
		},
		{
			name:       "negative max retries disables retry",
			turns:      []providertest.Turn{{Status: 503}, {Text: "never"}},
			maxRetries: -1,
			wantCount:  1,
			wantErr:    503,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.Start(t)
			srv.Push(tc.turns...)
			cfg := testConfig(t, srv)
			cfg.MaxRetries = tc.maxRetries
			cfg.RetryBase = 100 * time.Millisecond
			p, fc := fakeProvider(t, cfg)
			ch, err := p.Stream(context.Background(), userReq("q"))
			if got := srv.Count(); got != tc.wantCount {
				t.Errorf("requests = %d, want %d", got, tc.wantCount)
			}
			if tc.checkSleeps != nil {
				tc.checkSleeps(t, fc.slept())
			}
			if tc.wantErr == 0 {
				if err != nil {
					t.Fatalf("Stream: %v", err)
				}
				if r := fold(collect(t, ch)); r.text != "ok" {
					t.Fatalf("text = %q", r.text)
				}
				return
			}
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != tc.wantErr {
				t.Fatalf("err = %v, want StatusError %d", err, tc.wantErr)
			}
			if len(se.Body) > bodyExcerptBytes || se.Body == "" {
				t.Errorf("body excerpt has %d bytes, want 1..%d", len(se.Body), bodyExcerptBytes)
			}
			if said := bodyMessage(se.Body); !strings.Contains(err.Error(), said[:min(len(said), 20)]) {
				t.Errorf("error %q does not say what the endpoint said (%q)", err, said)
			}
			if se.Detail() != se.Body {
				t.Errorf("Detail() = %q, want the raw body %q", se.Detail(), se.Body)
			}
		})
	}
}

func TestRetryExhaustedMessage(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Status: 502, Body: "bad gateway"}, providertest.Turn{Status: 502, Body: "bad gateway"})
	cfg := testConfig(t, srv)
	cfg.MaxRetries = 1
	p, _ := fakeProvider(t, cfg)
	_, err := p.Stream(context.Background(), userReq("q"))
	if err == nil || !strings.Contains(err.Error(), "after 2 attempts") || !strings.Contains(err.Error(), "status 502") {
		t.Fatalf("err = %v", err)
	}
}

// refusingClient dials a closed port for the first refusals connections,
// a real "connection refused" from the kernel, and the fake afterwards.
func refusingClient(t *testing.T, refusals int32) (*http.Client, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	var dials atomic.Int32
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) <= refusals {
			addr = dead
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}, &dials
}

func TestRetryConnectionRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		refusals  int32
		wantDials int32
		wantOK    bool
	}{
		{name: "recovers", refusals: 2, wantDials: 3, wantOK: true},
		{name: "gives up", refusals: 100, wantDials: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.Start(t)
			srv.Push(providertest.Turn{Text: "ok"})
			cfg := testConfig(t, srv)
			cfg.MaxRetries = 2
			var dials *atomic.Int32
			cfg.HTTPClient, dials = refusingClient(t, tc.refusals)
			p, fc := fakeProvider(t, cfg)
			ch, err := p.Stream(context.Background(), userReq("q"))
			if got := dials.Load(); got != tc.wantDials {
				t.Errorf("dials = %d, want %d", got, tc.wantDials)
			}
			if n := len(fc.slept()); n != 2 {
				t.Errorf("backoff sleeps = %d, want 2", n)
			}
			if !tc.wantOK {
				var op *net.OpError
				if !errors.As(err, &op) || op.Op != "dial" {
					t.Fatalf("err = %v, want a dial error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r := fold(collect(t, ch)); r.text != "ok" {
				t.Fatalf("text = %q", r.text)
			}
		})
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Status: 503, RetryAfter: "60"}, providertest.Turn{Text: "never"})
	cfg := testConfig(t, srv)
	// Real clock: the 60 s wait must end at cancellation, not run out.
	p, err := newProvider(cfg, realClock, &gateSet{gates: map[string]*gate{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		if _, err := srv.WaitRequests(1, 10*time.Second); err == nil {
			cancel()
		}
	}()
	done := make(chan error, 1)
	go func() {
		_, err := p.Stream(ctx, userReq("q"))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("backoff wait ignored cancellation")
	}
	cancel()
	if srv.Count() != 1 {
		t.Fatalf("requests = %d, want 1", srv.Count())
	}
}

// TestSharedEndpointGate uses the process-wide gates and the real clock:
// after one provider sees a 429 with Retry-After: 1, another provider for
// the same URL must not reach the server until that second has passed, and
// a caller whose context ends while waiting never reaches it at all.
func TestSharedEndpointGate(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Status: 429, RetryAfter: "1"}, providertest.Turn{Text: "after the gate"})
	newP := func() *Provider {
		cfg := testConfig(t, srv)
		cfg.MaxRetries = -1
		p, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c := newP(), newP(), newP()

	_, err := a.Stream(context.Background(), userReq("a"))
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 429 || se.RetryAfter != time.Second {
		t.Fatalf("first request: %v, want 429 with 1s Retry-After", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Stream(ctx, userReq("c")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting caller: %v, want its deadline", err)
	}
	if srv.Count() != 1 {
		t.Fatalf("a caller got through the closed gate: %d requests", srv.Count())
	}

	ch, err := b.Stream(context.Background(), userReq("b"))
	if err != nil {
		t.Fatal(err)
	}
	if r := fold(collect(t, ch)); r.text != "after the gate" {
		t.Fatalf("text = %q", r.text)
	}
	reqs := srv.Requests()
	if gap := reqs[1].Arrived.Sub(reqs[0].Arrived); gap < time.Second {
		t.Fatalf("second request arrived %v after the 429, before the 1s Retry-After", gap)
	}
}

// TestRefusalHalvesEndpointWindow: a 429 and a 503 both say the endpoint
// is over its limit, so each halves the window every agent of the process
// shares (docs/SPEC.md, concurrency per endpoint); other failures say
// nothing about capacity and leave it alone. The limiter is keyed by chat
// URL and lives for the process, so the test compares against what it
// held before the request rather than against a fresh limiter.
func TestRefusalHalvesEndpointWindow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status    int
		throttled bool
	}{
		{status: http.StatusTooManyRequests, throttled: true},
		{status: http.StatusServiceUnavailable, throttled: true},
		{status: http.StatusInternalServerError},
		{status: http.StatusBadGateway},
		{status: http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			t.Parallel()
			srv := providertest.Start(t)
			srv.Push(providertest.Turn{Status: tc.status}, providertest.Turn{Text: "never"})
			cfg := testConfig(t, srv)
			cfg.MaxRetries = -1
			p, _ := fakeProvider(t, cfg)
			before := p.lim.Stats()
			_, err := p.Stream(context.Background(), userReq("q"))
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != tc.status {
				t.Fatalf("err = %v, want StatusError %d", err, tc.status)
			}
			after := p.lim.Stats()
			wantThrottled, wantDecreases, wantWindow := before.Throttled, before.Decreases, before.Window
			if tc.throttled {
				wantThrottled, wantDecreases, wantWindow = before.Throttled+1, before.Decreases+1, max(1, before.Window/2)
			}
			if after.Throttled != wantThrottled || after.Decreases != wantDecreases || after.Window != wantWindow {
				t.Errorf("after a %d: throttled %d, decreases %d, window %d; want %d, %d, %d (before: %+v)",
					tc.status, after.Throttled, after.Decreases, after.Window, wantThrottled, wantDecreases, wantWindow, before)
			}
			if after.InFlight != before.InFlight {
				t.Errorf("in flight %d after the refusal, %d before: the slot was not given back", after.InFlight, before.InFlight)
			}
		})
	}
}

func TestBackoffBounds(t *testing.T) {
	t.Parallel()
	const base, limit = 500 * time.Millisecond, 20 * time.Second
	tests := []struct {
		attempt int
		ceil    time.Duration
	}{
		{0, 500 * time.Millisecond},
		{1, time.Second},
		{3, 4 * time.Second},
		{6, limit},
		{70, limit},
	}
	for _, tc := range tests {
		t.Run(tc.ceil.String(), func(t *testing.T) {
			t.Parallel()
			var maxSeen time.Duration
			for range 2000 {
				d := backoff(tc.attempt, base, limit)
				if d < 0 || d > tc.ceil {
					t.Fatalf("backoff(%d) = %v, outside [0, %v]", tc.attempt, d, tc.ceil)
				}
				maxSeen = max(maxSeen, d)
			}
			// Full jitter spreads over the whole range.
			if maxSeen < tc.ceil/2 {
				t.Fatalf("backoff(%d) never exceeded %v in 2000 draws", tc.attempt, maxSeen)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		in   string
		want time.Duration
		ok   bool
	}{
		{name: "absent", in: ""},
		{name: "seconds", in: "7", want: 7 * time.Second, ok: true},
		{name: "zero", in: "0", want: 0, ok: true},
		{name: "padded", in: " 2 ", want: 2 * time.Second, ok: true},
		{name: "negative", in: "-3"},
		{name: "capped", in: "3600", want: maxRetryAfter, ok: true},
		{name: "huge", in: "99999999999999999999", ok: false},
		{name: "date", in: now.Add(10 * time.Second).Format(http.TimeFormat), want: 10 * time.Second, ok: true},
		{name: "past date", in: now.Add(-time.Hour).Format(http.TimeFormat), want: 0, ok: true},
		{name: "far date capped", in: now.Add(time.Hour).Format(http.TimeFormat), want: maxRetryAfter, ok: true},
		{name: "garbage", in: "soon"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := parseRetryAfter(tc.in, now)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestNewConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     provider.Config
		wantURL string
		wantErr string
	}{
		{name: "base url", cfg: provider.Config{BaseURL: "https://api.deepseek.com"}, wantURL: "https://api.deepseek.com/chat/completions"},
		{name: "trailing slash", cfg: provider.Config{BaseURL: "https://api.example.com/v1/"}, wantURL: "https://api.example.com/v1/chat/completions"},
		{name: "chat url wins", cfg: provider.Config{BaseURL: "https://a/v1", ChatURL: "https://proxy/x/chat"}, wantURL: "https://proxy/x/chat"},
		{name: "nothing", cfg: provider.Config{}, wantErr: "base_url or chat_url is required"},
		{name: "bad scheme", cfg: provider.Config{BaseURL: "ftp://host"}, wantErr: "not an absolute http(s) URL"},
		{name: "relative", cfg: provider.Config{BaseURL: "/v1"}, wantErr: "not an absolute http(s) URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := New(tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.chatURL != tc.wantURL {
				t.Fatalf("chat url = %q, want %q", p.chatURL, tc.wantURL)
			}
			if p.maxRetries != defaultMaxRetries || p.retryBase != defaultRetryBase || p.stall != defaultStall {
				t.Fatalf("defaults not applied: %+v", p)
			}
		})
	}
}

func TestListModels(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t, providertest.WithModels("deepseek-reasoner", "deepseek-chat"), providertest.WithAPIKey("sk-test"))
	tests := []struct {
		name    string
		mut     func(*provider.Config)
		want    string
		wantErr int
	}{
		{name: "base url", mut: func(*provider.Config) {}, want: "[deepseek-chat deepseek-reasoner]"},
		{name: "from chat url", mut: func(c *provider.Config) { c.ChatURL, c.BaseURL = c.BaseURL+"/chat/completions", "" }, want: "[deepseek-chat deepseek-reasoner]"},
		{name: "models url", mut: func(c *provider.Config) { c.ModelsURL, c.BaseURL = c.BaseURL+"/models", "" }, want: "[deepseek-chat deepseek-reasoner]"},
		{name: "wrong key", mut: func(c *provider.Config) { c.APIKey = "nope" }, wantErr: 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t, srv)
			tc.mut(&cfg)
			ids, err := ListModels(context.Background(), cfg)
			if tc.wantErr != 0 {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != tc.wantErr {
					t.Fatalf("err = %v, want status %d", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join([]string{"[", strings.Join(ids, " "), "]"}, ""); got != tc.want {
				t.Fatalf("ids = %s, want %s", got, tc.want)
			}
		})
	}
	if _, err := ListModels(context.Background(), provider.Config{ChatURL: "https://proxy/custom"}); err == nil {
		t.Fatal("no models URL derivable, yet no error")
	}
}

// TestStatusErrorInWords: an OpenAI-style error body is reported by its
// message, not as JSON; anything else as the excerpt it is.
func TestStatusErrorInWords(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}`: "status 402 Payment Required: Insufficient Balance",
		`{"error":"model not found"}`: "status 402 Payment Required: model not found",
		`{"message":"slow down"}`:     "status 402 Payment Required: slow down",
		`<html>gateway</html>`:        "status 402 Payment Required: <html>gateway</html>",
		``:                            "status 402 Payment Required",
	} {
		se := &StatusError{StatusCode: 402, Body: body}
		if se.Error() != want {
			t.Errorf("body %q: %q, want %q", body, se.Error(), want)
		}
	}
}
