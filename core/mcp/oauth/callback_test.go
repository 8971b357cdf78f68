package oauth

import (
	"context"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestCallback: the loopback listener takes one authorization response,
// refuses a second, and is gone after close.
func TestCallback(t *testing.T) {
	defer goleak.VerifyNone(t)
	cb, err := listenCallback()
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	get := func(query string) int {
		t.Helper()
		resp, err := hc.Get(cb.redirect + "?" + query)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("code=abc&state=xyz&iss=https%3A%2F%2Fas.example.com"); code != http.StatusOK {
		t.Fatalf("first callback answered %d", code)
	}
	if code := get("code=again"); code != http.StatusConflict {
		t.Errorf("second callback answered %d, want 409", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cb.wait(ctx)
	if err != nil || res.Code != "abc" || res.State != "xyz" || res.Iss != "https://as.example.com" {
		t.Fatalf("wait = %+v, %v", res, err)
	}
	cb.close()
	cb.close()
	if _, err := hc.Get(cb.redirect); err == nil {
		t.Error("the listener still answers after close")
	}
}

// TestResultRefusal: an error redirect is reported, not taken for a code.
func TestResultRefusal(t *testing.T) {
	t.Parallel()
	q := map[string][]string{"error": {"access_denied"}, "error_description": {"the user said no"}}
	if _, err := result(q); err == nil {
		t.Fatal("an error redirect was accepted")
	}
	if _, err := result(map[string][]string{"state": {"s"}}); err == nil {
		t.Fatal("a redirect without a code was accepted")
	}
}
