package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// The grants without a person that the SDK has no handler for: the
// client-credentials grant with a signed client assertion, and
// enterprise cross-app access. Both find the authorization server as the
// SDK's handlers do and get their tokens from golang.org/x/oauth2.

const (
	// assertionType is how a client assertion says it is a JWT (RFC 7523).
	assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	// jwtBearerGrant is the grant that presents a JWT (RFC 7523 §2.1).
	jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
)

// IdentityProvider is the enterprise identity provider of cross-app
// access: where it is, this client's registration there, and the ID
// token it issued to the user.
type IdentityProvider struct {
	// Issuer is the provider's issuer URL; its token endpoint is found
	// from its metadata (OAuth or OpenID).
	Issuer string
	// ClientID and ClientSecret are this client at the provider; the
	// secret may be empty for a public client.
	ClientID     string
	ClientSecret string
	// IDToken is the user's ID token from the provider.
	IDToken string
}

// target is what discovery found for the server that asked for a token.
type target struct {
	// resource is the protected resource the token is for.
	resource string
	// meta is its authorization server's metadata.
	meta *oauthex.AuthServerMeta
	// scopes are the scopes to ask for.
	scopes []string
}

// discover finds the authorization server of the server that answered
// req with resp: the protected resource metadata the challenge names,
// else the one at the path-based and then the root well-known URL, else
// (the 2025-03-26 revision) the server's origin; then that server's
// metadata, else the endpoints the older revision predefines.
func discover(ctx context.Context, req *http.Request, resp *http.Response, hc *http.Client) (*target, error) {
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return nil, fmt.Errorf("oauth: the server's challenge: %w", err)
	}
	server := req.URL.String()
	var named string
	var scopes []string
	for _, c := range challenges {
		if named == "" {
			named = c.Params["resource_metadata"]
		}
		if c.Scheme == "bearer" && scopes == nil && c.Params["scope"] != "" {
			scopes = strings.Fields(c.Params["scope"])
		}
	}
	origin := *req.URL
	origin.Path, origin.RawPath, origin.RawQuery, origin.Fragment = "", "", "", ""
	type candidate struct{ metadata, resource string }
	var candidates []candidate
	if named != "" {
		candidates = append(candidates, candidate{named, server})
	}
	pathBased := origin
	pathBased.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(req.URL.Path, "/")
	root := origin
	root.Path = "/.well-known/oauth-protected-resource"
	candidates = append(candidates, candidate{pathBased.String(), server}, candidate{root.String(), origin.String()})

	t := &target{resource: server, scopes: scopes}
	issuer := origin.String()
	for _, c := range candidates {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.metadata, c.resource, hc)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("oauth: the protected resource metadata names no authorization server")
		}
		issuer, t.resource = prm.AuthorizationServers[0], prm.Resource
		if t.scopes == nil {
			t.scopes = prm.ScopesSupported
		}
		break
	}
	if t.meta, err = serverMeta(ctx, issuer, hc); err != nil {
		return nil, fmt.Errorf("oauth: authorization server metadata: %w", err)
	}
	if t.meta == nil {
		if t.meta, err = fallbackMeta(issuer); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// fallbackMeta is the metadata the 2025-03-26 revision predefines for an
// authorization server that publishes none: its token endpoint at
// /token. The endpoint gets the same check as a published one, so a
// secret never goes over plain http to another machine.
func fallbackMeta(issuer string) (*oauthex.AuthServerMeta, error) {
	token := strings.TrimRight(issuer, "/") + "/token"
	if !safeEndpoint(token) {
		return nil, fmt.Errorf("oauth: %s publishes no metadata and its default token endpoint %s is neither https nor on a loopback address", issuer, token)
	}
	return &oauthex.AuthServerMeta{Issuer: issuer, TokenEndpoint: token}, nil
}

// serverMeta is the metadata of the authorization server issuer, from
// the first of the well-known URLs the MCP spec lists (OAuth, then
// OpenID, with the issuer's path inserted or appended) that has it; nil
// when none does. Unlike the SDK's, it does not ask for PKCE: a grant
// without a person has no authorization request to protect. The
// issuer must be the one asked for, and the token endpoint https or on
// a loopback address.
func serverMeta(ctx context.Context, issuer string, hc *http.Client) (*oauthex.AuthServerMeta, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("issuer %q is not a URL", issuer)
	}
	path := strings.Trim(u.Path, "/")
	at := func(p string) string { c := *u; c.Path, c.RawPath = p, ""; return c.String() }
	urls := []string{at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")}
	if path != "" {
		urls = []string{at("/.well-known/oauth-authorization-server/" + path),
			at("/.well-known/openid-configuration/" + path), at("/" + path + "/.well-known/openid-configuration")}
	}
	for _, mu := range urls {
		meta, err := fetchMeta(ctx, mu, hc)
		if err != nil {
			return nil, err
		}
		if meta == nil {
			continue
		}
		if strings.TrimRight(meta.Issuer, "/") != strings.TrimRight(issuer, "/") {
			return nil, fmt.Errorf("%s names issuer %q, not %q", mu, meta.Issuer, issuer)
		}
		if !safeEndpoint(meta.TokenEndpoint) {
			return nil, fmt.Errorf("%s: token endpoint %q is neither https nor on a loopback address", mu, meta.TokenEndpoint)
		}
		return meta, nil
	}
	return nil, nil
}

// fetchMeta gets one metadata document; nil for a 4xx answer.
func fetchMeta(ctx context.Context, u string, hc *http.Client) (*oauthex.AuthServerMeta, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", u, resp.Status)
	}
	var meta oauthex.AuthServerMeta
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&meta); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return &meta, nil
}

