package assemble

import (
	"os"
	"path/filepath"
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
