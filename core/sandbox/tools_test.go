package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix/core/tool"
	_ "reasonix/core/tool/builtin"
)

// builtinTool returns the named built-in tool over a workspace guarded and
// jailed by s.
func builtinTool(t *testing.T, s *Sandbox, root, name string) tool.Tool {
	t.Helper()
	tools, err := tool.NewBuiltins(tool.Env{Root: root, Guard: s, Shell: s}, []string{name})
	if err != nil || len(tools) != 1 {
		t.Fatalf("NewBuiltins(%s) = %v, %v", name, tools, err)
	}
	return tools[0]
}

// TestMoveFileTool runs the real move_file tool over the sandbox: a rename
// into a directory outside the roots, or out of one, is refused and
// nothing moves.
func TestMoveFileTool(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		src, dst func(l layout) string
		wantErr  string
		moved    bool
	}{
		{name: "inside the root", src: func(layout) string { return "plain.txt" }, dst: func(layout) string { return "inside/p.txt" }, moved: true},
		{name: "into an outside directory", src: func(layout) string { return "plain.txt" },
			dst: func(l layout) string { return filepath.Join(l.outside, "p.txt") }, wantErr: "destination: sandbox: write of"},
		{name: "into an outside directory through a symlink", src: func(layout) string { return "plain.txt" },
			dst: func(layout) string { return "link/p.txt" }, wantErr: "outside the writable roots"},
		{name: "out of an outside directory", src: func(l layout) string { return filepath.Join(l.outside, "target.txt") },
			dst: func(layout) string { return "taken.txt" }, wantErr: "source: sandbox: write of"},
		{name: "into the reasonix home through a symlink", src: func(layout) string { return "plain.txt" },
			dst: func(layout) string { return "homelink/p.txt" }, wantErr: "in the Reasonix home"},
		{name: "a directory holding a forbid_read file", src: func(layout) string { return "." },
			dst: func(l layout) string { return filepath.Join(l.extra, "ws") }, wantErr: "forbid_read entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, s := newLayout(t)
			mv := builtinTool(t, s, l.root, "move_file")
			args, _ := json.Marshal(map[string]string{"path": tt.src(l), "destination": tt.dst(l)})
			_, err := mv.Execute(t.Context(), args)
			abs := func(p string) string {
				if filepath.IsAbs(p) {
					return p
				}
				return filepath.Join(l.root, p)
			}
			_, srcErr := os.Lstat(abs(tt.src(l)))
			_, dstErr := os.Lstat(abs(tt.dst(l)))
			if tt.moved {
				if err != nil || srcErr == nil || dstErr != nil {
					t.Fatalf("move: %v; source still there %v, destination there %v", err, srcErr == nil, dstErr == nil)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("move = %v, want a refusal containing %q", err, tt.wantErr)
			}
			if srcErr != nil || !errors.Is(dstErr, os.ErrNotExist) {
				t.Fatalf("after a refused move: source err %v, destination err %v", srcErr, dstErr)
			}
		})
	}
}

// ruleWorkspace is a workspace whose private directories a PathRule
// denies, as the permission policy's Read(private/**) would, with the
// needle ordinary files hold beside a key; the top one is reached through
// a symlinked directory and a symlinked file too. Reads, and only reads,
// of a .pem file in pkg are denied as well.
func ruleWorkspace(t *testing.T) (string, *Sandbox) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"private", "src", "pkg", "outer/private"} {
		mkdir(t, filepath.Join(root, d))
	}
	writeFile(t, filepath.Join(root, "private", "key.txt"), "needle TOPSECRET\n")
	writeFile(t, filepath.Join(root, "src", "a.txt"), "needle here\n")
	writeFile(t, filepath.Join(root, "pkg", "ok.txt"), "fine\n")
	writeFile(t, filepath.Join(root, "pkg", "deploy.pem"), "needle TOPSECRET\n")
	writeFile(t, filepath.Join(root, "outer", "ok.txt"), "fine\n")
	writeFile(t, filepath.Join(root, "outer", "private", "k.txt"), "needle TOPSECRET\n")
	symlink(t, "private", filepath.Join(root, "privlink"))
	symlink(t, "private/key.txt", filepath.Join(root, "keylink"))
	pem := filepath.Join(root, "pkg", "deploy.pem")
	s, err := New(Options{Root: root, Bash: "off", PathRule: func(op, p string) (string, bool) {
		switch {
		case within(filepath.Join(root, "private"), p), within(filepath.Join(root, "outer", "private"), p):
			return "the permission rule Read(private/**) denies it", true
		case op == "read" && p == pem:
			return "the permission rule Read(**/*.pem) denies it", true
		}
		return "", false
	}})
	if err != nil {
		t.Fatal(err)
	}
	return root, s
}

