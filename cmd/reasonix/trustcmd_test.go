package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/testenv"
	"reasonix/core/trust"
)

func TestTrustFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		want     TrustOptions
		wantCode int
	}{
		{"defaults", nil, TrustOptions{}, cmdutil.ExitOK},
		{"revoke", []string{"--revoke"}, TrustOptions{Revoke: true}, cmdutil.ExitOK},
		{"status in a workspace", []string{"--status", "--cwd", "/w"}, TrustOptions{GlobalOptions: cmdutil.GlobalOptions{Cwd: "/w"}, Status: true}, cmdutil.ExitOK},
		{"revoke and status", []string{"--revoke", "--status"}, TrustOptions{}, cmdutil.ExitUsage},
		{"positional argument", []string{"/w"}, TrustOptions{}, cmdutil.ExitUsage},
		// The decision is about the workspace's files; no other config
		// file takes part.
		{"config flag", []string{"--config", "x.toml"}, TrustOptions{}, cmdutil.ExitUsage},
		{"unknown flag", []string{"--yes"}, TrustOptions{}, cmdutil.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			var got *TrustOptions
			root := NewCmdRoot(f)
			// The real root, for its flag-error handling, with the trust
			// command swapped for one that records its options.
			old, _, err := root.Find([]string{"trust"})
			if err != nil || old.Name() != "trust" {
				t.Fatalf("root has no trust command: %v", err)
			}
			root.RemoveCommand(old)
			root.AddCommand(NewCmdTrust(f, func(o *TrustOptions) error { got = o; return nil }))
			root.SetArgs(append([]string{"trust"}, tt.args...))
			err = root.Execute()
			if code := cmdutil.ExitCode(err); code != tt.wantCode {
				t.Fatalf("exit code = %d (err %v), want %d", code, err, tt.wantCode)
			}
			if tt.wantCode != cmdutil.ExitOK {
				if got != nil {
					t.Errorf("the action ran with %+v", *got)
				}
				return
			}
			if got == nil || *got != tt.want {
				t.Errorf("options = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestTrustCommand runs `reasonix trust` in process through a workspace's
// states, checking what each step prints and records.
func TestTrustCommand(t *testing.T) {
	t.Parallel()
	home, work := t.TempDir(), t.TempDir()
	env := map[string]string{"REASONIX_HOME": home}
	testenv.WriteFile(t, filepath.Join(work, "reasonix.toml"), "[permissions]\nallow = [\"Bash(make:*)\"]\n[[plugins]]\nname = \"p\"\ncommand = \"p-server\"\n", 0o644)
	trustCLI := func(args ...string) cliResult {
		t.Helper()
		r := runCLI(t, env, "", append([]string{"trust", "--cwd", work}, args...)...)
		if r.code != 0 {
			t.Fatalf("trust %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r
	}
	status := func() string { t.Helper(); return strings.TrimSpace(trustCLI("--status").stdout) }

	if s := status(); s != string(trust.Untrusted) {
		t.Fatalf("fresh status = %q", s)
	}
	r := trustCLI()
	for _, want := range []string{"trusted ", "now honoured", "reasonix.toml: permissions.allow, plugins[p]", "reasonix mcp trust SERVER"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("trust output lacks %q:\n%s", want, r.stdout)
		}
	}
	if s := status(); s != string(trust.Trusted) {
		t.Fatalf("status = %q", s)
	}
	// A memory the product saves keeps the trust; a new skill does not.
	testenv.WriteFile(t, filepath.Join(work, ".reasonix", "memory", "m.md"), "remembered\n", 0o644)
	if s := status(); s != string(trust.Trusted) {
		t.Fatalf("status after a memory = %q", s)
	}
	testenv.WriteFile(t, filepath.Join(work, ".reasonix", "skills", "x", "SKILL.md"), "---\nname: x\n---\n", 0o644)
	if s := status(); s != string(trust.Changed) {
		t.Fatalf("status after a new skill = %q", s)
	}
	if r := trustCLI("--revoke"); !strings.Contains(r.stdout, "revoked") {
		t.Errorf("revoke: %s", r.stdout)
	}
	if s := status(); s != string(trust.Untrusted) {
		t.Fatalf("status after revoke = %q", s)
	}

	// A workspace whose project file sets only what an untrusted one may.
	plain := t.TempDir()
	testenv.WriteFile(t, filepath.Join(plain, "reasonix.toml"), "[agent]\ntemperature = 0.5\n", 0o644)
	r = runCLI(t, env, "", "trust", "--cwd", plain)
	if r.code != 0 || !strings.Contains(r.stdout, "set nothing that was being ignored") {
		t.Errorf("plain workspace: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if st, err := os.Stat(trust.Path(home)); err != nil || (st.Mode().Perm() != 0o600 && os.PathSeparator == '/') {
		t.Errorf("store: %v %v", st, err)
	}
}
