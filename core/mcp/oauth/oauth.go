package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// The ways an authorization URL reaches the authorization server.
const (
	// AuthorizeBrowser opens the URL in the user's browser and takes the
	// code from a loopback callback.
	AuthorizeBrowser = "browser"
	// AuthorizePrint prints the URL for the user to open and takes the
	// code from the loopback callback.
	AuthorizePrint = "print"
	// AuthorizeFetch fetches the URL itself and takes the code from the
	// redirect, for authorization servers that approve without a person.
	AuthorizeFetch = "fetch"
	// AuthorizeNever refuses to start a flow: only stored tokens are
	// used, and a server that wants a login is told to run one.
	AuthorizeNever = "never"
)

// Modes lists the values of --oauth-authorize.
var Modes = []string{AuthorizeBrowser, AuthorizePrint, AuthorizeFetch}

// ErrLoginRequired is returned when a server wants an authorization and
// the handler may not start one.
var ErrLoginRequired = errors.New("the mcp server requires an OAuth login")

// callbackTimeout bounds the wait for a person to approve in the browser.
const callbackTimeout = 5 * time.Minute

// Config describes the OAuth client of one MCP server.
type Config struct {
	// Server names the server; tokens are stored under it.
	Server string
	// URL is the server's endpoint, the protected resource.
	URL string
	// Store keeps tokens across runs; nil keeps them in memory only.
	Store *Store
	// Authorize is one of the Authorize* modes; empty means
	// AuthorizeNever.
	Authorize string
	// ClientID and ClientSecret identify a pre-registered client; empty
	// means a client ID metadata document or dynamic registration.
	ClientID     string
	ClientSecret string
	// ClientMetadataURL is an https URL where the client's ID metadata
	// document is published, offered to authorization servers that take
	// one instead of registration; empty offers none.
	ClientMetadataURL string
	// Grant is one of Grants; empty is GrantAuthorizationCode.
	// GrantClientCredentials authenticates ClientID with ClientSecret or
	// with a JWT signed by PrivateKey; GrantCrossApp exchanges the
	// IdentityProvider's ID token.
	Grant string
	// PrivateKey is a PEM private key (PKCS #8, or EC or RSA in their own
	// forms) that signs the client's assertion (private_key_jwt) in
	// place of a secret; SigningAlgorithm names the algorithm, empty
	// takes the key's own (ES256 for P-256, RS256 for RSA, EdDSA for
	// Ed25519).
	PrivateKey       []byte
	SigningAlgorithm string
	// IdentityProvider is the enterprise identity provider of
	// GrantCrossApp.
	IdentityProvider *IdentityProvider
	// Out receives the URL in print mode and progress notes.
	Out io.Writer
	// HTTPClient makes the OAuth requests; nil uses a private one.
	HTTPClient *http.Client
	// OpenBrowser opens a URL; nil uses the platform's opener.
	OpenBrowser func(url string) error
}

// Handler is the OAuth handler of one server's HTTP transport. Close it
// when the connection is done: it may hold a loopback listener.
type Handler struct {
	auth.OAuthHandler
	close func()
}

// Close releases the loopback listener, if any. It is safe to call more
// than once.
func (h *Handler) Close() {
	if h.close != nil {
		h.close()
	}
}

// New builds the handler cfg describes: a stored token is used (and
// refreshed) first; a 401 or a 403 insufficient_scope starts the flow the
// mode allows, whose tokens are stored.
func New(cfg Config) (*Handler, error) {
	if cfg.URL == "" {
		return nil, errors.New("oauth: no server url")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	stored, err := cfg.Store.Load(cfg.Server, cfg.URL)
	if err != nil {
		return nil, err
	}
	initial := initialSource(cfg, stored, hc)

	switch cfg.Grant {
	case GrantClientCredentials:
		return clientCredentialsHandler(cfg, hc)
	case GrantCrossApp:
		return crossAppHandler(cfg, hc)
	case "", GrantAuthorizationCode:
	default:
		return nil, fmt.Errorf("oauth: unknown grant %q (want %s)", cfg.Grant, strings.Join(Grants, ", "))
	}

	hc = withLegacyIssuer(hc, cfg.URL)
	fetch, redirect, closeFn, err := codeFetcher(cfg, hc)
	if err != nil {
		return nil, err
	}
	h := &Handler{close: closeFn}
	ach, err := auth.NewAuthorizationCodeHandler(codeHandlerConfig(cfg, hc, redirect, fetch, initial))
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("oauth: %w", err)
	}
	h.OAuthHandler = ach
	return h, nil
}

