package oauth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestLegacyIssuer: the root metadata of the MCP server's own origin is
// read as the origin's when its issuer lies under a path of that origin
// and no protected resource metadata was found; an issuer on another host,
// metadata of another origin or metadata after a PRM pass as they were.
func TestLegacyIssuer(t *testing.T) {
	t.Parallel()
	var issuer string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource":
			fmt.Fprint(w, `{"resource":"x"}`)
		default:
			fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":"%s/oauth/token"}`, issuer, "http://"+r.Host)
		}
	}))
	defer srv.Close()
	other := httptest.NewServer(srv.Config.Handler)
	defer other.Close()
	got := func(c *http.Client, url string) string {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var doc map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		if doc["token_endpoint"] == nil {
			t.Errorf("%s: the rest of the document was lost: %v", url, doc)
		}
		return doc["issuer"].(string)
	}
	meta := "/.well-known/oauth-authorization-server"
	c := withLegacyIssuer(&http.Client{}, srv.URL+"/mcp")
	issuer = srv.URL + "/oauth"
	if g := got(c, srv.URL+meta); g != srv.URL {
		t.Errorf("same-origin issuer under a path: read %q, want the origin %q", g, srv.URL)
	}
	if g := got(c, srv.URL+meta+"/oauth"); g != issuer {
		t.Errorf("path-inserted metadata: read %q, want it untouched", g)
	}
	issuer = "http://evil.example/oauth"
	if g := got(c, srv.URL+meta); g != issuer {
		t.Errorf("issuer on another host: read %q, want it untouched (the SDK refuses it)", g)
	}
	issuer = other.URL + "/oauth"
	if g := got(c, other.URL+meta); g != issuer {
		t.Errorf("another origin's metadata: read %q, want it untouched", g)
	}
	c = withLegacyIssuer(&http.Client{}, srv.URL+"/mcp")
	resp, err := c.Get(srv.URL + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	issuer = srv.URL + "/oauth"
	if g := got(c, srv.URL+meta); g != issuer {
		t.Errorf("after a PRM was found: read %q, want it untouched", g)
	}
}
