package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the user and project layers: Load must
// return a config or an error, never panic, and a config it accepts must
// render and resolve its default model.
func FuzzLoad(f *testing.F) {
	// Seeds stay small: the fuzzer minimises every new input, and each
	// step of that runs a whole Load.
	f.Add([]byte(DefaultTOML), []byte(""))
	f.Add([]byte("[agent]\ncompact_ratio = 0.7\n[[plugins]]\nname = \"x\"\ncommand = \"c\"\nenv = { A = \"1\" }\n"),
		[]byte("[sandbox]\nforbid_read = [\"/x\"]\nnetwork = true\n[serve]\naddr = \"0.0.0.0:1\"\n"))
	f.Add([]byte("[[providers]]\nname = \"p\"\nkind = \"openai\"\nbase_url = \"http://h\"\nmodels = [\"a\", \"b\"]\napi_key_env = \"K\"\n"),
		[]byte("[[providers]]\nname = \"p\"\nbase_url = \"http://evil\"\nmodel = \"m\"\nmodel_overrides = { m = { context_window = 1 } }\n"))
	f.Add([]byte("providers = [{ name = \"ds\", kind = \"openai\", base_url = \"http://h\", model = \"m\" }]\n"),
		[]byte("default_model = \"ds/m\"\n[agent]\nsubagent_models = { r = \"m\" }\n"))
	f.Add([]byte("[agent]\nmax_steps = 1\n[bot]\nx = 1\n"), []byte("Default_Model = 1\n"))
	f.Add([]byte("[permissions]\ndeny = [\"Bash(rm:*)\"]\nmode = \"deny\"\n"),
		[]byte("[permissions]\ndeny = []\nallow = [\"Bash\"]\nmode = \"ask\"\n[agent]\nsubagent_ask = \"allow\"\nsystem_prompt_file = \"/x\"\n"))
	f.Add([]byte("[remote]\nlisten = \"0.0.0.0:7420\"\nadvertise = \"me:7420\"\nrun_local = false\n[[workers]]\nname = \"w\"\naddress = \"w:1\"\nwrites = [\".\"]\n"),
		[]byte("[[workers]]\nname = \"evil\"\naddress = \"e:1\"\n[remote]\ntoken_file = \"t\"\n"))
	// One directory per worker process: the fuzz function runs inputs one
	// at a time, so rewriting the same two files is safe and cheap.
	dir := f.TempDir()
	userPath, projectPath := UserConfigPath(dir), filepath.Join(dir, ProjectFileName)
	f.Fuzz(func(t *testing.T, user, project []byte) {
		if err := os.WriteFile(userPath, user, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(projectPath, project, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, trusted := range []bool{false, true} {
			c, err := Load(Options{Home: dir, ProjectDir: dir, TrustProject: trusted})
			if (c == nil) == (err == nil) {
				t.Fatalf("Load returned config %v and error %v", c != nil, err)
			}
			if err != nil {
				var ve *ValidationError
				if errors.As(err, &ve) && len(ve.Problems) == 0 {
					t.Fatal("validation error without problems")
				}
				continue
			}
			if _, err := c.Show(); err != nil {
				t.Fatalf("Show: %v", err)
			}
			if _, err := c.ResolveModel(""); err != nil {
				t.Fatalf("accepted config cannot resolve its default model: %v", err)
			}
			if trusted {
				continue
			}
			// Untrusted, the project wrote no allow rule, provider or
			// server.
			for k, src := range c.Sources {
				if src == projectPath && (k == "permissions.allow" || strings.HasPrefix(k, "providers[") || strings.HasPrefix(k, "plugins[")) {
					t.Fatalf("untrusted project set %s", k)
				}
			}
		}
	})
}
