//go:build linux

package sandbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/testenv"
)

// TestNarrowJail runs two writers' bash tools in the real bubblewrap jail
// over one workspace in t.TempDir, which lies in /tmp, a scratch directory
// the jail keeps writable: that is where the workspace's read-only bind has
// to win. Writer a claims the directory a and the file note.txt, writer b
// the directory b and the path later, which does not exist when b is
// built. Neither may touch the other's files or anything unclaimed.
func TestNarrowJail(t *testing.T) {
	t.Parallel()
	testenv.NeedBwrap(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a/own", "b/own", "note.txt", "top.txt"} {
		mkdir(t, filepath.Dir(filepath.Join(root, f)))
		writeFile(t, filepath.Join(root, f), "original\n")
	}
	s, err := New(Options{Root: root, Bash: "enforce"})
	if err != nil {
		t.Fatal(err)
	}
	narrow := func(claims ...string) *Sandbox {
		n, err := s.Narrow(claims)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	bashA := builtinTool(t, narrow("a", "note.txt"), root, "bash")
	bashB := builtinTool(t, narrow("b", "later"), root, "bash")

	unchanged := func(t *testing.T, rel string) {
		t.Helper()
		if b, err := os.ReadFile(filepath.Join(root, rel)); err != nil || string(b) != "original\n" {
			t.Errorf("%s = %q, %v; want it unchanged", rel, b, err)
		}
	}
	tests := []struct {
		name    string
		writerA bool
		command string
		want    string
		check   func(t *testing.T)
	}{
		{name: "a writes its directory", writerA: true, command: "echo mine > a/new && echo ok", want: "ok\nexit code: 0",
			check: func(t *testing.T) {
				if b, _ := os.ReadFile(filepath.Join(root, "a", "new")); string(b) != "mine\n" {
					t.Errorf("a/new = %q", b)
				}
			}},
		{name: "a appends to its claimed file", writerA: true, command: "echo more >> note.txt && echo ok", want: "ok\nexit code: 0"},
		{name: "a cannot clobber b's file", writerA: true, command: "echo clobbered > b/own", want: "Read-only file system",
			check: func(t *testing.T) { unchanged(t, "b/own") }},
		{name: "b cannot clobber a's file", command: "echo clobbered > a/own", want: "Read-only file system",
			check: func(t *testing.T) { unchanged(t, "a/own") }},
		{name: "b cannot delete a's file", command: "rm -f a/own", want: "exit code: 1",
			check: func(t *testing.T) { unchanged(t, "a/own") }},
		{name: "a cannot write the workspace root", writerA: true, command: "echo x > top.txt", want: "Read-only file system",
			check: func(t *testing.T) { unchanged(t, "top.txt") }},
		{name: "a cannot create an unclaimed file", writerA: true, command: "echo x > stray.txt", want: "Read-only file system",
			check: func(t *testing.T) {
				if _, err := os.Lstat(filepath.Join(root, "stray.txt")); !os.IsNotExist(err) {
					t.Errorf("stray.txt exists: %v", err)
				}
			}},
		{name: "a cannot write b's file through a symlink", writerA: true, command: "ln -s ../b/own a/link && echo clobbered > a/link",
			want: "Read-only file system", check: func(t *testing.T) { unchanged(t, "b/own") }},
		{name: "scratch stays writable", writerA: true, command: "f=$(mktemp) && echo ok > $f && cat $f && rm $f", want: "ok\nexit code: 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bash := bashB
			if tt.writerA {
				bash = bashA
			}
			args, _ := json.Marshal(map[string]string{"command": tt.command})
			out, err := bash.Execute(t.Context(), args)
			if err != nil || !strings.Contains(out, tt.want) {
				t.Fatalf("bash %q = %q, %v; want output containing %q", tt.command, out, err, tt.want)
			}
			if tt.check != nil {
				tt.check(t)
			}
		})
	}

	// A claim that did not exist when the sandbox was built becomes
	// writable once something (write_file, which creates parents) makes it.
	args, _ := json.Marshal(map[string]string{"command": "mkdir later"})
	if out, err := bashB.Execute(t.Context(), args); err != nil || !strings.Contains(out, "Read-only file system") {
		t.Fatalf("bash creating a claim that does not exist yet = %q, %v; want a read-only refusal", out, err)
	}
	args, _ = json.Marshal(map[string]string{"command": "echo x > later/f && echo ok"})
	if err := os.Mkdir(filepath.Join(root, "later"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := bashB.Execute(t.Context(), args); err != nil || !strings.Contains(out, "ok\nexit code: 0") {
		t.Fatalf("bash in a claim created since = %q, %v", out, err)
	}
}
