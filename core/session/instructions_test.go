package session

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoadInstructions: the home's file first, then each directory from
// the repository root down to the workspace; CLAUDE.md only where there
// is no AGENTS.md, REASONIX.md after either; nothing above the repository
// root.
func TestLoadInstructions(t *testing.T) {
	base := t.TempDir()
	home, repo := filepath.Join(base, "home"), filepath.Join(base, "outer", "repo")
	writeFiles(t, base, map[string]string{
		"outer/AGENTS.md":              "above the repository",
		"outer/repo/.git/HEAD":         "ref: refs/heads/main\n",
		"outer/repo/AGENTS.md":         "root agents",
		"outer/repo/CLAUDE.md":         "root claude, shadowed",
		"outer/repo/svc/CLAUDE.md":     "svc claude",
		"outer/repo/svc/REASONIX.md":   "svc reasonix",
		"outer/repo/svc/api/README.md": "not an instruction file",
		"home/AGENTS.md":               "home agents",
	})
	in := LoadInstructions(filepath.Join(repo, "svc", "api"), home)
	want := []string{
		filepath.Join(home, "AGENTS.md"),
		filepath.Join(repo, "AGENTS.md"),
		filepath.Join(repo, "svc", "CLAUDE.md"),
		filepath.Join(repo, "svc", "REASONIX.md"),
	}
	if got := in.Paths(); !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	block := in.Block()
	for _, s := range []string{"home agents", "root agents", "svc claude", "svc reasonix"} {
		if !strings.Contains(block, s) {
			t.Errorf("block lacks %q:\n%s", s, block)
		}
	}
	for _, s := range []string{"above the repository", "shadowed"} {
		if strings.Contains(block, s) {
			t.Errorf("block holds %q:\n%s", s, block)
		}
	}
	if i, j := strings.Index(block, "root agents"), strings.Index(block, "svc reasonix"); i > j {
		t.Error("the more specific file does not come last")
	}
	if len(in.Notices()) != 0 {
		t.Errorf("notices %v", in.Notices())
	}
	if LoadInstructions(t.TempDir(), "").Block() != "" {
		t.Error("a workspace without instruction files has a block")
	}
}

// TestInstructionsKeepOutOfTheTree: an instruction file that is a symlink
// to a file outside its repository (a key, the home's config) is skipped
// with a reason, never read into the prompt; one inside is read.
func TestInstructionsKeepOutOfTheTree(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	writeFiles(t, base, map[string]string{
		"secret/id_ed25519":    "PRIVATE KEY",
		"repo/.git/HEAD":       "ref: refs/heads/main\n",
		"repo/docs/agents.txt": "shared rules",
		"repo/sub/x.go":        "package x",
	})
	if err := os.Symlink(filepath.Join(base, "secret", "id_ed25519"), filepath.Join(repo, "AGENTS.md")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if err := os.Symlink(filepath.Join("..", "docs", "agents.txt"), filepath.Join(repo, "sub", "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	in := LoadInstructions(filepath.Join(repo, "sub"), "")
	if strings.Contains(in.Block(), "PRIVATE KEY") {
		t.Fatal("a symlink out of the repository was read into the prompt")
	}
	if !strings.Contains(in.Block(), "shared rules") {
		t.Errorf("a symlink inside the repository was not read:\n%s", in.Block())
	}
	if len(in.Skipped) != 1 || !strings.Contains(in.Skipped[0], "outside") {
		t.Errorf("skipped %v, want the outside symlink", in.Skipped)
	}
}

// TestInstructionsAreCapped: past MaxInstructionBytes in all, a file is
// cut and says so, and a notice names it.
func TestInstructionsAreCapped(t *testing.T) {
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{
		".git/HEAD":   "ref: refs/heads/main\n",
		"AGENTS.md":   strings.Repeat("a", MaxInstructionBytes-100),
		"REASONIX.md": strings.Repeat("r", 1000),
	})
	in := LoadInstructions(repo, "")
	total := 0
	for _, f := range in.Files {
		total += len(f.Text)
	}
	if total != MaxInstructionBytes || in.Files[1].Cut != 900 {
		t.Errorf("%d bytes kept, REASONIX.md cut by %d; want %d and 900", total, in.Files[1].Cut, MaxInstructionBytes)
	}
	if !strings.Contains(in.Block(), "900 bytes of this file were left out") {
		t.Error("the block does not say what was cut")
	}
	if n := in.Notices(); len(n) != 1 || !strings.Contains(n[0], "REASONIX.md") {
		t.Errorf("notices %v", n)
	}
}
