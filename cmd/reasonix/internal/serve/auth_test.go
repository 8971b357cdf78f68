package serve

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"reasonix/core/session"
)

// authCookie returns the reasonix_auth cookie resp sets, checking its
// attributes.
func authCookie(t *testing.T, resp *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range resp.Cookies() {
		if c.Name != CookieName {
			continue
		}
		if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
			t.Fatalf("cookie attributes: %+v", c)
		}
		if c.Value == "" {
			t.Fatal("empty cookie value")
		}
		return c
	}
	t.Fatalf("no %s cookie in %v", CookieName, resp.Header.Values("Set-Cookie"))
	return nil
}

func TestAuthNone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	var st struct {
		Mode          string
		Authenticated bool
	}
	decode(t, h.req("GET", "/api/auth", nil), http.StatusOK, &st)
	if st.Mode != "none" || !st.Authenticated {
		t.Fatalf("auth state %+v", st)
	}
	want(t, h.req("GET", "/api/sessions", nil), http.StatusOK)
	if page := want(t, h.req("GET", "/", nil), http.StatusOK); !strings.Contains(page, "test page") {
		t.Fatalf("page: %q", page)
	}
	if js := want(t, h.req("GET", "/assets/app.js", nil), http.StatusOK); js != "// app" {
		t.Fatalf("asset: %q", js)
	}
	if ok := want(t, h.req("GET", "/healthz", nil), http.StatusOK); ok != "ok" {
		t.Fatalf("healthz: %q", ok)
	}
}

func TestAuthToken(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token"
	h := newHarness(t, harnessOpts{mode: AuthToken, token: token})

	t.Run("no cookie", func(t *testing.T) {
		want(t, h.req("GET", "/api/sessions", nil), http.StatusUnauthorized)
		want(t, h.req("POST", "/api/sessions", map[string]any{}), http.StatusUnauthorized)
		var st struct {
			Mode          string
			Authenticated bool
		}
		decode(t, h.req("GET", "/api/auth", nil), http.StatusOK, &st)
		if st.Mode != "token" || st.Authenticated {
			t.Fatalf("auth state %+v", st)
		}
		// The page itself is served, to show its login form.
		want(t, h.req("GET", "/", nil), http.StatusOK)
		want(t, h.req("GET", "/healthz", nil), http.StatusOK)
	})
	t.Run("bearer", func(t *testing.T) {
		want(t, h.req("GET", "/api/sessions", nil, withHeader("Authorization", "Bearer "+token)), http.StatusOK)
		want(t, h.req("GET", "/api/sessions", nil, withHeader("Authorization", "Bearer wrong")), http.StatusUnauthorized)
		want(t, h.req("GET", "/api/sessions", nil, withHeader("Authorization", "Bearer "+token+"x")), http.StatusUnauthorized)
	})
	t.Run("query token", func(t *testing.T) {
		resp := h.req("GET", "/?token="+token+"&x=1", nil)
		want(t, resp, http.StatusSeeOther)
		if loc := resp.Header.Get("Location"); loc != "/?x=1" {
			t.Fatalf("redirect to %q, want the same address without the token", loc)
		}
		c := authCookie(t, resp)
		if c.Value == token || strings.Contains(c.Value, token) {
			t.Fatal("the cookie carries the token")
		}
		want(t, h.req("GET", "/api/sessions", nil, withCookie(c)), http.StatusOK)
		var st struct{ Authenticated bool }
		decode(t, h.req("GET", "/api/auth", nil, withCookie(c)), http.StatusOK, &st)
		if !st.Authenticated {
			t.Fatal("the cookie does not authenticate /api/auth")
		}
		// Logging out drops the key: the old cookie is worthless.
		out := h.req("POST", "/api/logout", nil, withCookie(c))
		want(t, out, http.StatusNoContent)
		if cs := out.Cookies(); len(cs) != 1 || cs[0].MaxAge >= 0 {
			t.Fatalf("logout cookies: %v", out.Header.Values("Set-Cookie"))
		}
		want(t, h.req("GET", "/api/sessions", nil, withCookie(c)), http.StatusUnauthorized)
	})
	t.Run("wrong query token", func(t *testing.T) {
		resp := h.req("GET", "/?token=nope", nil)
		want(t, resp, http.StatusUnauthorized)
		if len(resp.Cookies()) != 0 {
			t.Fatal("a wrong token got a cookie")
		}
	})
	t.Run("forged cookie", func(t *testing.T) {
		want(t, h.req("GET", "/api/sessions", nil, withCookie(&http.Cookie{Name: CookieName, Value: token})), http.StatusUnauthorized)
	})
	t.Run("login endpoint", func(t *testing.T) {
		want(t, h.req("POST", "/api/login", map[string]string{"token": "nope"}), http.StatusUnauthorized)
		resp := h.req("POST", "/api/login", map[string]string{"token": token})
		want(t, resp, http.StatusNoContent)
		want(t, h.req("GET", "/api/sessions", nil, withCookie(authCookie(t, resp))), http.StatusOK)
	})
}

// clock is a settable time for the login limit.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func passwordHarness(t *testing.T, pw string, clk *clock) *harness {
	hash, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	// behind_proxy lets the test speak for many clients by
	// X-Forwarded-For.
	return newHarness(t, harnessOpts{mode: AuthPassword, hash: string(hash), now: clk.Now, behindProxy: true})
}