// initialSource is the token source of the token stored for cfg's server,
// refreshed through hc and stored again when it changes; nil when none is
// stored.
func initialSource(cfg Config, stored *Record, hc *http.Client) oauth2.TokenSource {
	if stored == nil || stored.Token == nil {
		return nil
	}
	oc := stored.config()
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	return &storingSource{base: oc.TokenSource(ctx, stored.Token), store: cfg.Store, server: cfg.Server, rec: *stored, last: stored.Token.AccessToken}
}

// persister makes the token source of a token a flow just obtained: one
// that stores it now, and again each time it is refreshed.
func persister(cfg Config) func(context.Context, *oauth2.Config, *oauth2.Token) (oauth2.TokenSource, error) {
	return func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
		rec := Record{URL: cfg.URL, ClientID: oc.ClientID, ClientSecret: oc.ClientSecret,
			TokenURL: oc.Endpoint.TokenURL, AuthStyle: int(oc.Endpoint.AuthStyle), Scopes: oc.Scopes}
		ts := &storingSource{base: oc.TokenSource(ctx, tok), store: cfg.Store, server: cfg.Server, rec: rec}
		if err := ts.save(tok); err != nil {
			return nil, err
		}
		return ts, nil
	}
}

// clientCredentialsHandler builds the handler of the client-credentials
// grant with cfg's client id and its secret or private key.
func clientCredentialsHandler(cfg Config, hc *http.Client) (*Handler, error) {
	if len(cfg.PrivateKey) > 0 {
		return keyCredentialsHandler(cfg, hc)
	}
	if cfg.ClientID == "" || cfg.ClientSecret == "" {
		return nil, errors.New("oauth: the client-credentials grant needs a client id and a secret or private key")
	}
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{ClientID: cfg.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}},
		HTTPClient:  hc,
	})
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	return &Handler{OAuthHandler: h}, nil
}

// codeFetcher picks how cfg's authorize mode gets an authorization code:
// the fetcher, the redirect URL it expects, and the func that releases
// its loopback listener (nil when it has none).
func codeFetcher(cfg Config, hc *http.Client) (auth.AuthorizationCodeFetcher, string, func(), error) {
	redirect := "http://localhost:3000/callback"
	switch cfg.Authorize {
	case AuthorizeFetch:
		return fetcher(hc), redirect, nil, nil
	case AuthorizeBrowser, AuthorizePrint:
		cb, err := listenCallback()
		if err != nil {
			return nil, "", nil, err
		}
		return loopbackFetcher(cfg, cb), cb.redirect, cb.close, nil
	case "", AuthorizeNever:
		fetch := func(context.Context, *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return nil, fmt.Errorf("%w: run `reasonix mcp login %s`", ErrLoginRequired, cfg.Server)
		}
		return fetch, redirect, nil, nil
	default:
		return nil, "", nil, fmt.Errorf("oauth: unknown authorize mode %q (want %s)", cfg.Authorize, strings.Join(Modes, ", "))
	}
}

// loopbackFetcher opens the authorization URL in the browser (or prints
// it, in print mode) and waits for the code on cb.
func loopbackFetcher(cfg Config, cb *callback) auth.AuthorizationCodeFetcher {
	open := cfg.OpenBrowser
	if open == nil {
		open = openBrowser
	}
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		if cfg.Authorize == AuthorizeBrowser {
			if err := open(args.URL); err != nil {
				fmt.Fprintf(orDiscard(cfg.Out), "could not open a browser (%v); open this URL to authorize:\n%s\n", err, args.URL)
			} else {
				fmt.Fprintf(orDiscard(cfg.Out), "opened the browser to authorize mcp server %q; waiting for the approval\n", cfg.Server)
			}
		} else {
			fmt.Fprintf(orDiscard(cfg.Out), "open this URL to authorize mcp server %q:\n%s\n", cfg.Server, args.URL)
		}
		return cb.wait(ctx)
	}
}

