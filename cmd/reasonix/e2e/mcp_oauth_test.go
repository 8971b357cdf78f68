package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"reasonix/core/provider/providertest"
)

// machineMCP is an MCP server on loopback that is its own authorization
// server and takes only the client-credentials grant with a signed
// client assertion (private_key_jwt): a machine client, no person.
type machineMCP struct {
	*httptest.Server
	pub *ecdsa.PublicKey

	mu      sync.Mutex
	tokens  int
	refused []string
}

func startMachineMCP(t *testing.T, pub *ecdsa.PublicKey) *machineMCP {
	t.Helper()
	m := &machineMCP{pub: pub}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

func (m *machineMCP) refuse(w http.ResponseWriter, format string, args ...any) {
	m.mu.Lock()
	m.refused = append(m.refused, fmt.Sprintf(format, args...))
	m.mu.Unlock()
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprint(w, `{"error":"invalid_client"}`)
}

func (m *machineMCP) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource/mcp":
		json.NewEncoder(w).Encode(map[string]any{"resource": m.URL + "/mcp", "authorization_servers": []string{m.URL}})
	case "/.well-known/oauth-authorization-server":
		json.NewEncoder(w).Encode(map[string]any{"issuer": m.URL, "token_endpoint": m.URL + "/token",
			"grant_types_supported":                            []string{"client_credentials"},
			"token_endpoint_auth_methods_supported":            []string{"private_key_jwt"},
			"token_endpoint_auth_signing_alg_values_supported": []string{"ES256"}})
	case "/token":
		_ = r.ParseForm()
		if g := r.PostForm.Get("grant_type"); g != "client_credentials" {
			m.refuse(w, "grant %q", g)
			return
		}
		_, err := jwt.Parse(r.PostForm.Get("client_assertion"), func(*jwt.Token) (any, error) { return m.pub, nil },
			jwt.WithAudience(m.URL), jwt.WithIssuer("ci-bot"), jwt.WithSubject("ci-bot"), jwt.WithExpirationRequired())
		if err != nil {
			m.refuse(w, "assertion: %v", err)
			return
		}
		m.mu.Lock()
		m.tokens++
		m.mu.Unlock()
		fmt.Fprint(w, `{"access_token":"machine-token","token_type":"Bearer","expires_in":3600}`)
	case "/mcp":
		m.serveMCP(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (m *machineMCP) serveMCP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer machine-token" {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, m.URL))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
			Arguments       struct {
				Text string `json:"text"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	if req.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any
	switch req.Method {
	case "initialize":
		result = map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "machine", "version": "1"}}
	case "tools/list":
		result = map[string]any{"tools": []map[string]any{{"name": "echo", "description": "Echo text",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
			"annotations": map[string]any{"readOnlyHint": true}}}}
	case "tools/call":
		result = map[string]any{"content": []map[string]any{{"type": "text", "text": "echo: " + req.Params.Arguments.Text}}}
	default:
		result = map[string]any{}
	}
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
}

// TestE2EMCPMachineGrantHeadless: a server configured for the
// client-credentials grant with a private key in a variable works in a
// headless run with nobody to ask, and `mcp login` says the grant works
// and that nothing is stored.
func TestE2EMCPMachineGrantHeadless(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	srv := startMachineMCP(t, &key.PublicKey)
	e := newE2E(t)
	e.env = append(e.env, "CI_BOT_KEY="+string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
	e.writeConfig(fmt.Sprintf(`
[[plugins]]
name = "m2m"
type = "http"
url = %q
oauth_grant = "client_credentials"
oauth_client_id = "ci-bot"
oauth_private_key_env = "CI_BOT_KEY"
`, srv.URL+"/mcp"))
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "e1", Name: "mcp__m2m__echo", Arguments: `{"text":"hi"}`}}},
		providertest.Turn{Text: "done"},
	)
	r := e.run("run", "-o", "stream-json", "echo hi")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2\n%s", len(reqs), r)
	}
	if last := reqs[1].Last(); last.Role != "tool" || last.Content != "echo: hi" {
		t.Errorf("tool result = %+v\n%s", last, r)
	}

	login := e.run("mcp", "login", "m2m")
	if login.code != 0 || !strings.Contains(login.stdout, "client_credentials grant works") {
		t.Errorf("mcp login:\n%s", login)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.refused) > 0 || srv.tokens < 2 {
		t.Errorf("%d tokens issued, refused: %v", srv.tokens, srv.refused)
	}
}
