package serve

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// hostPolicy decides which Host headers the server answers. A page on
// another site can make a browser send requests to 127.0.0.1 by rebinding
// its own name to that address; those requests carry the other site's
// name as their Host, so answering only our own names defeats it.
type hostPolicy struct {
	// allowed are the host:port values accepted, lowercased.
	allowed map[string]bool
	// any accepts every Host: the server listens on all interfaces, where
	// it can be reached by any name, and authentication is then required.
	any bool
	// proxy also accepts the Host a trusted proxy forwards.
	proxy bool
}

// newHostPolicy accepts the bound address and the loopback names with its
// port.
func newHostPolicy(bound string, behindProxy bool) (hostPolicy, error) {
	host, port, err := net.SplitHostPort(bound)
	if err != nil {
		return hostPolicy{}, fmt.Errorf("serve: bound address %q: %w", bound, err)
	}
	p := hostPolicy{allowed: map[string]bool{}, proxy: behindProxy}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		p.any = true
	}
	for _, h := range []string{host, "localhost", "127.0.0.1", "::1"} {
		p.allowed[strings.ToLower(net.JoinHostPort(h, port))] = true
		if port == "80" {
			p.allowed[strings.ToLower(h)] = true
			if strings.Contains(h, ":") {
				p.allowed["["+strings.ToLower(h)+"]"] = true
			}
		}
	}
	return p, nil
}

// ok reports whether r's Host is ours.
func (p hostPolicy) ok(r *http.Request) bool {
	if p.any {
		return true
	}
	host := strings.ToLower(r.Host)
	if p.allowed[host] {
		return true
	}
	if p.proxy {
		if fwd := forwarded(r, "X-Forwarded-Host"); fwd != "" && strings.EqualFold(fwd, r.Host) {
			return true
		}
	}
	return false
}

// forwarded is the first value of a proxy header: the one the proxy
// nearest the client set.
func forwarded(r *http.Request, name string) string {
	v, _, _ := strings.Cut(r.Header.Get(name), ",")
	return strings.TrimSpace(v)
}

// origin is the scheme://host the request was made to: what a same-origin
// page sends as its Origin.
func (s *Server) origin(r *http.Request) string {
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if s.opts.BehindProxy {
		if p := forwarded(r, "X-Forwarded-Proto"); p == "https" || p == "http" {
			scheme = p
		}
		if h := forwarded(r, "X-Forwarded-Host"); h != "" {
			host = h
		}
	}
	return scheme + "://" + strings.ToLower(host)
}

// secure reports whether the browser reached us over TLS, so the cookie
// may be marked Secure.
func (s *Server) secure(r *http.Request) bool {
	return strings.HasPrefix(s.origin(r), "https://")
}

// clientIP is the address failed logins are counted against: the peer, or
// behind a trusted proxy the client the proxy names last (the one it saw).
func (s *Server) clientIP(r *http.Request) string {
	if s.opts.BehindProxy {
		parts := strings.Split(r.Header.Get("X-Forwarded-For"), ",")
		if ip := strings.TrimSpace(parts[len(parts)-1]); ip != "" {
			return ip
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// sameOrigin reports whether a state-changing request comes from our own
// page: its Origin must be present and ours. A cross-site form or fetch
// cannot forge it.
func (s *Server) sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Scheme+"://"+u.Host, s.origin(r))
}

// contentSecurityPolicy keeps the page to its own origin: no inline
// script, no other site's code, no framing by another page.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// guard applies the Host check to every request and the Origin check to
// every one that may change state, and sets the headers every answer
// carries.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		// The page needs nothing from anywhere else; frame-ancestors only
		// works as a header, not in the page's own meta tag.
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		if !s.hosts.ok(r) {
			writeError(w, http.StatusMisdirectedRequest, fmt.Sprintf("host %q is not served here; open the address reasonix serve printed", r.Host))
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if !s.sameOrigin(r) {
				writeError(w, http.StatusForbidden, "cross-origin request refused: the Origin header must be this server's origin")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
