package prompt

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"reasonix/core/command"
)

// TestExpandPrompt is the expansion every frontend mirrors, without the
// binary: which slash commands are rendered, which pass through.
func TestExpandPrompt(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"n.txt": "N\n"})
	cmds := []command.Command{{Name: "fix", Body: "Fix $1 in @n.txt"}, {Name: "plain", Body: "Plain."}}
	block := "<file path=\"n.txt\">\nN\n</file>\n\n"
	tests := []struct{ name, input, want string }{
		{"custom command, then references", "/fix bug", block + "Fix bug in @n.txt"},
		{"arguments appended without placeholders", "/plain a b", "Plain.\n\na b"},
		{"built-in as typed", "/compact @n.txt", "/compact @n.txt"},
		{"mcp prompt as typed", "/mcp__srv__p @n.txt", "/mcp__srv__p @n.txt"},
		{"unknown command as typed", "/other @n.txt", "/other @n.txt"},
		{"plain prompt", "see @n.txt", block + "see @n.txt"},
		{"no references", "hello", "hello"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, notices := Expand(context.Background(), root, cmds, tc.input)
			if got != tc.want || len(notices) != 0 {
				t.Fatalf("Expand(%q) = %q, %q; want %q", tc.input, got, notices, tc.want)
			}
		})
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExpanderReadsCommandsOnce: the custom commands are read at the first
// prompt that could name one and not again, and a built-in or an MCP
// prompt never makes it read them.
func TestExpanderReadsCommandsOnce(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	dir := filepath.Join(cwd, ".reasonix", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := NewExpander(home, cwd)
	if got, _ := e.Expand(context.Background(), "/compact"); got != "/compact" {
		t.Fatalf("built-in became %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "hi.md"), []byte("Say hi to $1."), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.Expand(context.Background(), "/hi Ada"); got != "Say hi to Ada." {
		t.Fatalf("/hi Ada became %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "hi.md"), []byte("Changed."), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.Expand(context.Background(), "/hi Bo"); got != "Say hi to Bo." {
		t.Fatalf("commands were read again: /hi Bo became %q", got)
	}
	if got, _ := NewExpander(home, cwd).Expand(context.Background(), "/hi Bo"); got != "Changed.\n\nBo" {
		t.Fatalf("a new Expander did not read the edited command: %q", got)
	}
}
