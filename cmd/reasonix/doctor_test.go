package main

import (
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/doctor"
	"reasonix/core/config"
	"reasonix/core/provider/providertest"
	"reasonix/core/session"
	"reasonix/core/testenv"
)

func TestDoctorFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		want     doctor.DoctorOptions
		wantCode int
	}{
		{"defaults", nil, doctor.DoctorOptions{}, cmdutil.ExitOK},
		{
			"every flag",
			[]string{"--offline", "-m", "fake/x", "--config", "c.toml", "--cwd", "/w"},
			doctor.DoctorOptions{GlobalOptions: cmdutil.GlobalOptions{ConfigFile: "c.toml", Cwd: "/w"}, Model: "fake/x", Offline: true},
			cmdutil.ExitOK,
		},
		{"long model flag", []string{"--model", "deepseek"}, doctor.DoctorOptions{Model: "deepseek"}, cmdutil.ExitOK},
		{"positional argument", []string{"now"}, doctor.DoctorOptions{}, cmdutil.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			var got *doctor.DoctorOptions
			cmd := doctor.NewCmdDoctor(f, func(o *doctor.DoctorOptions) error { got = o; return nil })
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
			if got == nil {
				t.Fatal("runF was not called")
			}
			if got.GlobalOptions != tt.want.GlobalOptions || got.Model != tt.want.Model || got.Offline != tt.want.Offline {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

// closedURL returns a loopback base URL nothing listens on, so a request
// to it is refused at once.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/v1"
}

// doctorLines maps each check name to its status and detail as printed.
func doctorLines(t *testing.T, out string) map[string][2]string {
	t.Helper()
	lines := map[string][2]string{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "ok", "warn", "skip", "FAIL":
			name := f[1]
			if name == "api" { // "api key" is the only name with a space
				name = "api key"
			}
			lines[name] = [2]string{f[0], l}
		}
	}
	return lines
}

func TestDoctor(t *testing.T) {
	t.Parallel()
	const keyVar = "REASONIX_DOCTOR_TEST_KEY"
	const key = "sk-doctor-test-secret"
	// fakeConfig is a user config for the fake; {URL} is its base URL.
	const fakeConfig = `default_model = "fake"

[[providers]]
name = "fake"
kind = "openai"
base_url = "{URL}"
models = ["fake-model", "unlisted"]
api_key_env = "` + keyVar + `"
context_window = 64000

[sandbox]
bash = "off"
`
	tests := []struct {
		name string
		// unixOnly marks cases that depend on Unix file modes.
		unixOnly bool
		// user and project are config texts; {URL} becomes the base URL.
		user, project string
		// dotenv is written to <home>/.env with dotenvMode.
		dotenv     string
		dotenvMode os.FileMode
		// closed points the provider at a port nothing listens on.
		closed bool
		env    map[string]string
		args   []string
		// sessions is how many transcripts to create before the run.
		sessions int
		wantCode int
		// want maps a check name to its expected status.
		want map[string]string
		// wantText holds substrings of stdout; {home} and {cwd} expand.
		wantText []string
	}{
		{
			name: "everything fine, key from the environment",
			user: fakeConfig,
			env:  map[string]string{keyVar: key},
			want: map[string]string{
				"config": "ok", "model": "ok", "api key": "ok", "provider": "ok",
				"sandbox": "ok", "tools": "ok", "log": "ok", "sessions": "ok",
			},
			wantText: []string{
				"read {home}/config.toml",
				"fake/fake-model at {URL} (context window 64000 tokens)",
				keyVar + " from the environment",
				"GET {URL}/models: 2 models",
				`bash = "off"`,
				"{home}/logs/reasonix.log (not created yet)",
				"0 failures, 0 warnings",
			},
		},
		{
			name:       "key from the home env file",
			user:       fakeConfig,
			dotenv:     "OTHER=1\n" + keyVar + "=" + key + "\n",
			dotenvMode: 0o600,
			want:       map[string]string{"api key": "ok", "provider": "ok"},
			wantText:   []string{keyVar + " from {home}/.env"},
		},
		{
			name:     "wrong key is refused",
			user:     fakeConfig,
			env:      map[string]string{keyVar: "sk-wrong"},
			wantCode: cmdutil.ExitFailed,
			want:     map[string]string{"api key": "ok", "provider": "FAIL"},
			wantText: []string{"GET {URL}/models: status 401", "the endpoint refused the key in " + keyVar, "1 failure"},
		},
		{
			name:     "unreachable provider",
			user:     fakeConfig,
			closed:   true,
			env:      map[string]string{keyVar: key},
			wantCode: cmdutil.ExitFailed,
			want:     map[string]string{"provider": "FAIL", "tools": "ok"},
			wantText: []string{"{URL}/models", "connection refused"},
		},
		{
			name:     "offline skips the provider",
			user:     fakeConfig,
			closed:   true,
			env:      map[string]string{keyVar: key},
			args:     []string{"--offline"},
			want:     map[string]string{"api key": "ok", "provider": "skip"},
			wantText: []string{"skip  provider  --offline"},
		},
		{
			name:     "missing key",
			user:     fakeConfig,
			wantCode: cmdutil.ExitFailed,
			want:     map[string]string{"api key": "FAIL", "provider": "skip"},
			wantText: []string{keyVar + " is not set in the environment or in {home}/.env", "reasonix setup --api-key-stdin"},
		},
		{
			name:     "model the provider does not list",
			user:     fakeConfig,
			env:      map[string]string{keyVar: key},
			args:     []string{"--model", "fake/unlisted"},
			want:     map[string]string{"model": "ok", "provider": "warn"},
			wantText: []string{`"unlisted" not among them`, "0 failures, 1 warning"},
		},
		{
			name:     "unknown model",
			user:     fakeConfig,
			env:      map[string]string{keyVar: key},
			args:     []string{"--model", "nope"},
			wantCode: cmdutil.ExitFailed,
			want:     map[string]string{"model": "FAIL", "api key": "skip", "provider": "skip", "tools": "ok"},
			wantText: []string{`unknown model "nope"`, "fake/fake-model"},
		},
		{
			name:     "invalid config",
			user:     "[agent]\ntemperature = 9\nmax_parallel_writers = 0\n",
			wantCode: cmdutil.ExitFailed,
			want: map[string]string{
				"config": "FAIL", "model": "skip", "api key": "skip", "provider": "skip",
				"sandbox": defaultSandboxStatus(), "tools": "skip", "log": "ok", "sessions": "ok",
			},
			wantText: []string{"invalid config:", "- {home}/config.toml: agent.temperature", "- {home}/config.toml: agent.max_parallel_writers"},
		},
		{
			name:     "no config file",
			env:      map[string]string{"DEEPSEEK_API_KEY": key},
			args:     []string{"--offline"},
			want:     map[string]string{"config": "warn", "model": "ok", "api key": "ok"},
			wantText: []string{"no config file", "reasonix setup", "deepseek/deepseek-v4-flash", "DEEPSEEK_API_KEY from the environment"},
		},
		{
			name:     "ignored keys are listed",
			user:     fakeConfig,
			project:  "colour = \"blue\"\n[sandbox]\nnetwork = true\n",
			env:      map[string]string{keyVar: key},
			args:     []string{"--offline"},
			want:     map[string]string{"config": "warn"},
			wantText: []string{"read {home}/config.toml, {cwd}/reasonix.toml; 2 ignored keys:", "- {cwd}/reasonix.toml: unknown key colour", "sandbox.network"},
		},
		{
			name:     "an untrusted workspace is named",
			user:     fakeConfig,
			project:  "colour = \"blue\"\n[permissions]\nallow = [\"Bash\"]\n",
			env:      map[string]string{keyVar: key},
			args:     []string{"--offline"},
			want:     map[string]string{"config": "warn"},
			wantText: []string{"; 1 ignored key; the workspace is not trusted:", "- {cwd}/reasonix.toml: ignored until you trust this workspace: permissions.allow"},
		},
		{
			name:     "unknown tool",
			user:     fakeConfig + "\n[tools]\nenabled = [\"read_file\", \"teleport\"]\n",
			env:      map[string]string{keyVar: key},
			args:     []string{"--offline"},
			wantCode: cmdutil.ExitFailed,
			want:     map[string]string{"tools": "FAIL"},
			wantText: []string{`unknown built-in tool "teleport"`},
		},
		{
			name:     "enabled tools",
			user:     fakeConfig + "\n[tools]\nenabled = [\"read_file\", \"ls\"]\n",
			env:      map[string]string{keyVar: key},
			args:     []string{"--offline"},
			want:     map[string]string{"tools": "ok"},
			wantText: []string{"2 enabled: read_file, ls"},
		},
		{
			name:     "existing transcripts are counted",
			user:     fakeConfig,
			env:      map[string]string{keyVar: key},
			args:     []string{"--offline"},
			sessions: 2,
			want:     map[string]string{"sessions": "ok"},
			wantText: []string{"(2 transcripts)"},
		},
		{
			name:       "env file readable by others",
			unixOnly:   true,
			user:       fakeConfig,
			dotenv:     keyVar + "=" + key + "\n",
			dotenvMode: 0o644,
			args:       []string{"--offline"},
			want:       map[string]string{"api key": "warn"},
			wantText:   []string{"readable by others (mode 0644): chmod 600 {home}/.env"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.unixOnly && runtime.GOOS == "windows" {
				t.Skip("file modes are not enforced on Windows")
			}
			url := closedURL(t)
			if !tt.closed {
				url = providertest.Start(t,
					providertest.WithModels("fake-model", "other"),
					providertest.WithAPIKey(key),
				).URL()
			}
			home, cwd := t.TempDir(), t.TempDir()
			if tt.user != "" {
				testenv.WriteFile(t, config.UserConfigPath(home), strings.ReplaceAll(tt.user, "{URL}", url), 0o600)
			}
			if tt.project != "" {
				testenv.WriteFile(t, config.ProjectConfigPath(cwd), tt.project, 0o644)
			}
			if tt.dotenv != "" {
				testenv.WriteFile(t, config.DotEnvPath(home), tt.dotenv, tt.dotenvMode)
			}
			for i := range tt.sessions {
				dir := session.ProjectDir(home, cwd)
				testenv.WriteFile(t, filepath.Join(dir, "s"+string(rune('a'+i))+".jsonl"), "{}\n", 0o600)
			}
			env := map[string]string{"REASONIX_HOME": home}
			for k, v := range tt.env {
				env[k] = v
			}

			r := runCLI(t, env, "", append([]string{"doctor", "--cwd", cwd}, tt.args...)...)
			if r.code != tt.wantCode {
				t.Fatalf("exit code = %d, want %d\nstdout:\n%s\nstderr: %s", r.code, tt.wantCode, r.stdout, r.stderr)
			}
			if r.stderr != "" {
				t.Errorf("doctor wrote to stderr: %s", r.stderr)
			}
			if strings.Contains(r.stdout, key) {
				t.Errorf("the key was printed:\n%s", r.stdout)
			}
			lines := doctorLines(t, r.stdout)
			for name, status := range tt.want {
				got, ok := lines[name]
				if !ok {
					t.Errorf("no %q check in:\n%s", name, r.stdout)
					continue
				}
				if got[0] != status {
					t.Errorf("%s = %q, want %s", name, got[1], status)
				}
			}
			for _, w := range tt.wantText {
				w = strings.NewReplacer("{home}", home, "{cwd}", cwd, "{URL}", url).Replace(w)
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout does not contain %q:\n%s", w, r.stdout)
				}
			}
		})
	}
}

// defaultSandboxStatus is what the sandbox check reports on this machine
// when no config could be read, so bash = "enforce": ok where this
// platform's sandbox program is on PATH, a warning otherwise. The check
// itself is tested for every platform by TestDoctorSandbox.
func defaultSandboxStatus() string {
	program := map[string]string{"linux": "bwrap", "darwin": "sandbox-exec"}[runtime.GOOS]
	if program == "" {
		return "warn"
	}
	if _, err := exec.LookPath(program); err != nil {
		return "warn"
	}
	return "ok"
}