func TestAuthPassword(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h := passwordHarness(t, "correct horse", clk)
	from := func(ip string) func(*http.Request) { return withHeader("X-Forwarded-For", ip) }

	want(t, h.req("GET", "/api/sessions", nil), http.StatusUnauthorized)
	resp := h.req("POST", "/api/login", map[string]string{"password": "correct horse"}, from("10.0.0.1"))
	want(t, resp, http.StatusNoContent)
	c := authCookie(t, resp)
	if c.Secure {
		t.Fatal("Secure cookie over plain http")
	}
	want(t, h.req("GET", "/api/sessions", nil, withCookie(c)), http.StatusOK)

	// A TLS-terminating proxy makes the cookie Secure.
	resp = h.req("POST", "/api/login", map[string]string{"password": "correct horse"}, from("10.0.0.1"),
		withHeader("X-Forwarded-Proto", "https"), withHeader("Origin", "https://"+h.host))
	want(t, resp, http.StatusNoContent)
	if !authCookie(t, resp).Secure {
		t.Fatal("cookie not Secure behind an https proxy")
	}

	// Wrong passwords: 401 until the client's limit, then 429 even for
	// the right one, with a Retry-After, until the window has passed.
	for i := range perClientFailures {
		if r := h.req("POST", "/api/login", map[string]string{"password": "wrong"}, from("10.0.0.2")); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: status %d: %s", i, r.StatusCode, body(t, r))
		}
	}
	resp = h.req("POST", "/api/login", map[string]string{"password": "correct horse"}, from("10.0.0.2"))
	want(t, resp, http.StatusTooManyRequests)
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	// Another client is not held back by this one.
	want(t, h.req("POST", "/api/login", map[string]string{"password": "correct horse"}, from("10.0.0.3")), http.StatusNoContent)
	clk.add(loginWindow + time.Second)
	want(t, h.req("POST", "/api/login", map[string]string{"password": "correct horse"}, from("10.0.0.2")), http.StatusNoContent)

	// Spread over many clients, the global limit stops the guessing.
	for i := range globalFailures {
		ip := "10.1." + strconv.Itoa(i/200) + "." + strconv.Itoa(i%200)
		if r := h.req("POST", "/api/login", map[string]string{"password": "wrong"}, from(ip)); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("guess %d: status %d", i, r.StatusCode)
		}
	}
	want(t, h.req("POST", "/api/login", map[string]string{"password": "correct horse"}, from("10.2.0.1")), http.StatusTooManyRequests)
	clk.add(loginWindow + time.Second)
	want(t, h.req("POST", "/api/login", map[string]string{"password": "correct horse"}, from("10.2.0.1")), http.StatusNoContent)

	want(t, h.req("POST", "/api/login", `{"password":1}`), http.StatusBadRequest)
	want(t, h.req("POST", "/api/login", `{"pasword":"x"}`), http.StatusBadRequest)
}

func TestNewRefusesBadAuth(t *testing.T) {
	t.Parallel()
	open := (&harness{}).open
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"token mode without a token", Options{AuthMode: AuthToken}},
		{"password mode without a hash", Options{AuthMode: AuthPassword}},
		{"password mode with a plain password", Options{AuthMode: AuthPassword, PasswordHash: "hunter2"}},
		{"unknown mode", Options{AuthMode: "basic"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Open = open
			tc.o.Sessions = func() ([]session.Summary, error) { return nil, nil }
			if _, err := New(tc.o); err == nil {
				t.Fatal("New accepted it")
			}
		})
	}
}

// TestBearerTokenThrottled: a wrong Authorization: Bearer token is a guess
// like a wrong login, so it counts against the same limit; past it even the
// right token gets 429 until the window has passed, and other clients are
// not held back.
func TestBearerTokenThrottled(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token"
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h := newHarness(t, harnessOpts{mode: AuthToken, token: token, now: clk.Now, behindProxy: true})
	from := func(ip string) func(*http.Request) { return withHeader("X-Forwarded-For", ip) }
	bearer := func(tok string) func(*http.Request) { return withHeader("Authorization", "Bearer "+tok) }

	for i := range perClientFailures {
		// /api/auth answers whether a bearer is good, so it counts too.
		path := "/api/sessions"
		if i%2 == 1 {
			path = "/api/auth"
		}
		r := h.req("GET", path, nil, from("10.0.0.2"), bearer("guess"+strconv.Itoa(i)))
		if path == "/api/sessions" && r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong bearer %d: status %d: %s", i, r.StatusCode, body(t, r))
		}
		if path == "/api/auth" {
			var st struct{ Authenticated bool }
			decode(t, r, http.StatusOK, &st)
			if st.Authenticated {
				t.Fatalf("wrong bearer %d authenticated /api/auth", i)
			}
		}
	}
	resp := h.req("GET", "/api/sessions", nil, from("10.0.0.2"), bearer(token))
	want(t, resp, http.StatusTooManyRequests)
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	want(t, h.req("GET", "/api/auth", nil, from("10.0.0.2"), bearer(token)), http.StatusTooManyRequests)
	// The password/token login form shares the limit.
	want(t, h.req("POST", "/api/login", map[string]string{"token": token}, from("10.0.0.2")), http.StatusTooManyRequests)
	want(t, h.req("GET", "/api/sessions", nil, from("10.0.0.3"), bearer(token)), http.StatusOK)
	clk.add(loginWindow + time.Second)
	want(t, h.req("GET", "/api/sessions", nil, from("10.0.0.2"), bearer(token)), http.StatusOK)
}
