package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// resourceServer is an MCP server that wants a bearer token: it answers
// 401 naming its protected resource metadata, which names issuer.
func resourceServer(t *testing.T, issuer *string) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{*issuer}, "scopes_supported": []string{"mcp:read"}})
		default:
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, srv.URL))
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// authorize runs h's flow against the 401 of server and returns the token
// it then holds.
func authorize(t *testing.T, h *Handler, server string) (string, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, server+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Authorize(context.Background(), req, resp); err != nil {
		return "", err
	}
	ts, err := h.TokenSource(context.Background())
	if err != nil || ts == nil {
		t.Fatalf("no token source after Authorize: %v", err)
	}
	tok, err := ts.Token()
	if err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

func pemOf(t *testing.T, key crypto.Signer, pkcs8 bool) []byte {
	t.Helper()
	var der []byte
	var typ string
	var err error
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if !pkcs8 {
			der, typ = x509.MarshalPKCS1PrivateKey(k), "RSA PRIVATE KEY"
		}
	case *ecdsa.PrivateKey:
		if !pkcs8 {
			der, err = x509.MarshalECPrivateKey(k)
			typ = "EC PRIVATE KEY"
		}
	}
	if pkcs8 {
		der, err = x509.MarshalPKCS8PrivateKey(key)
		typ = "PRIVATE KEY"
	}
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// assertionServer is an authorization server that takes client
// credentials authenticated by a JWT that pub verifies, and records the
// assertions' claims and algorithms.
type assertionServer struct {
	*httptest.Server
	pub     crypto.PublicKey
	methods []string
	algs    []string

	mu     sync.Mutex
	seen   []jwt.MapClaims
	used   []string
	errors []string
}

func newAssertionServer(t *testing.T, pub crypto.PublicKey, methods, algs []string) *assertionServer {
	a := &assertionServer{pub: pub, methods: methods, algs: algs}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

func (a *assertionServer) fail(w http.ResponseWriter, format string, args ...any) {
	a.mu.Lock()
	a.errors = append(a.errors, fmt.Sprintf(format, args...))
	a.mu.Unlock()
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprint(w, `{"error":"invalid_client"}`)
}

func (a *assertionServer) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/.well-known/oauth-authorization-server" {
		json.NewEncoder(w).Encode(map[string]any{"issuer": a.URL, "token_endpoint": a.URL + "/token",
			"token_endpoint_auth_methods_supported": a.methods, "token_endpoint_auth_signing_alg_values_supported": a.algs})
		return
	}
	if r.URL.Path != "/token" {
		http.NotFound(w, r)
		return
	}
	_ = r.ParseForm()
	f := r.PostForm
	if f.Get("grant_type") != "client_credentials" || f.Get("client_assertion_type") != assertionType || f.Has("client_secret") || r.Header.Get("Authorization") != "" {
		a.fail(w, "request %v (auth header %q)", f, r.Header.Get("Authorization"))
		return
	}
	claims := jwt.MapClaims{}
	tok, err := jwt.ParseWithClaims(f.Get("client_assertion"), claims, func(tok *jwt.Token) (any, error) { return a.pub, nil },
		jwt.WithAudience(a.URL), jwt.WithIssuer("machine"), jwt.WithSubject("machine"), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	if err != nil {
		a.fail(w, "assertion: %v", err)
		return
	}
	a.mu.Lock()
	a.seen = append(a.seen, claims)
	a.used = append(a.used, tok.Method.Alg())
	n := len(a.seen)
	a.mu.Unlock()
	// A token that is stale at once makes the next use fetch again.
	fmt.Fprintf(w, `{"access_token":"cc-%d","token_type":"Bearer","expires_in":1,"scope":%q}`, n, f.Get("scope"))
}

// TestKeyCredentials: the client-credentials grant with a private key
// sends a fresh signed assertion on each token request, the client its
// issuer and subject and the authorization server its audience, with no
// secret beside it, and signs with what the server offers.
func TestKeyCredentials(t *testing.T) {
	t.Parallel()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	as := newAssertionServer(t, &ec.PublicKey, []string{"private_key_jwt"}, []string{"ES256"})
	rs := resourceServer(t, &as.URL)
	h, err := New(Config{URL: rs.URL + "/mcp", Grant: GrantClientCredentials, ClientID: "machine", PrivateKey: pemOf(t, ec, true)})
	if err != nil {
		t.Fatal(err)
	}
	first, err := authorize(t, h, rs.URL)
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := h.TokenSource(context.Background())
	second, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	if len(as.errors) > 0 {
		t.Fatalf("the authorization server refused: %v", as.errors)
	}
	// Authorize fetches cc-1 at once; it is stale already, so each use
	// after it fetches again.
	if first != "cc-2" || second.AccessToken != "cc-3" || len(as.seen) != 3 {
		t.Fatalf("tokens %q, %q after %d requests; want cc-2, cc-3 after 3", first, second.AccessToken, len(as.seen))
	}
	ids := map[any]bool{}
	for _, c := range as.seen {
		ids[c["jti"]] = true
	}
	if len(ids) != 3 || ids[nil] {
		t.Errorf("assertion ids %v: each request must carry a fresh one", ids)
	}
	exp, _ := as.seen[0].GetExpirationTime()
	iat, _ := as.seen[0].GetIssuedAt()
	if life := exp.Sub(iat.Time); life <= 0 || life > 5*time.Minute {
		t.Errorf("assertion lives %s; want a short life", life)
	}

	// An RSA key in PKCS #1 signs with what the server takes.
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	as2 := newAssertionServer(t, &rk.PublicKey, nil, []string{"ES256", "PS256"})
	rs2 := resourceServer(t, &as2.URL)
	h2, err := New(Config{URL: rs2.URL + "/mcp", Grant: GrantClientCredentials, ClientID: "machine", PrivateKey: pemOf(t, rk, false)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := authorize(t, h2, rs2.URL); err != nil {
		t.Fatal(err)
	}
	if as2.used[0] != "PS256" {
		t.Errorf("signed with %s; want PS256, the one the server takes", as2.used[0])
	}
}

// TestKeyCredentialsRefusals: what cannot work is said before a token
// request: a key the server's algorithms exclude, a server that does
// not take private_key_jwt, a named algorithm the key cannot sign, and
// a key that is not PEM.
func TestKeyCredentialsRefusals(t *testing.T) {
	t.Parallel()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key := pemOf(t, ec, false)
	for _, c := range []struct {
		name          string
		methods, algs []string
		want          string
	}{
		{"algorithm", nil, []string{"RS256"}, "signed with RS256; a ECDSA P-256 key signs ES256"},
		{"method", []string{"client_secret_basic"}, nil, "does not take private_key_jwt (it takes client_secret_basic)"},
	} {
		as := newAssertionServer(t, &ec.PublicKey, c.methods, c.algs)
		rs := resourceServer(t, &as.URL)
		h, err := New(Config{URL: rs.URL + "/mcp", Grant: GrantClientCredentials, ClientID: "machine", PrivateKey: key})
		if err != nil {
			t.Fatal(err)
		}
		_, err = authorize(t, h, rs.URL)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
		if len(as.seen)+len(as.errors) > 0 {
			t.Errorf("%s: a token request was made", c.name)
		}
	}
	if _, err := New(Config{URL: "http://h/mcp", Grant: GrantClientCredentials, ClientID: "m", PrivateKey: key, SigningAlgorithm: "RS256"}); err == nil || !strings.Contains(err.Error(), "cannot sign RS256") {
		t.Errorf("RS256 with an EC key: %v", err)
	}
	if _, err := New(Config{URL: "http://h/mcp", Grant: GrantClientCredentials, ClientID: "m", PrivateKey: []byte("not a key")}); err == nil || !strings.Contains(err.Error(), "not PEM") {
		t.Errorf("a key that is not PEM: %v", err)
	}
}

// TestCrossApp: cross-app access exchanges the ID token at the identity
// provider for an identity assertion grant naming the server's
// authorization server and resource, and presents that grant there with
// the client's secret; a provider that issues anything else is refused
// before the authorization server is asked.
func TestCrossApp(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		wrong   []string
		issued  = "urn:ietf:params:oauth:token-type:id-jag"
		granted int
	)
	bad := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		wrong = append(wrong, fmt.Sprintf(format, args...))
	}
	var as, rs *httptest.Server
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/.well-known/openid-configuration" {
			fmt.Fprintf(w, `{"issuer":"http://%s","token_endpoint":"http://%s/token"}`, r.Host, r.Host)
			return
		}
		if r.URL.Path != "/token" {
			http.NotFound(w, r)
			return
		}
		_ = r.ParseForm()
		f := r.PostForm
		for k, want := range map[string]string{"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
			"subject_token": "id-token-of-ann", "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
			"requested_token_type": issued, "audience": as.URL, "resource": rs.URL + "/mcp", "client_id": "idp-client"} {
			if f.Get(k) != want {
				bad("token exchange %s = %q, want %q", k, f.Get(k), want)
			}
		}
		mu.Lock()
		typ := issued
		mu.Unlock()
		fmt.Fprintf(w, `{"access_token":"jag-for-ann","issued_token_type":%q,"token_type":"N_A"}`, typ)
	}))
	defer idp.Close()
	as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/.well-known/oauth-authorization-server" {
			fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":"%s/token","token_endpoint_auth_methods_supported":["client_secret_basic"]}`, as.URL, as.URL)
			return
		}
		_ = r.ParseForm()
		id, secret, ok := r.BasicAuth()
		if !ok || id != "mcp-client" || secret != "s3cret" {
			bad("jwt bearer client auth %q:%q (basic %v)", id, secret, ok)
		}
		if g := r.PostForm.Get("grant_type"); g != jwtBearerGrant || r.PostForm.Get("assertion") != "jag-for-ann" {
			bad("jwt bearer grant %q with assertion %q", g, r.PostForm.Get("assertion"))
		}
		mu.Lock()
		granted++
		mu.Unlock()
		fmt.Fprint(w, `{"access_token":"token-for-ann","token_type":"Bearer","expires_in":3600}`)
	}))
	defer as.Close()
	rs = resourceServer(t, &as.URL)

	cfg := Config{URL: rs.URL + "/mcp", Grant: GrantCrossApp, ClientID: "mcp-client", ClientSecret: "s3cret",
		IdentityProvider: &IdentityProvider{Issuer: idp.URL, ClientID: "idp-client", IDToken: "id-token-of-ann"}}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := authorize(t, h, rs.URL)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if tok != "token-for-ann" || len(wrong) > 0 {
		t.Errorf("token %q; the servers saw: %v", tok, wrong)
	}
	issued = "urn:ietf:params:oauth:token-type:access_token"
	granted = 0
	mu.Unlock()
	h, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := authorize(t, h, rs.URL); err == nil || !strings.Contains(err.Error(), "not an identity assertion grant") {
		t.Errorf("a provider issuing an access token: %v", err)
	}
	if granted != 0 {
		t.Errorf("the authorization server was asked %d times after the provider issued the wrong token", granted)
	}
}

