package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/config"
	"reasonix/core/testenv"
)

func TestConfigFlags(t *testing.T) {
	t.Parallel()
	// build returns a subcommand whose runF stores the options it got.
	builders := map[string]func(*cmdutil.Factory, **cmdutil.GlobalOptions) *cobra.Command{
		"show": func(f *cmdutil.Factory, got **cmdutil.GlobalOptions) *cobra.Command {
			return NewCmdConfigShow(f, func(o *ConfigShowOptions) error { *got = &o.GlobalOptions; return nil })
		},
		"path": func(f *cmdutil.Factory, got **cmdutil.GlobalOptions) *cobra.Command {
			return NewCmdConfigPath(f, func(o *ConfigPathOptions) error { *got = &o.GlobalOptions; return nil })
		},
	}
	tests := []struct {
		name     string
		args     []string
		want     cmdutil.GlobalOptions
		wantCode int
	}{
		{"defaults", nil, cmdutil.GlobalOptions{}, cmdutil.ExitOK},
		{"config and cwd", []string{"--config", "a.toml", "--cwd", "/w"}, cmdutil.GlobalOptions{ConfigFile: "a.toml", Cwd: "/w"}, cmdutil.ExitOK},
		{"positional argument", []string{"extra"}, cmdutil.GlobalOptions{}, cmdutil.ExitUsage},
	}
	for _, tt := range tests {
		for sub, build := range builders {
			t.Run(sub+" "+tt.name, func(t *testing.T) {
				t.Parallel()
				f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
				var got *cmdutil.GlobalOptions
				cmd := build(f, &got)
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
}

func TestConfigShow(t *testing.T) {
	t.Parallel()
	const user = `default_model = "deepseek/deepseek-v4-pro"

[agent]
temperature = 0.5

[[plugins]]
name = "stripe"
type = "http"
url = "https://mcp.example.com"
headers = { Authorization = "Bearer sk-plugin-secret" }
`
	const project = `[agent]
temperature = 0.2
frobnicate = true
`
	tests := []struct {
		name     string
		user     string
		project  string
		explicit string
		args     []string
		wantCode int
		// wantOut holds substrings of stdout; {user}, {project} and
		// {explicit} stand for the files' paths.
		wantOut    []string
		notOut     []string
		wantStderr []string
	}{
		{
			name: "defaults only",
			wantOut: []string{
				"# Effective Reasonix configuration",
				`bash = "enforce"  # from default`,
				`api_key_env = "DEEPSEEK_API_KEY"  # from default`,
			},
		},
		{
			name:    "layers with sources and redaction",
			user:    user,
			project: project,
			wantOut: []string{
				`default_model = "deepseek/deepseek-v4-pro"  # from {user}`,
				`temperature = 0.2  # from {project}`,
				`mode = "ask"  # from default`,
				config.Redacted,
			},
			notOut:     []string{"sk-plugin-secret", "frobnicate"},
			wantStderr: []string{"reasonix: warning:", "{project}: unknown key agent.frobnicate"},
		},
		{
			name:     "explicit file wins",
			user:     user,
			explicit: "[agent]\ntemperature = 1.5\n",
			wantOut:  []string{"temperature = 1.5  # from {explicit}"},
		},
		{
			name:       "invalid config",
			user:       "[agent]\ntemperature = 9\n",
			wantCode:   cmdutil.ExitUsage,
			wantStderr: []string{"config:", "agent.temperature"},
		},
		{
			name:       "missing explicit file",
			args:       []string{"--config", "/nonexistent/reasonix-test.toml"},
			wantCode:   cmdutil.ExitUsage,
			wantStderr: []string{"config:", "reasonix-test.toml"},
		},
		{
			name:       "missing cwd",
			args:       []string{"--cwd", "/nonexistent/reasonix-test-dir"},
			wantCode:   cmdutil.ExitUsage,
			wantStderr: []string{"--cwd"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home, cwd := t.TempDir(), t.TempDir()
			paths := map[string]string{
				"{user}":     config.UserConfigPath(home),
				"{project}":  config.ProjectConfigPath(cwd),
				"{explicit}": filepath.Join(t.TempDir(), "explicit.toml"),
			}
			if tt.user != "" {
				testenv.WriteFile(t, paths["{user}"], tt.user, 0o600)
			}
			if tt.project != "" {
				testenv.WriteFile(t, paths["{project}"], tt.project, 0o644)
			}
			args := []string{"config", "show", "--cwd", cwd}
			if tt.explicit != "" {
				testenv.WriteFile(t, paths["{explicit}"], tt.explicit, 0o600)
				args = append(args, "--config", paths["{explicit}"])
			}
			args = append(args, tt.args...)
			r := runCLI(t, map[string]string{"REASONIX_HOME": home}, "", args...)
			if r.code != tt.wantCode {
				t.Fatalf("exit code = %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.wantCode, r.stdout, r.stderr)
			}
			expand := func(s string) string {
				for k, v := range paths {
					s = strings.ReplaceAll(s, k, v)
				}
				return s
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(r.stdout, expand(w)) {
					t.Errorf("stdout does not contain %q:\n%s", expand(w), r.stdout)
				}
			}
			for _, w := range tt.notOut {
				if strings.Contains(r.stdout, w) {
					t.Errorf("stdout contains %q:\n%s", w, r.stdout)
				}
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(r.stderr, expand(w)) {
					t.Errorf("stderr %q does not contain %q", r.stderr, expand(w))
				}
			}
			if tt.wantCode == cmdutil.ExitOK && len(tt.wantStderr) == 0 && r.stderr != "" {
				t.Errorf("unexpected stderr: %s", r.stderr)
			}
		})
	}
}

func TestConfigPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		user, dotenv bool
		project      bool
		explicit     bool
		// want maps a row label to the state it must show.
		want map[string]string
	}{
		{
			name: "fresh home",
			want: map[string]string{"home": "(not found)", "user config": "(not found)", "project config": "(not found)", "api keys": "(not found)"},
		},
		{
			name: "user config and keys",
			user: true, dotenv: true,
			want: map[string]string{"home": "(exists)", "user config": "(exists)", "project config": "(not found)", "api keys": "(exists)"},
		},
		{
			name:    "project config and explicit file",
			project: true, explicit: true,
			want: map[string]string{"user config": "(not found)", "project config": "(exists)", "--config": "(exists)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := filepath.Join(t.TempDir(), "home")
			cwd := t.TempDir()
			explicit := filepath.Join(t.TempDir(), "x.toml")
			if tt.user {
				testenv.WriteFile(t, config.UserConfigPath(home), "", 0o600)
			}
			if tt.dotenv {
				testenv.WriteFile(t, config.DotEnvPath(home), "", 0o600)
			}
			if tt.project {
				testenv.WriteFile(t, config.ProjectConfigPath(cwd), "", 0o644)
			}
			args := []string{"config", "path", "--cwd", cwd}
			if tt.explicit {
				testenv.WriteFile(t, explicit, "", 0o600)
				args = append(args, "--config", explicit)
			}
			r := runCLI(t, map[string]string{"REASONIX_HOME": home}, "", args...)
			if r.code != cmdutil.ExitOK {
				t.Fatalf("exit code = %d\nstderr: %s", r.code, r.stderr)
			}
			// row finds the line of a label; labels are followed by at
			// least two spaces of padding.
			row := func(label string) string {
				for _, line := range strings.Split(r.stdout, "\n") {
					if rest, ok := strings.CutPrefix(line, label+"  "); ok {
						return strings.TrimSpace(rest)
					}
				}
				return ""
			}
			wantPaths := map[string]string{
				"home":           home,
				"user config":    config.UserConfigPath(home),
				"project config": config.ProjectConfigPath(cwd),
				"api keys":       config.DotEnvPath(home),
			}
			if tt.explicit {
				wantPaths["--config"] = explicit
			} else if got := row("--config"); got != "" {
				t.Errorf("--config row %q printed without --config", got)
			}
			for label, path := range wantPaths {
				if got := row(label); !strings.HasPrefix(got, path+" ") {
					t.Errorf("row %q = %q, want path %s", label, got, path)
				}
			}
			for label, state := range tt.want {
				if got := row(label); !strings.HasSuffix(got, " "+state) {
					t.Errorf("row %q = %q, want state %s", label, got, state)
				}
			}
		})
	}
}
