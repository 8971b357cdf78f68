package providertest

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestMaxInFlight holds two requests open at a fake limited to two and
// checks that a third is turned away with 429 at once, unrecorded, and
// that a request after the two finished is accepted again.
func TestMaxInFlight(t *testing.T) {
	release := make(chan struct{})
	srv := Start(t, WithMaxInFlight(2), WithResponder(func(Request) Turn {
		<-release
		return Turn{Text: "ok"}
	}))
	c := client(t)
	const body = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := post(t, c, srv, body)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	if _, err := srv.WaitRequests(2, 10*time.Second); err != nil {
		close(release)
		t.Fatal(err)
	}
	resp := post(t, c, srv, body)
	resp.Body.Close()
	close(release)
	wg.Wait()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "" {
		t.Fatalf("third request: status %d, Retry-After %q; want 429 without it", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	for i, code := range codes {
		if code != http.StatusOK {
			t.Errorf("held request %d: status %d", i, code)
		}
	}
	if srv.Throttled() != 1 || srv.Count() != 2 || srv.PeakInFlight() != 2 {
		t.Errorf("throttled %d, recorded %d, peak %d; want 1, 2, 2", srv.Throttled(), srv.Count(), srv.PeakInFlight())
	}
	after := post(t, c, srv, body)
	_, _ = io.Copy(io.Discard, after.Body)
	after.Body.Close()
	if after.StatusCode != http.StatusOK {
		t.Errorf("request after the others ended: status %d", after.StatusCode)
	}
}

// TestPrefixCache checks that a request is credited with the prefix an
// earlier, answered request shares with it, and that one arriving before
// anything was answered misses.
func TestPrefixCache(t *testing.T) {
	srv := Start(t, WithPrefixCache(), WithResponder(func(Request) Turn { return Turn{Text: "ok"} }))
	c := client(t)
	body := func(user string) string {
		return `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"a long and stable system prompt"},{"role":"user","content":"` + user + `"}]}`
	}
	hits := func(user string) int {
		resp := post(t, c, srv, body(user))
		evs, _ := events(t, resp.Body)
		for _, ev := range evs {
			var chunk struct {
				Usage *struct {
					Hit *int `json:"prompt_cache_hit_tokens"`
				} `json:"usage"`
			}
			if json.Unmarshal([]byte(ev), &chunk) == nil && chunk.Usage != nil && chunk.Usage.Hit != nil {
				return *chunk.Usage.Hit
			}
		}
		t.Fatalf("no usage in %q", evs)
		return -1
	}
	if n := hits("first"); n != 0 {
		t.Fatalf("cold request: %d cache hit tokens", n)
	}
	shared := hits("second")
	if shared <= 0 {
		t.Fatalf("sibling with the same system prompt: %d cache hit tokens", shared)
	}
	if again := hits("first"); again <= shared {
		t.Fatalf("repeated request: %d hit tokens, want more than the shared %d", again, shared)
	}
}
