package oauth

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// The grants a server's settings may name.
const (
	// GrantAuthorizationCode is the default: a person approves in a
	// browser.
	GrantAuthorizationCode = "authorization_code"
	// GrantClientCredentials is a machine client with no person: a
	// client secret or a signed JWT (private_key_jwt) authenticates it.
	GrantClientCredentials = "client_credentials"
	// GrantCrossApp is enterprise cross-app access (SEP-990): an ID token
	// from the enterprise identity provider is exchanged there for an
	// identity assertion grant, which the server's authorization server
	// takes as a JWT bearer grant. No person approves.
	GrantCrossApp = "cross_app_access"
)

// Grants lists the values of a server's grant.
var Grants = []string{GrantAuthorizationCode, GrantClientCredentials, GrantCrossApp}

// SigningAlgorithms are the JWS algorithms a client assertion may be
// signed with.
var SigningAlgorithms = []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"}

// Settings are the OAuth settings of one server entry as declared: the
// names of the variables that hold secrets, never the secrets. The JSON
// names are the members of .mcp.json's "oauth" object.
type Settings struct {
	// Grant is one of Grants; empty means GrantAuthorizationCode.
	Grant string `json:"grant,omitempty"`
	// ClientID and ClientSecretEnv are a client registered with the
	// server's authorization server and the variable holding its secret.
	ClientID        string `json:"client_id,omitempty"`
	ClientSecretEnv string `json:"client_secret_env,omitempty"`
	// ClientMetadataURL is an https URL where the client's ID metadata
	// document is published.
	ClientMetadataURL string `json:"client_metadata_url,omitempty"`
	// PrivateKeyFile or PrivateKeyEnv hold a PEM private key: the client
	// authenticates with a JWT it signs (private_key_jwt) instead of a
	// secret. SigningAlgorithm picks the algorithm; empty takes the one
	// the key's type implies.
	PrivateKeyFile   string `json:"private_key_file,omitempty"`
	PrivateKeyEnv    string `json:"private_key_env,omitempty"`
	SigningAlgorithm string `json:"signing_algorithm,omitempty"`
	// IDPIssuer, IDPClientID and IDPClientSecretEnv are the enterprise
	// identity provider of cross-app access and this client there;
	// IDTokenEnv names the variable holding the ID token it issued.
	IDPIssuer          string `json:"idp_issuer,omitempty"`
	IDPClientID        string `json:"idp_client_id,omitempty"`
	IDPClientSecretEnv string `json:"idp_client_secret_env,omitempty"`
	IDTokenEnv         string `json:"id_token_env,omitempty"`
}

// IsZero reports settings that set nothing.
func (s Settings) IsZero() bool { return s == Settings{} }

// Validate reports settings no flow can use: an unknown grant or
// algorithm, or a machine grant without what it needs.
func (s Settings) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if s.Grant != "" && !slices.Contains(Grants, s.Grant) {
		add("grant %q: want one of %s", s.Grant, strings.Join(Grants, ", "))
	}
	if s.SigningAlgorithm != "" && !slices.Contains(SigningAlgorithms, s.SigningAlgorithm) {
		add("signing_algorithm %q: want one of %s", s.SigningAlgorithm, strings.Join(SigningAlgorithms, ", "))
	}
	if s.PrivateKeyFile != "" && s.PrivateKeyEnv != "" {
		add("private_key_file and private_key_env: set one")
	}
	if u := s.ClientMetadataURL; u != "" && !strings.HasPrefix(u, "https://") {
		add("client_metadata_url must be an https url")
	}
	key := s.PrivateKeyFile != "" || s.PrivateKeyEnv != ""
	switch s.Grant {
	case GrantClientCredentials:
		if s.ClientID == "" || (s.ClientSecretEnv == "" && !key) {
			add("client_credentials needs client_id and client_secret_env or a private key")
		}
	case GrantCrossApp:
		if s.ClientID == "" || s.IDPIssuer == "" || s.IDPClientID == "" || s.IDTokenEnv == "" {
			add("cross_app_access needs client_id, idp_issuer, idp_client_id and id_token_env")
		}
	}
	if key && s.Grant != GrantClientCredentials {
		add("a private key authenticates only the client_credentials grant")
	}
	return errors.Join(errs...)
}

// Vars are the names of the environment variables s reads secrets from.
func (s Settings) Vars() []string {
	var out []string
	for _, v := range []string{s.ClientSecretEnv, s.PrivateKeyEnv, s.IDPClientSecretEnv, s.IDTokenEnv} {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Override returns s with each field o sets in its place. A client id
// brings its own secret variable (or none): the server's secret belongs
// to the server's client.
func (s Settings) Override(o Settings) Settings {
	if o.ClientID != "" {
		s.ClientID, s.ClientSecretEnv = o.ClientID, o.ClientSecretEnv
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&s.Grant, o.Grant)
	set(&s.ClientMetadataURL, o.ClientMetadataURL)
	if o.PrivateKeyFile != "" || o.PrivateKeyEnv != "" {
		s.PrivateKeyFile, s.PrivateKeyEnv = o.PrivateKeyFile, o.PrivateKeyEnv
	}
	set(&s.SigningAlgorithm, o.SigningAlgorithm)
	set(&s.IDPIssuer, o.IDPIssuer)
	if o.IDPClientID != "" {
		s.IDPClientID, s.IDPClientSecretEnv = o.IDPClientID, o.IDPClientSecretEnv
	}
	set(&s.IDTokenEnv, o.IDTokenEnv)
	return s
}

// Config is the client of server (named name, at url) that s describes,
// with the secrets read through getenv (nil: os.Getenv) and the key file
// read from disk. A variable s names that is unset is an error: a flow
// without its secret would fail later and less clearly.
func (s Settings) Config(name, url string, getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	secret := func(what, env string) (string, error) {
		if env == "" {
			return "", nil
		}
		if v := getenv(env); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("mcp server %q: the OAuth %s variable %s is not set", name, what, env)
	}
	cfg := Config{Server: name, URL: url, Grant: s.Grant, ClientID: s.ClientID,
		ClientMetadataURL: s.ClientMetadataURL, SigningAlgorithm: s.SigningAlgorithm}
	var err error
	if cfg.ClientSecret, err = secret("client secret", s.ClientSecretEnv); err != nil {
		return Config{}, err
	}
	key, err := secret("private key", s.PrivateKeyEnv)
	if err != nil {
		return Config{}, err
	}
	cfg.PrivateKey = []byte(key)
	if s.PrivateKeyFile != "" {
		if cfg.PrivateKey, err = os.ReadFile(s.PrivateKeyFile); err != nil {
			return Config{}, fmt.Errorf("mcp server %q: the OAuth private key: %w", name, err)
		}
	}
	if s.Grant == GrantCrossApp {
		idp := &IdentityProvider{Issuer: s.IDPIssuer, ClientID: s.IDPClientID}
		if idp.ClientSecret, err = secret("identity provider secret", s.IDPClientSecretEnv); err != nil {
			return Config{}, err
		}
		if idp.IDToken, err = secret("ID token", s.IDTokenEnv); err != nil {
			return Config{}, err
		}
		cfg.IdentityProvider = idp
	}
	return cfg, nil
}
