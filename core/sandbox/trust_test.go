package sandbox

import (
	"path/filepath"
	"testing"
)

// TestProtected checks which paths Protected reports as trust-bearing, over
// a workspace whose trust-bearing paths are reached through symlinks too:
// .mcp.json is a symlink to a file outside, hookdir is a symlink to
// .git/hooks, .reasonix/memory/cmds leads back
// into .reasonix/commands, and .reasonix/autoresearch is itself a symlink
// to .reasonix/skills.
func TestProtected(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{".git/hooks", ".reasonix/commands", ".reasonix/memory", ".reasonix/skills", "src"} {
		mkdir(t, filepath.Join(root, d))
	}
	mkdir(t, outside)
	writeFile(t, filepath.Join(outside, "servers.json"), "{}")
	symlink(t, filepath.Join(outside, "servers.json"), filepath.Join(root, ".mcp.json"))
	for _, f := range []string{"reasonix.toml", ".git/config", ".git/HEAD", ".git/hooks/pre-commit", "src/main.go", ".reasonix/memory/m.md"} {
		writeFile(t, filepath.Join(root, f), "x")
	}
	symlink(t, filepath.Join(root, ".git", "hooks"), filepath.Join(root, "hookdir"))
	symlink(t, "../commands", filepath.Join(root, ".reasonix", "memory", "cmds"))
	symlink(t, "skills", filepath.Join(root, ".reasonix", "autoresearch"))
	symlink(t, filepath.Join(root, "reasonix.toml"), filepath.Join(outside, "cfg-link"))
	symlink(t, outside, filepath.Join(root, ".reasonix", "memory", "out"))
	s, err := New(Options{Root: root, Bash: "off"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		path     string
		want     bool
		resolved string // when set, the path Protected must report
	}{
		{name: "project config", path: "reasonix.toml", want: true},
		{name: "mcp servers", path: ".mcp.json", want: true, resolved: filepath.Join(outside, "servers.json")},
		{name: "the file a trust-bearing symlink leads to", path: filepath.Join(outside, "servers.json"), want: true},
		{name: "the .reasonix directory", path: ".reasonix", want: true},
		{name: "a command", path: ".reasonix/commands/x.md", want: true},
		{name: "a skill that does not exist yet", path: ".reasonix/skills/new/SKILL.md", want: true},
		{name: "git config", path: ".git/config", want: true},
		{name: "an existing hook", path: ".git/hooks/pre-commit", want: true},
		{name: "a new hook", path: ".git/hooks/post-checkout", want: true},
		{name: "absolute spelling", path: filepath.Join(root, ".git", "config"), want: true},
		{name: "a hook through a symlinked directory", path: "hookdir/pre-push", want: true,
			resolved: filepath.Join(root, ".git", "hooks", "pre-push")},
		{name: "the config through a symlink outside", path: filepath.Join(outside, "cfg-link"), want: true,
			resolved: filepath.Join(root, "reasonix.toml")},
		{name: "memory leading back into commands", path: ".reasonix/memory/cmds/y.md", want: true,
			resolved: filepath.Join(root, ".reasonix", "commands", "y.md")},
		{name: "autoresearch that is a symlink into skills", path: ".reasonix/autoresearch/run.md", want: true},
		{name: "dot dot into commands", path: ".reasonix/memory/../commands/z.md", want: true},
		{name: "project memory", path: ".reasonix/memory/m.md", want: false},
		{name: "new project memory", path: ".reasonix/memory/new/n.md", want: false},
		{name: "memory leading outside", path: ".reasonix/memory/out/o.md", want: false,
			resolved: filepath.Join(outside, "o.md")},
		{name: "an ordinary file", path: "src/main.go", want: false},
		{name: "the rest of .git", path: ".git/HEAD", want: false},
		{name: ".git itself", path: ".git", want: true},
		{name: ".git itself, spelled with a trailing slash", path: ".git/", want: true},
		{name: "a name that extends a protected one", path: "reasonix.toml.bak", want: false},
		{name: "the workspace root", path: ".", want: false},
		{name: "unresolvable", path: "nope/../../x", want: true, resolved: filepath.Join(base, "x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := s.Protected(tt.path)
			if ok != tt.want {
				t.Errorf("Protected(%q) = %q, %v; want %v", tt.path, got, ok, tt.want)
			}
			if tt.resolved != "" && got != tt.resolved {
				t.Errorf("Protected(%q) reports %q, want %q", tt.path, got, tt.resolved)
			}
		})
	}
	// A .git made where there is none counts too, as a file or by a move.
	bare, err := New(Options{Root: outside, Bash: "off"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := bare.Protected(".git"); !ok {
		t.Error("a .git that does not exist yet is not reported as protected")
	}
	// A Narrow sandbox judges by the same workspace.
	n, err := s.Narrow([]string{"src"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Protected(".git/config"); !ok {
		t.Error("a writer's sandbox does not report .git/config as protected")
	}
	if s.Root() != root || n.Root() != root {
		t.Errorf("Root() = %q, %q; want %q", s.Root(), n.Root(), root)
	}
}