// codeHandlerConfig is the authorization-code flow of cfg: a
// pre-registered client when cfg names one, else a client ID metadata
// document (when cfg offers one) or dynamic registration.
func codeHandlerConfig(cfg Config, hc *http.Client, redirect string, fetch auth.AuthorizationCodeFetcher, initial oauth2.TokenSource) *auth.AuthorizationCodeHandlerConfig {
	ac := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: fetch,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs: []string{redirect},
				ClientName:   "reasonix",
				GrantTypes:   []string{"authorization_code", "refresh_token"},
			},
		},
		RequestRefreshToken: true,
		Client:              hc,
		NewTokenSource:      persister(cfg),
		InitialTokenSource:  initial,
	}
	if cfg.ClientMetadataURL != "" {
		ac.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: cfg.ClientMetadataURL}
	}
	if cfg.ClientID != "" {
		pc := &oauthex.ClientCredentials{ClientID: cfg.ClientID}
		if cfg.ClientSecret != "" {
			pc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}
		}
		ac.PreregisteredClient = pc
		// A pre-registered client is what the user asked for: neither
		// a metadata document nor registration stands in for it.
		ac.ClientIDMetadataDocumentConfig = nil
		ac.DynamicClientRegistrationConfig = nil
	}
	return ac
}

// fetcher fetches the authorization URL without following the redirect
// and reads the code from where it points.
func fetcher(hc *http.Client) auth.AuthorizationCodeFetcher {
	c := &http.Client{Transport: hc.Transport, Timeout: hc.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
		if err != nil {
			return nil, fmt.Errorf("oauth authorize: %w", err)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, fmt.Errorf("oauth authorize: %w", err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			return nil, fmt.Errorf("oauth authorize: the authorization server answered %s without a redirect; use --oauth-authorize browser", resp.Status)
		}
		u, err := url.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("oauth authorize: redirect %q: %w", loc, err)
		}
		return result(u.Query())
	}
}

// result reads an authorization response.
func result(q url.Values) (*auth.AuthorizationResult, error) {
	if e := q.Get("error"); e != "" {
		return nil, fmt.Errorf("oauth authorize: the authorization server refused: %s %s", e, q.Get("error_description"))
	}
	if q.Get("code") == "" {
		return nil, errors.New("oauth authorize: the redirect carries no code")
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// callback is a loopback listener that takes one authorization response.
type callback struct {
	redirect string
	srv      *http.Server
	got      chan url.Values
	once     sync.Once
	done     chan struct{}
}

func listenCallback() (*callback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("oauth: loopback callback: %w", err)
	}
	cb := &callback{
		redirect: fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port),
		got:      make(chan url.Values, 1),
		done:     make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		select {
		case cb.got <- r.URL.Query():
			fmt.Fprintln(w, "reasonix: authorization received; you can close this window.")
		default:
			http.Error(w, "authorization already received", http.StatusConflict)
		}
	})
	cb.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(cb.done)
		_ = cb.srv.Serve(ln)
	}()
	return cb, nil
}

func (cb *callback) wait(ctx context.Context) (*auth.AuthorizationResult, error) {
	t := time.NewTimer(callbackTimeout)
	defer t.Stop()
	select {
	case q := <-cb.got:
		return result(q)
	case <-ctx.Done():
		return nil, fmt.Errorf("oauth authorize: %w", ctx.Err())
	case <-t.C:
		return nil, fmt.Errorf("oauth authorize: no approval within %s", callbackTimeout)
	}
}

func (cb *callback) close() {
	cb.once.Do(func() {
		_ = cb.srv.Close()
		<-cb.done
	})
}

// openBrowser opens u with the platform's opener.
func openBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	// The openers hand the URL to the browser and return.
	return cmd.Run()
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
