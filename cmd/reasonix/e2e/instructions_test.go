package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
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

// TestE2ESkillsAndMemoriesInThePrompt: a new session's system prompt lists
// the skills and subagent profiles the model may use on its own (with their
// descriptions) and the titles of the saved memories; a profile whose
// invocation is manual is left out, and no memory body is in it.
func TestE2ESkillsAndMemoriesInThePrompt(t *testing.T) {
	t.Parallel()
	e := newE2E(t, providertest.WithResponder(func(providertest.Request) providertest.Turn {
		return providertest.Turn{Text: "ok"}
	}))
	testenv.WriteTree(t, e.work, map[string]string{
		".reasonix/skills/release-notes/SKILL.md": "---\nname: release-notes\ndescription: Write release notes from the git log\n---\nSteps.\n",
		".reasonix/skills/auditor/SKILL.md":       "---\nname: auditor\ndescription: Audit the code for security bugs\nrunAs: subagent\n---\nYou audit.\n",
		".reasonix/skills/secret-ops/SKILL.md":    "---\nname: secret-ops\ndescription: Only when the user asks\nrunAs: subagent\ninvocation: manual\n---\nOps.\n",
		".reasonix/memory/db-host.md":             "---\nname: db-host\ndescription: Where the staging database lives\nscope: project\n---\nbody-that-must-not-be-in-the-prompt\n",
	})
	if r := e.run("run", "hello"); r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	sys := e.srv.Requests()[0].Messages[0].Content
	for _, want := range []string{"release-notes: Write release notes from the git log", "auditor (subagent profile): Audit the code for security bugs",
		"project/db-host: Where the staging database lives"} {
		if !strings.Contains(sys, want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, sys)
		}
	}
	for _, not := range []string{"secret-ops", "body-that-must-not-be-in-the-prompt"} {
		if strings.Contains(sys, not) {
			t.Errorf("the system prompt holds %q:\n%s", not, sys)
		}
	}
}

// TestE2ETextOutputSeparatesMessages: a headless run's text output puts a
// blank line between the answers of successive model requests, instead of
// gluing them into one line.
func TestE2ETextOutputSeparatesMessages(t *testing.T) {
	t.Parallel()
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if len(toolResults(req)) == 0 {
			return providertest.Turn{Text: "I'll create the file.", ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"out.txt","content":"x"}`}}}
		}
		return providertest.Turn{Text: "I wrote **out.txt** for you."}
	}))
	r := e.run("run", "--permission-mode", "yolo", "write out.txt")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	if want := "I'll create the file.\n\nI wrote **out.txt** for you.\n"; r.stdout != want {
		t.Errorf("stdout = %q, want %q", r.stdout, want)
	}
}
