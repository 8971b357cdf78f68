package assemble

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/config"
	"reasonix/core/provider/providertest"
)

// TestProjectEnvFeedsServerEntries: ${VAR} in a server entry reads the
// workspace's .env where the environment has nothing, only once the
// workspace is trusted, and never for a provider's key variable or a
// REASONIX_ one; the environment wins over the file.
func TestProjectEnvFeedsServerEntries(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	text := providertest.ConfigText("http://127.0.0.1:1", `
[[plugins]]
name = "svc"
type = "stdio"
command = "svc-${SVC_MODE}"
args = ["${SVC_TOKEN}", "${REASONIX_HOME}", "${KEY_ENV}", "${FROM_SHELL}"]
[[providers]]
name = "other"
kind = "openai"
base_url = "http://127.0.0.1:2/v1"
model = "m"
api_key_env = "KEY_ENV"
`)
	if err := os.WriteFile(config.UserConfigPath(home), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	dotenv := "SVC_MODE=fast\nSVC_TOKEN='from the file'\nREASONIX_HOME=/tmp/elsewhere\nKEY_ENV=stolen\nFROM_SHELL=file\n"
	if err := os.WriteFile(filepath.Join(cwd, ".env"), []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "FROM_SHELL" {
			return "shell"
		}
		return ""
	}
	for _, trusted := range []bool{true, false} {
		cfg, err := config.Load(config.Options{Home: home, ProjectDir: cwd, TrustProject: trusted})
		if err != nil {
			t.Fatal(err)
		}
		set, err := ResolveMCP(cfg, cwd, false, getenv)
		if err != nil {
			t.Fatal(err)
		}
		if len(set.Servers) != 1 {
			t.Fatalf("servers: %+v", set.Servers)
		}
		c := set.Servers[0].Config
		wantCmd, wantArgs := "svc-fast", []string{"from the file", "", "", "shell"}
		if !trusted {
			wantCmd, wantArgs = "svc-", []string{"", "", "", "shell"}
		}
		if c.Command != wantCmd || len(c.Args) != 4 {
			t.Fatalf("trusted=%v: command %q args %q", trusted, c.Command, c.Args)
		}
		for i := range wantArgs {
			if c.Args[i] != wantArgs[i] {
				t.Errorf("trusted=%v: arg %d = %q, want %q", trusted, i, c.Args[i], wantArgs[i])
			}
		}
	}
}

// TestProjectOAuthRefusesUserSecrets: a project's server may name its
// OAuth client but not a key file (any file the user can read) nor a
// variable holding a provider's key or a Reasonix setting; the same
// settings in the user's config stand.
func TestProjectOAuthRefusesUserSecrets(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	text := providertest.ConfigText("http://127.0.0.1:1", `
[[plugins]]
name = "mine"
type = "http"
url = "https://mine.example/mcp"
oauth_grant = "client_credentials"
oauth_client_id = "me"
oauth_private_key_file = "/home/me/.ssh/id_ecdsa"
`)
	if err := os.WriteFile(config.UserConfigPath(home), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	mcpJSON := `{"mcpServers": {
		"keyfile": {"url": "https://a.example/mcp", "oauth": {"grant": "client_credentials", "client_id": "c", "private_key_file": "/home/me/.ssh/id_ecdsa"}},
		"apikey": {"url": "https://b.example/mcp", "oauth": {"grant": "client_credentials", "client_id": "c", "client_secret_env": "DEEPSEEK_API_KEY"}},
		"setting": {"url": "https://c.example/mcp", "oauth": {"grant": "cross_app_access", "client_id": "c", "idp_issuer": "https://idp", "idp_client_id": "i", "id_token_env": "REASONIX_TOKEN"}},
		"fine": {"url": "https://d.example/mcp", "oauth": {"grant": "client_credentials", "client_id": "c", "client_secret_env": "D_SECRET"}}
	}}`
	if err := os.WriteFile(filepath.Join(cwd, ".mcp.json"), []byte(mcpJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Options{Home: home, ProjectDir: cwd, TrustProject: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Providers = append(cfg.Providers, config.ProviderConfig{Name: "ds", APIKeyEnv: "DEEPSEEK_API_KEY"})
	set, err := ResolveMCP(cfg, cwd, true, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"mine": "", "fine": "", "keyfile": "private key file", "apikey": "DEEPSEEK_API_KEY", "setting": "REASONIX_TOKEN"}
	if len(set.Servers) != len(want) {
		t.Fatalf("servers: %+v", set.Servers)
	}
	for _, s := range set.Servers {
		w, ok := want[s.Config.Name]
		switch {
		case !ok:
			t.Errorf("unexpected server %q", s.Config.Name)
		case w == "" && s.Error != "":
			t.Errorf("%s: refused: %s", s.Config.Name, s.Error)
		case w != "" && !strings.Contains(s.Error, w):
			t.Errorf("%s: error %q, want one naming %q", s.Config.Name, s.Error, w)
		}
	}
}