// TestServerMetaRefuses: machine flows take authorization server metadata
// only for the issuer asked for and with a token endpoint that is https
// or on this machine.
func TestServerMetaRefuses(t *testing.T) {
	t.Parallel()
	var doc atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, strings.ReplaceAll(doc.Load().(string), "SELF", "http://"+r.Host))
	}))
	defer srv.Close()
	for _, c := range []struct{ doc, want string }{
		{`{"issuer":"https://evil.example","token_endpoint":"https://evil.example/token"}`, `names issuer "https://evil.example"`},
		{`{"issuer":"SELF","token_endpoint":"http://evil.example/token"}`, "neither https nor on a loopback address"},
		{`{"issuer":"SELF","token_endpoint":"javascript:alert(1)"}`, "neither https nor on a loopback address"},
	} {
		doc.Store(c.doc)
		_, err := serverMeta(context.Background(), srv.URL, srv.Client())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.doc, err, c.want)
		}
	}
	for issuer, ok := range map[string]bool{"http://as.example": false, "https://as.example/": true, "http://127.0.0.1:9": true} {
		if m, err := fallbackMeta(issuer); (err == nil) != ok || ok && !strings.HasSuffix(m.TokenEndpoint, "example/token") && !strings.HasSuffix(m.TokenEndpoint, ":9/token") {
			t.Errorf("fallback for %s: %+v, %v", issuer, m, err)
		}
	}
	doc.Store(`{"issuer":"SELF","token_endpoint":"SELF/token"}`)
	if m, err := serverMeta(context.Background(), srv.URL, srv.Client()); err != nil || m.TokenEndpoint != srv.URL+"/token" {
		t.Errorf("good metadata: %v, %v", m, err)
	}
}
