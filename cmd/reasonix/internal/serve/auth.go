package serve

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// CookieName is the session cookie. Its value is a random key the server
// keeps, never the token or the password.
const CookieName = "reasonix_auth"

// maxAuthKeys bounds the cookie keys kept: each login makes one, and a
// client that logs in over and over must not grow the server without end.
// The oldest key is forgotten first.
const maxAuthKeys = 1024

// authenticator knows who may use the API.
type authenticator struct {
	mode string
	// tokenSum is the SHA-256 of the token, so comparing takes the same
	// time whatever the length of the guess.
	tokenSum [32]byte
	hash     []byte
	limit    *loginLimit

	mu sync.Mutex
	// keys are the cookie values handed out, oldest first in order.
	keys  map[string]struct{}
	order []string
}

func newAuthenticator(o Options) (*authenticator, error) {
	a := &authenticator{mode: o.AuthMode, keys: map[string]struct{}{}, limit: newLoginLimit(o.Now)}
	switch o.AuthMode {
	case AuthNone:
	case AuthToken:
		if o.Token == "" {
			return nil, errors.New("serve: token mode needs a token")
		}
		a.tokenSum = sha256.Sum256([]byte(o.Token))
	case AuthPassword:
		if _, err := bcrypt.Cost([]byte(o.PasswordHash)); err != nil {
			return nil, fmt.Errorf("serve: password mode needs a bcrypt hash: %w", err)
		}
		a.hash = []byte(o.PasswordHash)
	default:
		return nil, fmt.Errorf("serve: auth mode %q: want none, token or password", o.AuthMode)
	}
	return a, nil
}

// tokenOK compares a presented token with ours in constant time.
func (a *authenticator) tokenOK(t string) bool {
	if a.mode != AuthToken || t == "" {
		return false
	}
	sum := sha256.Sum256([]byte(t))
	return subtle.ConstantTimeCompare(sum[:], a.tokenSum[:]) == 1
}

// passwordOK checks a password against the bcrypt hash, which compares in
// constant time.
func (a *authenticator) passwordOK(p string) bool {
	return a.mode == AuthPassword && p != "" && bcrypt.CompareHashAndPassword(a.hash, []byte(p)) == nil
}

// authenticated reports whether r may use the API: auth is off, it carries
// the token as a bearer, or a cookie key we handed out. A bearer token is
// a guess like a login: while the client is over the login limit it is not
// checked (wait says how long until it would be), and a wrong one counts
// against the limit, so the header is no way around the throttle.
func (s *Server) authenticated(r *http.Request) (ok bool, wait time.Duration) {
	a := s.auth
	if a.mode == AuthNone {
		return true, 0
	}
	if t, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); bearer {
		ip := s.clientIP(r)
		if wait := a.limit.blocked(ip); wait > 0 {
			return false, wait
		}
		if a.tokenOK(strings.TrimSpace(t)) {
			return true, 0
		}
		a.limit.fail(ip)
		s.log.Warn("serve: wrong bearer token", "client", ip)
		return false, 0
	}
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return false, 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok = a.keys[c.Value]
	return ok, 0
}

// require answers 401 to a request that is not authenticated, and 429 to
// a bearer token the login limit stops.
func (s *Server) require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, wait := s.authenticated(r)
		switch {
		case wait > 0:
			refuse(w, wait)
		case !ok:
			writeError(w, http.StatusUnauthorized, "not authenticated: log in first ("+s.auth.mode+" mode)")
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// issue makes a new cookie key and sets it on w.
func (a *authenticator) issue(w http.ResponseWriter, secure bool) error {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("cookie key: %w", err)
	}
	key := hex.EncodeToString(b[:])
	a.mu.Lock()
	a.keys[key] = struct{}{}
	a.order = append(a.order, key)
	for len(a.order) > maxAuthKeys {
		delete(a.keys, a.order[0])
		a.order = a.order[1:]
	}
	a.mu.Unlock()
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: key, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure,
	})
	return nil
}

// revoke forgets r's cookie key and tells the browser to drop it.
func (a *authenticator) revoke(w http.ResponseWriter, r *http.Request, secure bool) {
	if c, err := r.Cookie(CookieName); err == nil {
		a.mu.Lock()
		if _, ok := a.keys[c.Value]; ok {
			delete(a.keys, c.Value)
			for i, k := range a.order {
				if k == c.Value {
					a.order = append(a.order[:i], a.order[i+1:]...)
					break
				}
			}
		}
		a.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure,
	})
}

// refuse answers a login the limit stops: 429 with when to try again.
func refuse(w http.ResponseWriter, wait time.Duration) {
	secs := int((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	writeError(w, http.StatusTooManyRequests, "too many failed logins; try again later")
}

// handleAuthState tells the page whether to show its login form.
func (s *Server) handleAuthState(w http.ResponseWriter, r *http.Request) {
	ok, wait := s.authenticated(r)
	if wait > 0 {
		refuse(w, wait)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"mode": s.auth.mode, "authenticated": ok})
}

// maxLoginBody bounds a login request.
const maxLoginBody = 4 << 10

// handleLogin checks a password (password mode) or the token (token mode)
// and sets the cookie. Failures count against the client and against the
// server as a whole; while either is over its limit, no check is made.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Password string `json:"password"`
		Token    string `json:"token"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxLoginBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "login: want {\"password\":\"…\"} or {\"token\":\"…\"}: "+err.Error())
		return
	}
	a := s.auth
	if a.mode == AuthNone {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	ip := s.clientIP(r)
	if wait := a.limit.blocked(ip); wait > 0 {
		refuse(w, wait)
		return
	}
	ok := false
	switch a.mode {
	case AuthToken:
		ok = a.tokenOK(body.Token)
	case AuthPassword:
		ok = a.passwordOK(body.Password)
	}
	if !ok {
		a.limit.fail(ip)
		s.log.Warn("serve: failed login", "client", ip, "mode", a.mode)
		writeError(w, http.StatusUnauthorized, "wrong "+a.mode)
		return
	}
	if err := a.issue(w, s.secure(r)); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleLogout forgets the cookie.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	s.auth.revoke(w, r, s.secure(r))
	w.WriteHeader(http.StatusNoContent)
}

// page serves the page to everyone (it shows a login form when
// /api/auth says so). A page load carrying ?token= logs in: a right token
// sets the cookie and redirects to the same address without it, so the
// token leaves the address bar and the history.
func (s *Server) page(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if !q.Has("token") {
			next.ServeHTTP(w, r)
			return
		}
		a := s.auth
		if a.mode == AuthToken {
			ip := s.clientIP(r)
			if wait := a.limit.blocked(ip); wait > 0 {
				refuse(w, wait)
				return
			}
			if !a.tokenOK(q.Get("token")) {
				a.limit.fail(ip)
				s.log.Warn("serve: wrong token in a page address", "client", ip)
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte("reasonix serve: wrong token; open the address reasonix serve printed\n"))
				return
			}
			if err := a.issue(w, s.secure(r)); err != nil {
				writeError(w, http.StatusInternalServerError, err.Error())
				return
			}
		}
		q.Del("token")
		u := *r.URL
		u.RawQuery = q.Encode()
		u.Scheme, u.Host = "", ""
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
	})
}
