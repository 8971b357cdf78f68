package oauth

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// A server of the 2025-03-26 revision has no protected resource metadata:
// its authorization server is its own origin, whose metadata sits at the
// origin's root. Servers of that revision often mount the authorization
// server under a path of the same origin (issuer https://host/oauth) while
// the metadata stays at the root, which RFC 8414 §3.3 refuses and that
// revision did not ask about. legacyIssuer reads such metadata as the
// origin's own: only metadata fetched from the MCP server's origin, only
// at the root locations, only while no protected resource metadata was
// found, and only for an issuer on that same origin. Anything else is
// passed on untouched, so the SDK's issuer check stands for every other
// case (a different host is still refused).
type legacyIssuer struct {
	base   http.RoundTripper
	origin string

	mu  sync.Mutex
	prm bool // protected resource metadata was found: not a 2025-03-26 server
}

// withLegacyIssuer returns a copy of hc whose transport reads the root
// metadata of serverURL's origin as legacyIssuer says.
func withLegacyIssuer(hc *http.Client, serverURL string) *http.Client {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" {
		return hc
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c := *hc
	c.Transport = &legacyIssuer{base: base, origin: u.Scheme + "://" + u.Host}
	return &c
}

// maxMetadata bounds the metadata document read.
const maxMetadata = 1 << 20

func (l *legacyIssuer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	path := req.URL.Path
	l.mu.Lock()
	defer l.mu.Unlock()
	if strings.HasPrefix(path, "/.well-known/oauth-protected-resource") {
		l.prm = true
		return resp, nil
	}
	root := path == "/.well-known/oauth-authorization-server" || path == "/.well-known/openid-configuration"
	if l.prm || !root || req.URL.Scheme+"://"+req.URL.Host != l.origin {
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var doc map[string]any
	if len(body) > maxMetadata || json.Unmarshal(body, &doc) != nil {
		return resp, nil
	}
	issuer, _ := doc["issuer"].(string)
	iu, err := url.Parse(issuer)
	if err != nil || iu.Scheme+"://"+iu.Host != l.origin || strings.TrimSuffix(issuer, "/") == l.origin {
		return resp, nil
	}
	doc["issuer"] = l.origin
	out, err := json.Marshal(doc)
	if err != nil {
		return resp, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	return resp, nil
}
