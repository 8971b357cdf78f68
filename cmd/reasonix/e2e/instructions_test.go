package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
)

// TestE2EProjectInstructions: a headless run puts the workspace's
// AGENTS.md (or, alone, its CLAUDE.md) and the home's AGENTS.md into the
// first request's system message; CLAUDE.md beside an AGENTS.md is not
// read; an AGENTS.md that is a symlink out of the workspace is skipped
// with a warning, and `reasonix doctor` lists what a session reads.
func TestE2EProjectInstructions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		files     map[string]string
		want, not []string
	}{
		{"agents", map[string]string{"AGENTS.md": "Run make check before you answer.", "CLAUDE.md": "claude-only rule"},
			[]string{"Run make check before you answer.", "home-wide rule"}, []string{"claude-only rule"}},
		{"claude alone", map[string]string{"CLAUDE.md": "Use tabs, never spaces."},
			[]string{"Use tabs, never spaces.", "home-wide rule"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, providertest.WithResponder(func(providertest.Request) providertest.Turn {
				return providertest.Turn{Text: "ok"}
			}))
			for name, text := range tc.files {
				if err := os.WriteFile(filepath.Join(e.work, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(e.home, "AGENTS.md"), []byte("home-wide rule"), 0o644); err != nil {
				t.Fatal(err)
			}
			if r := e.run("run", "hello"); r.code != 0 {
				t.Fatalf("run failed:\n%s", r)
			}
			reqs := e.srv.Requests()
			if len(reqs) == 0 || len(reqs[0].Messages) == 0 || reqs[0].Messages[0].Role != "system" {
				t.Fatalf("no system message in %+v", reqs)
			}
			sys := reqs[0].Messages[0].Content
			for _, s := range tc.want {
				if !strings.Contains(sys, s) {
					t.Errorf("system message lacks %q:\n%s", s, sys)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(sys, s) {
					t.Errorf("system message holds %q:\n%s", s, sys)
				}
			}
			d := e.run("doctor")
			if !strings.Contains(d.stdout, "project") || !strings.Contains(d.stdout, filepath.Join(e.work, "AGENTS.md")) && tc.name == "agents" {
				t.Errorf("doctor does not list the instructions:\n%s", d.stdout)
			}
		})
	}
	t.Run("symlink out", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t, providertest.WithResponder(func(providertest.Request) providertest.Turn {
			return providertest.Turn{Text: "ok"}
		}))
		if err := os.Symlink(filepath.Join(e.home, "config.toml"), filepath.Join(e.work, "AGENTS.md")); err != nil {
			t.Skipf("no symlinks: %v", err)
		}
		r := e.run("run", "hello")
		if r.code != 0 {
			t.Fatalf("run failed:\n%s", r)
		}
		if sys := e.srv.Requests()[0].Messages[0].Content; strings.Contains(sys, "api_key_env") {
			t.Fatalf("the home's config reached the model through a symlinked AGENTS.md:\n%s", sys)
		}
		if !strings.Contains(r.stderr, "skipped") || !strings.Contains(r.stderr, "outside") {
			t.Errorf("no warning about the skipped file:\n%s", r.stderr)
		}
	})
}
