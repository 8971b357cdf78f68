package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/config"
	"reasonix/core/testenv"
)

func TestSetupFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		want     SetupOptions
		wantCode int
	}{
		{"defaults", nil, SetupOptions{Provider: "deepseek"}, cmdutil.ExitOK},
		{"every flag", []string{"--force", "--provider", "other", "--api-key-stdin"}, SetupOptions{Force: true, Provider: "other", APIKeyStdin: true}, cmdutil.ExitOK},
		{"positional argument", []string{"deepseek"}, SetupOptions{}, cmdutil.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			var got *SetupOptions
			cmd := NewCmdSetup(f, func(o *SetupOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if code := cmdutil.ExitCode(err); code != tt.wantCode {
				t.Fatalf("exit code = %d (err %v), want %d", code, err, tt.wantCode)
			}
			if tt.wantCode != cmdutil.ExitOK {
				return
			}
			if got == nil || *got != tt.want {
				t.Errorf("options = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSetup(t *testing.T) {
	t.Parallel()
	const oldConfig = "default_model = \"mine\"\n"
	tests := []struct {
		name string
		// config and dotenv are written to the home before the run when
		// not empty.
		config, dotenv string
		args           []string
		stdin          string
		// env holds extra variables besides REASONIX_HOME.
		env      map[string]string
		wantCode int
		// wantConfig is the expected user config afterwards.
		wantConfig string
		// wantDotEnv is the expected .env afterwards; "" means the file
		// must not exist.
		wantDotEnv string
		wantOut    []string
		wantErr    string
	}{
		{
			name:       "fresh home",
			args:       []string{"setup"},
			wantConfig: config.DefaultTOML,
			wantOut:    []string{"Wrote the default config", "config.toml", "DEEPSEEK_API_KEY is not set", "reasonix doctor"},
		},
		{
			name:       "key already in the environment",
			args:       []string{"setup"},
			env:        map[string]string{"DEEPSEEK_API_KEY": "sk-env"},
			wantConfig: config.DefaultTOML,
			wantOut:    []string{"Wrote the default config", "reasonix doctor"},
		},
		{
			name:       "existing config is kept",
			config:     oldConfig,
			args:       []string{"setup"},
			wantConfig: oldConfig,
			wantOut:    []string{"Kept your config at", "--force replaces it", "DEEPSEEK_API_KEY is not set"},
		},
		{
			name:       "existing config kept and a key added",
			config:     oldConfig,
			args:       []string{"setup", "--api-key-stdin"},
			stdin:      "sk-new\n",
			wantConfig: oldConfig,
			wantDotEnv: "DEEPSEEK_API_KEY=sk-new\n",
			wantOut:    []string{"Kept your config at", "Saved DEEPSEEK_API_KEY to"},
		},
		{
			name:       "force replaces the config",
			config:     oldConfig,
			args:       []string{"setup", "--force"},
			wantConfig: config.DefaultTOML,
			wantOut:    []string{"Wrote the default config"},
		},
		{
			name:       "key saved to a new env file",
			args:       []string{"setup", "--api-key-stdin"},
			stdin:      "  sk-abc123  \nignored second line\n",
			wantConfig: config.DefaultTOML,
			wantDotEnv: "DEEPSEEK_API_KEY=sk-abc123\n",
			wantOut:    []string{"Saved DEEPSEEK_API_KEY to", ".env", "reasonix doctor"},
		},
		{
			name:       "key without a newline",
			args:       []string{"setup", "--api-key-stdin"},
			stdin:      "sk-abc123",
			wantConfig: config.DefaultTOML,
			wantDotEnv: "DEEPSEEK_API_KEY=sk-abc123\n",
		},
		{
			name:       "key replaces the old one and keeps other lines",
			config:     oldConfig,
			dotenv:     "# keys\nOTHER=1\nexport DEEPSEEK_API_KEY=sk-old\nDEEPSEEK_API_KEY_BACKUP=x\n\nDEEPSEEK_API_KEY = 'sk-older'\nLAST=2",
			args:       []string{"setup", "--force", "--api-key-stdin"},
			stdin:      "sk-new\n",
			wantConfig: config.DefaultTOML,
			wantDotEnv: "# keys\nOTHER=1\nDEEPSEEK_API_KEY=sk-new\nDEEPSEEK_API_KEY_BACKUP=x\n\nLAST=2\n",
		},
		{
			name:       "empty key",
			args:       []string{"setup", "--api-key-stdin"},
			stdin:      "\n",
			wantCode:   cmdutil.ExitUsage,
			wantErr:    "no key on stdin",
			wantConfig: "",
		},
		{
			name:     "key with a space",
			args:     []string{"setup", "--api-key-stdin"},
			stdin:    "sk-a b\n",
			wantCode: cmdutil.ExitUsage,
			wantErr:  "contains a space",
		},
		{
			name:     "key with a quote",
			args:     []string{"setup", "--api-key-stdin"},
			stdin:    "'sk-ab'\n",
			wantCode: cmdutil.ExitUsage,
			wantErr:  "quote",
		},
		{
			name:     "unknown provider",
			args:     []string{"setup", "--provider", "openrouter"},
			wantCode: cmdutil.ExitUsage,
			wantErr:  `--provider "openrouter": the default config offers deepseek`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The home does not exist yet unless the case writes into it,
			// so setup must create it.
			home := filepath.Join(t.TempDir(), "nested", "home")
			cfgPath := config.UserConfigPath(home)
			envPath := config.DotEnvPath(home)
			if tt.config != "" || tt.dotenv != "" {
				if err := os.MkdirAll(home, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if tt.config != "" {
				testenv.WriteFile(t, cfgPath, tt.config, 0o644)
			}
			if tt.dotenv != "" {
				testenv.WriteFile(t, envPath, tt.dotenv, 0o644)
			}
			env := map[string]string{"REASONIX_HOME": home}
			for k, v := range tt.env {
				env[k] = v
			}

			r := runCLI(t, env, tt.stdin, tt.args...)
			if r.code != tt.wantCode {
				t.Fatalf("exit code = %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.wantCode, r.stdout, r.stderr)
			}
			if tt.wantErr != "" && !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("stderr %q does not contain %q", r.stderr, tt.wantErr)
			}
			if tt.wantCode == cmdutil.ExitUsage && tt.config != "" && !strings.Contains(r.stderr, cfgPath) {
				t.Errorf("stderr %q does not name %s", r.stderr, cfgPath)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout %q does not contain %q", r.stdout, w)
				}
			}
			if key := strings.TrimSpace(strings.SplitN(tt.stdin, "\n", 2)[0]); key != "" && strings.Contains(r.stdout+r.stderr, key) {
				t.Errorf("the key was printed:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
			}

			if got := readFileOrEmpty(t, cfgPath); got != tt.wantConfig {
				t.Errorf("config afterwards = %q, want %q", got, tt.wantConfig)
			}
			gotEnv := readFileOrEmpty(t, envPath)
			if tt.dotenv == "" && tt.wantDotEnv == "" {
				if _, err := os.Stat(envPath); !os.IsNotExist(err) {
					t.Errorf(".env exists afterwards (stat error %v)", err)
				}
				return
			}
			want := tt.wantDotEnv
			if want == "" {
				want = tt.dotenv
			}
			if gotEnv != want {
				t.Errorf(".env afterwards = %q, want %q", gotEnv, want)
			}
			if tt.wantDotEnv != "" && runtime.GOOS != "windows" {
				st, err := os.Stat(envPath)
				if err != nil {
					t.Fatal(err)
				}
				if perm := st.Mode().Perm(); perm != 0o600 {
					t.Errorf(".env mode = %04o, want 0600", perm)
				}
			}
		})
	}
}

// TestSetupResultLoads proves that what setup writes is what a run reads:
// the config loads without warnings and the saved key is found under the
// variable the default provider names.
func TestSetupResultLoads(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	r := runCLI(t, map[string]string{"REASONIX_HOME": home}, "sk-roundtrip\n", "setup", "--api-key-stdin")
	if r.code != cmdutil.ExitOK {
		t.Fatalf("setup exit code = %d\nstderr: %s", r.code, r.stderr)
	}
	cfg, err := config.Load(config.Options{Home: home})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(cfg.Warnings) > 0 {
		t.Errorf("warnings = %q, want none", cfg.Warnings)
	}
	if len(cfg.Files) != 1 || cfg.Files[0] != config.UserConfigPath(home) {
		t.Errorf("files read = %q, want the user config", cfg.Files)
	}
	res, err := cfg.ResolveModel("")
	if err != nil {
		t.Fatalf("ResolveModel: %v", err)
	}
	vars, err := config.ReadDotEnv(config.DotEnvPath(home))
	if err != nil {
		t.Fatal(err)
	}
	if got := vars[res.Provider.APIKeyEnv]; got != "sk-roundtrip" {
		t.Errorf("%s in .env = %q, want sk-roundtrip", res.Provider.APIKeyEnv, got)
	}
}

func readFileOrEmpty(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
