package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/config"
	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

// workerLines returns doctor's "workers" line and its "worker" lines, in
// order, each as printed.
func workerLines(out string) (setup string, workers []string) {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[1] {
		case "workers":
			setup = l
		case "worker":
			workers = append(workers, l)
		}
	}
	return setup, workers
}

func TestDoctorWorkers(t *testing.T) {
	t.Parallel()
	const keyVar = "REASONIX_DOCTOR_WORKERS_KEY"
	const key = "sk-doctor-workers"
	up := startTestWorker(t, "build1", workersTestToken, 4, "proj")
	down := closedAddr(t)
	upEntry := "name = \"build1\"\naddress = \"" + up + "\"\ncapacity = 4"
	downEntry := "name = \"down\"\naddress = \"" + down + "\""

	tests := []struct {
		name     string
		unixOnly bool
		// remote is the body of [remote]; {TOKEN} becomes a token file.
		remote string
		// tokenMode is the token file's mode when remote names one.
		tokenMode os.FileMode
		entries   []string
		noEnv     bool
		args      []string
		wantCode  int
		// wantSetup is in the workers line, wantWorkers in the worker
		// lines (one substring per line, in order).
		wantSetup   []string
		wantWorkers []string
		wantText    []string
	}{
		{
			name:      "one up, one unreachable",
			entries:   []string{upEntry, downEntry},
			wantSetup: []string{"ok    workers   2 workers configured; token REASONIX_WORKER_TOKEN from the environment"},
			wantWorkers: []string{
				"ok    worker    build1 at " + up + `: up, 0 of 4 slots busy, serves "proj", round trip `,
				"warn  worker    down at " + down + ": unreachable; worker unreachable: " + down,
			},
			wantText: []string{"0 failures, 1 warning"},
		},
		{
			name:        "wrong workspace fails",
			entries:     []string{upEntry + "\nworkspace = \"site\""},
			wantCode:    cmdutil.ExitFailed,
			wantWorkers: []string{"FAIL  worker    build1 at " + up + `: wrong workspace; serves "proj", not "site"`},
		},
		{
			name:        "offline skips the probes",
			entries:     []string{upEntry, downEntry},
			args:        []string{"--offline"},
			wantWorkers: []string{"skip  worker    build1 at " + up + ": --offline", "skip  worker    down at " + down + ": --offline"},
		},
		{
			name:        "no token",
			entries:     []string{upEntry},
			noEnv:       true,
			wantCode:    cmdutil.ExitFailed,
			wantSetup:   []string{"FAIL  workers   1 worker configured; no worker token: set REASONIX_WORKER_TOKEN or [remote] token_file"},
			wantWorkers: []string{"skip  worker    build1 at " + up + ": needs a worker token"},
		},
		{
			name:        "token file",
			unixOnly:    true,
			remote:      "token_file = \"{TOKEN}\"",
			tokenMode:   0o600,
			entries:     []string{upEntry},
			noEnv:       true,
			wantSetup:   []string{"ok    workers   1 worker configured; token from {TOKEN} (mode 0600)"},
			wantWorkers: []string{"ok    worker    build1 at " + up + ": up"},
		},
		{
			name:        "token file readable by others",
			unixOnly:    true,
			remote:      "token_file = \"{TOKEN}\"",
			tokenMode:   0o644,
			entries:     []string{upEntry},
			noEnv:       true,
			wantCode:    cmdutil.ExitFailed,
			wantSetup:   []string{"FAIL  workers", "(mode 0644); run chmod 600 {TOKEN}"},
			wantWorkers: []string{"skip  worker"},
		},
		{
			name:      "the environment wins over the token file",
			remote:    "token_file = \"{TOKEN}\"",
			tokenMode: 0o600,
			entries:   []string{upEntry},
			args:      []string{"--offline"},
			wantSetup: []string{"ok    workers   1 worker configured; token REASONIX_WORKER_TOKEN from the environment"},
			wantText:  []string{"- token_file {TOKEN} is not read: REASONIX_WORKER_TOKEN wins"},
		},
		{
			name:      "a worker on another host cannot answer a loopback endpoint",
			entries:   []string{"name = \"far\"\naddress = \"far.example:7420\""},
			args:      []string{"--offline"},
			wantSetup: []string{"warn  workers   1 worker configured"},
			wantText:  []string{"- [remote] listen 127.0.0.1:0 is loopback, so far (and any worker on another host) cannot answer"},
		},
		{
			name:      "a loopback advertise is no better",
			remote:    "listen = \"0.0.0.0:7420\"\nadvertise = \"127.0.0.1:7420\"",
			entries:   []string{"name = \"far\"\naddress = \"far.example:7420\""},
			args:      []string{"--offline"},
			wantSetup: []string{"warn  workers   1 worker configured"},
			wantText:  []string{"- [remote] advertise 127.0.0.1:7420 is loopback, so far"},
		},
		{
			name:      "a reachable advertise needs no note",
			remote:    "listen = \"0.0.0.0:7420\"\nadvertise = \"sched.example:7420\"",
			entries:   []string{"name = \"far\"\naddress = \"far.example:7420\""},
			args:      []string{"--offline"},
			wantSetup: []string{"ok    workers   1 worker configured"},
		},
		{
			name:      "none configured",
			args:      []string{"--offline"},
			wantSetup: []string{"skip  workers   none configured (add [[workers]] to {home}/config.toml"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.unixOnly && runtime.GOOS == "windows" {
				t.Skip("file modes are not enforced on Windows")
			}
			srv := providertest.Start(t, providertest.WithModels("fake-model"), providertest.WithAPIKey(key))
			home, cwd := t.TempDir(), filepath.Join(t.TempDir(), "proj")
			testenv.WriteFile(t, filepath.Join(cwd, ".keep"), "", 0o600)
			tokenFile := filepath.Join(t.TempDir(), "worker.token")
			if tt.tokenMode != 0 {
				testenv.WriteFile(t, tokenFile, workersTestToken+"\n", tt.tokenMode)
			}
			text := `default_model = "fake"

[[providers]]
name = "fake"
kind = "openai"
base_url = "` + srv.URL() + `"
models = ["fake-model"]
api_key_env = "` + keyVar + `"

[sandbox]
bash = "off"
`
			if tt.remote != "" {
				text += "\n[remote]\n" + strings.ReplaceAll(tt.remote, "{TOKEN}", tokenFile) + "\n"
			}
			for _, e := range tt.entries {
				text += "\n[[workers]]\n" + e + "\n"
			}
			testenv.WriteFile(t, config.UserConfigPath(home), text, 0o600)
			env := map[string]string{"REASONIX_HOME": home, keyVar: key}
			if !tt.noEnv {
				env[config.WorkerTokenEnv] = workersTestToken
			}
			r := runCLI(t, env, "", append([]string{"doctor", "--cwd", cwd}, tt.args...)...)
			if r.code != tt.wantCode {
				t.Fatalf("exit code = %d, want %d\nstdout:\n%s\nstderr: %s", r.code, tt.wantCode, r.stdout, r.stderr)
			}
			if strings.Contains(r.stdout, workersTestToken) {
				t.Errorf("the worker token was printed:\n%s", r.stdout)
			}
			expand := strings.NewReplacer("{TOKEN}", tokenFile, "{home}", home).Replace
			setup, workers := workerLines(r.stdout)
			for _, w := range tt.wantSetup {
				if !strings.Contains(setup, expand(w)) {
					t.Errorf("workers line %q does not contain %q\n%s", setup, expand(w), r.stdout)
				}
			}
			if len(tt.wantWorkers) > 0 && len(workers) != len(tt.wantWorkers) {
				t.Errorf("%d worker lines, want %d:\n%s", len(workers), len(tt.wantWorkers), r.stdout)
			}
			for i, w := range tt.wantWorkers {
				if i < len(workers) && !strings.Contains(workers[i], expand(w)) {
					t.Errorf("worker line %q does not contain %q", workers[i], expand(w))
				}
			}
			for _, w := range tt.wantText {
				if !strings.Contains(r.stdout, expand(w)) {
					t.Errorf("stdout does not contain %q:\n%s", expand(w), r.stdout)
				}
			}
		})
	}
}