// TestWalkToolsSkipRuleDenied runs ls, glob, grep and read_file over the
// sandbox with a PathRule: what the rule denies is left out of walks and
// counted, never shown, and refused with the rule's reason when named,
// through a symlink too.
func TestWalkToolsSkipRuleDenied(t *testing.T) {
	t.Parallel()
	root, s := ruleWorkspace(t)
	tests := []struct {
		tool    string
		args    map[string]any
		want    []string // substrings of the result
		wantErr string
	}{
		{tool: "grep", args: map[string]any{"pattern": "needle"},
			want: []string{"src/a.txt:1:needle here", "[3 paths skipped by read restrictions]"}},
		{tool: "glob", args: map[string]any{"pattern": "**/*"},
			want: []string{"outer/ok.txt", "pkg/ok.txt", "src/a.txt", "[5 paths skipped by read restrictions]"}},
		{tool: "ls", args: map[string]any{},
			want: []string{"outer/", "pkg/", "src/", "[3 entries hidden by read restrictions]"}},
		{tool: "ls", args: map[string]any{"path": "pkg"}, want: []string{"ok.txt", "[1 entry hidden by read restrictions]"}},
		{tool: "grep", args: map[string]any{"pattern": "needle", "path": "private"}, wantErr: "Read(private/**) denies it"},
		{tool: "grep", args: map[string]any{"pattern": "needle", "path": "privlink"}, wantErr: "Read(private/**) denies it"},
		{tool: "grep", args: map[string]any{"pattern": "needle", "path": "keylink"}, wantErr: "Read(private/**) denies it"},
		{tool: "glob", args: map[string]any{"pattern": "*", "path": "privlink"}, wantErr: "Read(private/**) denies it"},
		{tool: "ls", args: map[string]any{"path": "privlink"}, wantErr: "Read(private/**) denies it"},
		{tool: "read_file", args: map[string]any{"path": "keylink"}, wantErr: "do not try to reach it another way"},
		{tool: "read_file", args: map[string]any{"path": "pkg/deploy.pem"}, wantErr: "Read(**/*.pem) denies it"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %v", tt.tool, tt.args), func(t *testing.T) {
			t.Parallel()
			args, _ := json.Marshal(tt.args)
			out, err := builtinTool(t, s, root, tt.tool).Execute(t.Context(), args)
			if strings.Contains(out, "TOPSECRET") || err != nil && strings.Contains(err.Error(), "TOPSECRET") {
				t.Fatalf("%s leaks the key: %q, %v", tt.tool, out, err)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("%s = %q, %v; want an error containing %q", tt.tool, out, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s result does not contain %q:\n%s", tt.tool, w, out)
				}
			}
			for _, name := range []string{"private", "key.txt", "deploy.pem", "privlink", "keylink"} {
				if strings.Contains(out, name) {
					t.Errorf("%s result names %s:\n%s", tt.tool, name, out)
				}
			}
		})
	}
}

// TestMoveFileToolRuleDenied moves directories and files with the real
// move_file tool over a sandbox with a PathRule: a directory holding a
// denied file, or a move into a denied directory through a symlink, is
// refused and nothing moves.
func TestMoveFileToolRuleDenied(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, dst, wantErr string
	}{
		// The rule denies only reads of the .pem file: moving it would
		// still carry it out from under the rule.
		{name: "a directory holding a file that may not be read", src: "pkg", dst: "lib/pkg",
			wantErr: "cannot move pkg: the sandbox refuses 1 entry below it; the first: sandbox: read of"},
		{name: "a file that may not be read", src: "pkg/deploy.pem", dst: "deploy.pem", wantErr: "source: sandbox: read of"},
		{name: "a directory holding a denied directory", src: "outer", dst: "lib/outer",
			wantErr: "cannot move outer: the sandbox refuses 1 entry below it; the first: sandbox: write of"},
		{name: "a file into a denied directory through a symlink", src: "src/a.txt", dst: "privlink/a.txt",
			wantErr: "destination: sandbox: write of \"privlink/a.txt\" refused: it resolves to"},
		{name: "a denied file out of its directory", src: "keylink", dst: "stolen.txt", wantErr: "source: sandbox:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, s := ruleWorkspace(t)
			before := snapshot(t, filepath.Dir(root))
			args, _ := json.Marshal(map[string]string{"path": tt.src, "destination": tt.dst})
			out, err := builtinTool(t, s, root, "move_file").Execute(t.Context(), args)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("move = %q, %v; want a refusal containing %q", out, err, tt.wantErr)
			}
			if after := snapshot(t, filepath.Dir(root)); !slices.Equal(before, after) {
				t.Fatalf("the refused move changed the tree:\nbefore %q\nafter  %q", before, after)
			}
		})
	}
}

// snapshot lists every path below dir, for telling whether anything moved.
func snapshot(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		out = append(out, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
