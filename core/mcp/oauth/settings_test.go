package oauth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSettingsValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		s       Settings
		wantErr string
	}{
		{name: "empty", s: Settings{}},
		{name: "secret client", s: Settings{Grant: GrantClientCredentials, ClientID: "c", ClientSecretEnv: "S"}},
		{name: "key client", s: Settings{Grant: GrantClientCredentials, ClientID: "c", PrivateKeyFile: "/k.pem", SigningAlgorithm: "ES256"}},
		{name: "cross app", s: Settings{Grant: GrantCrossApp, ClientID: "c", IDPIssuer: "https://idp", IDPClientID: "i", IDTokenEnv: "T"}},
		{name: "unknown grant", s: Settings{Grant: "password"}, wantErr: `grant "password"`},
		{name: "unknown algorithm", s: Settings{Grant: GrantClientCredentials, ClientID: "c", PrivateKeyEnv: "K", SigningAlgorithm: "HS256"}, wantErr: `signing_algorithm "HS256"`},
		{name: "two keys", s: Settings{Grant: GrantClientCredentials, ClientID: "c", PrivateKeyEnv: "K", PrivateKeyFile: "/k"}, wantErr: "set one"},
		{name: "machine without secret", s: Settings{Grant: GrantClientCredentials, ClientID: "c"}, wantErr: "client_credentials needs"},
		{name: "cross app without token", s: Settings{Grant: GrantCrossApp, ClientID: "c", IDPIssuer: "https://idp", IDPClientID: "i"}, wantErr: "cross_app_access needs"},
		{name: "key without its grant", s: Settings{ClientID: "c", PrivateKeyEnv: "K"}, wantErr: "only the client_credentials"},
		{name: "metadata over http", s: Settings{ClientMetadataURL: "http://x/client.json"}, wantErr: "https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.s.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestSettingsOverride: a flag's client id brings its own secret
// variable, so the configured client's secret never goes to another
// client; fields the flags leave empty keep the configured value.
func TestSettingsOverride(t *testing.T) {
	t.Parallel()
	base := Settings{Grant: GrantClientCredentials, ClientID: "c", ClientSecretEnv: "C_SECRET", PrivateKeyEnv: "C_KEY", IDPClientID: "i", IDPClientSecretEnv: "I_SECRET"}
	got := base.Override(Settings{ClientID: "other", PrivateKeyFile: "/k.pem", IDPClientID: "j"})
	want := Settings{Grant: GrantClientCredentials, ClientID: "other", PrivateKeyFile: "/k.pem", IDPClientID: "j"}
	if got != want {
		t.Errorf("Override = %+v\nwant %+v", got, want)
	}
	if got := base.Override(Settings{}); got != base {
		t.Errorf("an empty override changed %+v to %+v", base, got)
	}
}

func TestSettingsConfig(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(keyFile, []byte("PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SECRET": "s3", "TOKEN": "id-token", "IDP_SECRET": "i3"}
	getenv := func(k string) string { return env[k] }

	cfg, err := Settings{Grant: GrantClientCredentials, ClientID: "c", PrivateKeyFile: keyFile}.Config("srv", "https://srv/mcp", getenv)
	if err != nil || string(cfg.PrivateKey) != "PEM" || cfg.Grant != GrantClientCredentials || cfg.URL != "https://srv/mcp" {
		t.Fatalf("key client: %+v, %v", cfg, err)
	}
	cfg, err = Settings{Grant: GrantCrossApp, ClientID: "c", ClientSecretEnv: "SECRET", IDPIssuer: "https://idp", IDPClientID: "i",
		IDPClientSecretEnv: "IDP_SECRET", IDTokenEnv: "TOKEN"}.Config("srv", "https://srv/mcp", getenv)
	if err != nil {
		t.Fatal(err)
	}
	if idp := cfg.IdentityProvider; cfg.ClientSecret != "s3" || idp == nil || idp.IDToken != "id-token" || idp.ClientSecret != "i3" || idp.Issuer != "https://idp" {
		t.Fatalf("cross app: %+v %+v", cfg, cfg.IdentityProvider)
	}
	// A named variable that is unset is an error naming it, before any
	// request is made.
	for _, s := range []Settings{
		{Grant: GrantClientCredentials, ClientID: "c", ClientSecretEnv: "UNSET"},
		{Grant: GrantClientCredentials, ClientID: "c", PrivateKeyEnv: "UNSET"},
		{Grant: GrantCrossApp, ClientID: "c", IDPIssuer: "https://idp", IDPClientID: "i", IDTokenEnv: "UNSET"},
	} {
		if _, err := s.Config("srv", "https://srv/mcp", getenv); err == nil || !strings.Contains(err.Error(), "UNSET is not set") {
			t.Errorf("%+v: err = %v, want one naming UNSET", s, err)
		}
	}
	if _, err := (Settings{Grant: GrantClientCredentials, ClientID: "c", PrivateKeyFile: keyFile + ".gone"}).Config("srv", "u", getenv); err == nil {
		t.Error("a missing key file was not an error")
	}
}
