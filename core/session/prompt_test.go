package session

import (
	"strings"
	"testing"
)

func TestSystemPrompt(t *testing.T) {
	t.Parallel()
	env := Environment{OS: "linux", Arch: "amd64", Cwd: "/w", Git: true, Tools: []string{"git", "go"},
		Extra: map[string]string{"zig": "/opt/zig", "go": "/usr/local/go/bin/go"}}
	got := SystemPrompt("", &env)
	if !strings.HasPrefix(got, DefaultSystemPrompt) {
		t.Error("empty base did not fall back to the default prompt")
	}
	for _, want := range []string{"- OS: linux/amd64", "- Working directory: /w", "git repository", "Commands on PATH: git, go"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "- go: ") > strings.Index(got, "- zig: ") {
		t.Error("extra tools not sorted")
	}
	if again := SystemPrompt("", &env); again != got {
		t.Error("prompt is not deterministic")
	}
	if SystemPrompt("custom", nil) != "custom" {
		t.Error("custom base without environment changed")
	}
}

func TestProbeEnvironmentFindsGit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if ProbeEnvironment(dir, nil).Git {
		t.Fatal("temp dir reported as a git repository")
	}
}