// safeEndpoint reports an https URL, or an http one on a loopback
// address (a server on this machine, as in development).
func safeEndpoint(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	if u.Scheme != "http" {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// secretStyle is how a client secret reaches a token endpoint that takes
// methods (RFC 8414: none listed means client_secret_basic).
func secretStyle(secret string, methods []string) oauth2.AuthStyle {
	switch {
	case secret == "":
		return oauth2.AuthStyleInParams
	case len(methods) == 0 || slices.Contains(methods, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	case slices.Contains(methods, "client_secret_post"):
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleAutoDetect
}

// machineHandler is an auth.OAuthHandler whose flow needs no person: on
// each 401 or 403 it finds the authorization server again and starts a
// fresh token source from what it found, which fetches its first token
// at once so that a refusal is reported where it happened.
type machineHandler struct {
	hc *http.Client
	// source makes the token source of a target; ctx outlives the
	// request that asked (its deadline and cancel are dropped) and
	// carries hc for golang.org/x/oauth2.
	source func(ctx context.Context, t *target) (oauth2.TokenSource, error)

	mu      sync.Mutex
	ts      oauth2.TokenSource
	granted []string
}

func (h *machineHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

func (h *machineHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	t, err := discover(ctx, req, resp, h.hc)
	if err != nil {
		return err
	}
	h.mu.Lock()
	// A step-up keeps what earlier rounds were granted.
	for _, s := range h.granted {
		if !slices.Contains(t.scopes, s) {
			t.scopes = append(t.scopes, s)
		}
	}
	h.mu.Unlock()
	bg := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, h.hc)
	src, err := h.source(bg, t)
	if err != nil {
		return err
	}
	tok, err := src.Token()
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ts, h.granted = oauth2.ReuseTokenSource(tok, src), t.scopes
	return nil
}

// sourceFunc adapts a func to oauth2.TokenSource.
type sourceFunc func() (*oauth2.Token, error)

func (f sourceFunc) Token() (*oauth2.Token, error) { return f() }

// keyCredentialsHandler is the client-credentials grant of a client that
// authenticates with a JWT it signs (private_key_jwt, RFC 7523 §2.2):
// each token request carries a fresh assertion for the authorization
// server's issuer.
func keyCredentialsHandler(cfg Config, hc *http.Client) (*Handler, error) {
	if cfg.ClientID == "" {
		return nil, errors.New("oauth: the client-credentials grant needs a client id")
	}
	key, err := parseKey(cfg.PrivateKey)
	if err != nil {
		return nil, err
	}
	if _, err := signingMethod(key, cfg.SigningAlgorithm, nil); err != nil {
		return nil, err
	}
	source := func(ctx context.Context, t *target) (oauth2.TokenSource, error) {
		if m := t.meta.TokenEndpointAuthMethodsSupported; len(m) > 0 && !slices.Contains(m, "private_key_jwt") {
			return nil, fmt.Errorf("oauth: the authorization server does not take private_key_jwt (it takes %s)", strings.Join(m, ", "))
		}
		method, err := signingMethod(key, cfg.SigningAlgorithm, t.meta.TokenEndpointAuthSigningAlgValuesSupported)
		if err != nil {
			return nil, err
		}
		return sourceFunc(func() (*oauth2.Token, error) {
			assertion, err := sign(key, method, cfg.ClientID, t.meta.Issuer)
			if err != nil {
				return nil, err
			}
			cc := clientcredentials.Config{ClientID: cfg.ClientID, TokenURL: t.meta.TokenEndpoint, Scopes: t.scopes,
				AuthStyle:      oauth2.AuthStyleInParams,
				EndpointParams: url.Values{"client_assertion_type": {assertionType}, "client_assertion": {assertion}}}
			tok, err := cc.Token(ctx)
			if err != nil {
				return nil, fmt.Errorf("oauth: client credentials with a signed assertion: %w", err)
			}
			return tok, nil
		}), nil
	}
	return &Handler{OAuthHandler: &machineHandler{hc: hc, source: source}}, nil
}

// crossAppHandler is enterprise cross-app access (SEP-990): the ID token
// is exchanged at the identity provider (RFC 8693) for an identity
// assertion grant naming the server's authorization server and resource,
// and that grant is presented there as a JWT bearer grant (RFC 7523) by
// the client registered with it. A token that expires is got again the
// same way: the provider's ID token, not the assertion, is what lasts.
func crossAppHandler(cfg Config, hc *http.Client) (*Handler, error) {
	idp := cfg.IdentityProvider
	if idp == nil || idp.Issuer == "" || idp.ClientID == "" || idp.IDToken == "" {
		return nil, errors.New("oauth: cross-app access needs the identity provider's issuer, a client id there and an ID token")
	}
	if cfg.ClientID == "" {
		return nil, errors.New("oauth: cross-app access needs a client id at the server's authorization server")
	}
	source := func(ctx context.Context, t *target) (oauth2.TokenSource, error) {
		meta, err := serverMeta(ctx, idp.Issuer, hc)
		if err != nil {
			return nil, fmt.Errorf("oauth: identity provider metadata: %w", err)
		}
		if meta == nil || meta.TokenEndpoint == "" {
			return nil, fmt.Errorf("oauth: identity provider %s publishes no token endpoint", idp.Issuer)
		}
		creds := &oauthex.ClientCredentials{ClientID: idp.ClientID}
		if idp.ClientSecret != "" {
			creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: idp.ClientSecret}
		}
		return sourceFunc(func() (*oauth2.Token, error) {
			grant, err := oauthex.ExchangeToken(ctx, meta.TokenEndpoint, &oauthex.TokenExchangeRequest{
				RequestedTokenType: oauthex.TokenTypeIDJAG, SubjectTokenType: oauthex.TokenTypeIDToken, SubjectToken: idp.IDToken,
				Audience: t.meta.Issuer, Resource: t.resource, Scope: t.scopes,
			}, creds, hc)
			if err != nil {
				return nil, fmt.Errorf("oauth: exchanging the ID token at %s: %w", idp.Issuer, err)
			}
			if typ, _ := grant.Extra("issued_token_type").(string); typ != oauthex.TokenTypeIDJAG {
				return nil, fmt.Errorf("oauth: the identity provider issued a %q, not an identity assertion grant", typ)
			}
			cc := clientcredentials.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: t.meta.TokenEndpoint,
				Scopes:         t.scopes,
				AuthStyle:      secretStyle(cfg.ClientSecret, t.meta.TokenEndpointAuthMethodsSupported),
				EndpointParams: url.Values{"grant_type": {jwtBearerGrant}, "assertion": {grant.AccessToken}}}
			tok, err := cc.Token(ctx)
			if err != nil {
				return nil, fmt.Errorf("oauth: the JWT bearer grant: %w", err)
			}
			return tok, nil
		}), nil
	}
	return &Handler{OAuthHandler: &machineHandler{hc: hc, source: source}}, nil
}
