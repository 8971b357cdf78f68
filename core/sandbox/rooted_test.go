package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/testenv"
)

// TestRooted: a sandbox rooted at a copy of the workspace lets the task
// write the copy and nothing of the workspace, keeps forbid_read entries of
// the workspace forbidden at the same place in the copy, and its jailed
// bash can write the copy but not the workspace.
func TestRooted(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, wt := filepath.Join(base, "ws"), filepath.Join(base, "wt")
	for _, d := range []string{ws, wt} {
		mkdir(t, filepath.Join(d, "secret"))
		writeFile(t, filepath.Join(d, "a.txt"), "original\n")
		writeFile(t, filepath.Join(d, "secret", "key"), "k\n")
	}
	s, err := New(Options{Root: ws, Bash: "enforce", ForbidRead: []string{"secret"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Rooted(wt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.WritePath(filepath.Join(wt, "a.txt")); err != nil {
		t.Errorf("writing the copy: %v", err)
	}
	if _, err := r.WritePath("a.txt"); err != nil {
		t.Errorf("writing the copy by a relative path: %v", err)
	}
	if _, err := r.WritePath(filepath.Join(ws, "a.txt")); err == nil {
		t.Error("the rooted sandbox may write the workspace itself")
	}
	if _, err := r.ReadPath(filepath.Join(wt, "secret", "key")); err == nil {
		t.Error("forbid_read does not hold in the copy")
	}
	if _, err := s.Rooted(filepath.Join(base, "missing")); err == nil {
		t.Error("rooted at a directory that does not exist")
	}

	testenv.NeedBwrap(t)
	bash := builtinTool(t, r, wt, "bash")
	args, _ := json.Marshal(map[string]string{"command": "echo copy > a.txt; echo ws > " + filepath.Join(ws, "a.txt") + "; true"})
	if _, err := bash.Execute(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(wt, "a.txt")); strings.TrimSpace(string(b)) != "copy" {
		t.Errorf("the copy holds %q after bash wrote it", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "original\n" {
		t.Errorf("bash in the copy changed the workspace: %q", b)
	}
}

// TestRootedAsksTheRuleAboutTheWorkspacePath: a deny rule on a workspace
// path holds for the same path in the copy.
func TestRootedAsksTheRuleAboutTheWorkspacePath(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, wt := filepath.Join(base, "ws"), filepath.Join(base, "wt")
	mkdir(t, ws)
	mkdir(t, wt)
	denied := filepath.Join(ws, "private.txt")
	s, err := New(Options{Root: ws, PathRule: func(op, p string) (string, bool) { return "denied", p == denied }})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Rooted(wt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadPath(filepath.Join(wt, "private.txt")); err == nil {
		t.Error("the copy of a denied path is readable")
	}
	if _, err := r.ReadPath(filepath.Join(wt, "public.txt")); err != nil {
		t.Errorf("another path in the copy: %v", err)
	}
}
