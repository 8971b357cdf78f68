package serve

import (
	"net"
	"net/http"
	"testing"
)

func TestOriginCheck(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	id := h.newSession()
	cmd := map[string]any{"type": "cancel"}
	for _, tc := range []struct {
		name   string
		origin string
		status int
	}{
		{"same origin", h.base, http.StatusAccepted},
		{"other site", "http://evil.example", http.StatusForbidden},
		{"other port", "http://127.0.0.1:1", http.StatusForbidden},
		{"https for http", "https://" + h.host, http.StatusForbidden},
		{"opaque origin", "null", http.StatusForbidden},
		{"no origin", "", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := func(r *http.Request) {
				if tc.origin == "" {
					r.Header.Del("Origin")
				} else {
					r.Header.Set("Origin", tc.origin)
				}
			}
			want(t, h.req("POST", "/api/sessions/"+id+"/commands", cmd, set), tc.status)
			// A cross-site page cannot open or close sessions either.
			if tc.status == http.StatusForbidden {
				want(t, h.req("POST", "/api/sessions", map[string]any{}, set), http.StatusForbidden)
				want(t, h.req("DELETE", "/api/sessions/"+id, nil, set), http.StatusForbidden)
				want(t, h.req("POST", "/api/login", map[string]any{}, set), http.StatusForbidden)
			}
		})
	}
	// Reads need no Origin: an EventSource sends none.
	want(t, h.req("GET", "/api/sessions", nil, func(r *http.Request) { r.Header.Del("Origin") }), http.StatusOK)
}

func TestHostCheck(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	_, port, _ := net.SplitHostPort(h.host)
	for _, tc := range []struct {
		host   string
		status int
	}{
		{h.host, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"LOCALHOST:" + port, http.StatusOK},
		{"[::1]:" + port, http.StatusOK},
		{"evil.example:" + port, http.StatusMisdirectedRequest},
		{"evil.example", http.StatusMisdirectedRequest},
		{"127.0.0.1:1", http.StatusMisdirectedRequest},
	} {
		t.Run(tc.host, func(t *testing.T) {
			set := func(r *http.Request) { r.Host = tc.host; r.Header.Set("Origin", "http://"+tc.host) }
			want(t, h.req("GET", "/api/sessions", nil, set), tc.status)
			want(t, h.req("GET", "/", nil, set), tc.status)
		})
	}
}

func TestHostCheckBehindProxy(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{behindProxy: true})
	proxied := func(r *http.Request) {
		r.Host = "chat.example.com"
		r.Header.Set("X-Forwarded-Host", "chat.example.com")
		r.Header.Set("X-Forwarded-Proto", "https")
		r.Header.Set("Origin", "https://chat.example.com")
	}
	want(t, h.req("GET", "/api/sessions", nil, proxied), http.StatusOK)
	want(t, h.req("POST", "/api/sessions", map[string]any{}, proxied), http.StatusCreated)
	// The origin is the forwarded one: the proxy's own http address is
	// another origin.
	want(t, h.req("POST", "/api/sessions", map[string]any{}, proxied, withHeader("Origin", "http://chat.example.com")), http.StatusForbidden)
	// A Host the proxy does not vouch for is still refused.
	want(t, h.req("GET", "/api/sessions", nil, func(r *http.Request) { r.Host = "evil.example" }), http.StatusMisdirectedRequest)
}

func TestHostPolicyWildcardBind(t *testing.T) {
	t.Parallel()
	p, err := newHostPolicy("0.0.0.0:8787", false)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := http.NewRequest("GET", "http://box.lan:8787/", nil)
	if !p.ok(r) {
		t.Fatal("a server on every interface refused its machine's name")
	}
	p, _ = newHostPolicy("192.168.1.5:8787", false)
	if p.ok(r) {
		t.Fatal("a server bound to one address took another name")
	}
	r.Host = "192.168.1.5:8787"
	if !p.ok(r) {
		t.Fatal("the bound address was refused")
	}
}
