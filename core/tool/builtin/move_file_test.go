package builtin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/tool"
	"reasonix/core/tool/builtin/toolpath"
)

func TestMoveFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   map[string]string // present before the call
		dirs    []string          // empty directories present before the call
		args    string
		want    string
		wantErr string
		after   map[string]string // files that must exist afterwards, with content
		gone    []string          // paths that must not exist afterwards
	}{
		{name: "rename in place", files: map[string]string{"a.txt": "A"},
			args: `{"path":"a.txt","destination":"b.txt"}`, want: "moved a.txt to b.txt",
			after: map[string]string{"b.txt": "A"}, gone: []string{"a.txt"}},
		{name: "across directories", files: map[string]string{"src/a.txt": "A"}, dirs: []string{"dst"},
			args: `{"path":"src/a.txt","destination":"dst/a.txt"}`, want: "moved src/a.txt to dst/a.txt",
			after: map[string]string{"dst/a.txt": "A"}, gone: []string{"src/a.txt"}},
		{name: "creates destination parents", files: map[string]string{"a.txt": "A"},
			args: `{"path":"a.txt","destination":"x/y/z.txt"}`, want: "moved a.txt to x/y/z.txt",
			after: map[string]string{"x/y/z.txt": "A"}, gone: []string{"a.txt"}},
		{name: "moves a directory", files: map[string]string{"pkg/a.go": "A", "pkg/sub/b.go": "B"},
			args: `{"path":"pkg","destination":"lib/pkg"}`, want: "moved pkg to lib/pkg",
			after: map[string]string{"lib/pkg/a.go": "A", "lib/pkg/sub/b.go": "B"}, gone: []string{"pkg"}},
		{name: "refuses existing destination", files: map[string]string{"a.txt": "A", "b.txt": "B"},
			args:    `{"path":"a.txt","destination":"b.txt"}`,
			wantErr: "move_file: destination b.txt already exists; set overwrite to true to replace it",
			after:   map[string]string{"a.txt": "A", "b.txt": "B"}},
		{name: "overwrite replaces", files: map[string]string{"a.txt": "A", "b.txt": "B"},
			args:  `{"path":"a.txt","destination":"b.txt","overwrite":true}`,
			want:  "moved a.txt to b.txt (replaced the existing file)",
			after: map[string]string{"b.txt": "A"}, gone: []string{"a.txt"}},
		{name: "never replaces a directory", files: map[string]string{"a.txt": "A"}, dirs: []string{"d"},
			args:    `{"path":"a.txt","destination":"d","overwrite":true}`,
			wantErr: "move_file: destination d is an existing directory",
			after:   map[string]string{"a.txt": "A"}},
		{name: "directory onto file", files: map[string]string{"d/x": "X", "f": "F"},
			args:    `{"path":"d","destination":"f","overwrite":true}`,
			wantErr: "move_file: cannot replace file f with directory d",
			after:   map[string]string{"d/x": "X", "f": "F"}},
		{name: "missing source",
			args: `{"path":"nope.txt","destination":"b.txt"}`, wantErr: "move_file: source nope.txt does not exist",
			gone: []string{"b.txt"}},
		{name: "same path", files: map[string]string{"a.txt": "A"},
			args: `{"path":"a.txt","destination":"./a.txt"}`, wantErr: "move_file: source and destination are the same path a.txt",
			after: map[string]string{"a.txt": "A"}},
		{name: "destination required", files: map[string]string{"a.txt": "A"},
			args: `{"path":"a.txt"}`, wantErr: `move_file: "destination" is required`,
			after: map[string]string{"a.txt": "A"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			for rel, text := range tc.files {
				putFile(t, root, rel, text)
			}
			for _, d := range tc.dirs {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			got, err := runTool(t, tool.Env{Root: root}, "move_file", tc.args)
			checkResult(t, got, err, tc.want, tc.wantErr)
			for rel, want := range tc.after {
				if text := fileText(t, root, rel); text != want {
					t.Errorf("%s = %q, want %q", rel, text, want)
				}
			}
			for _, rel := range tc.gone {
				if _, err := os.Lstat(filepath.Join(root, rel)); !os.IsNotExist(err) {
					t.Errorf("%s still exists (lstat err %v)", rel, err)
				}
			}
		})
	}
}

// treeGuard refuses, for reads and writes, the paths under root listed in
// deny (relative, slash-separated) and everything below them, and reads
// alone of those in unreadable.
type treeGuard struct {
	root             string
	deny, unreadable []string
}

func (g treeGuard) refused(p string, list []string) bool {
	rel, ok := toolpath.RelUnder(g.root, toolpath.JoinRoot(g.root, p))
	if !ok {
		return false
	}
	for _, d := range list {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

func (g treeGuard) ReadPath(p string) (string, error) {
	if g.refused(p, g.deny) || g.refused(p, g.unreadable) {
		return "", errors.New("guard: read refused for " + p)
	}
	return toolpath.JoinRoot(g.root, p), nil
}

func (g treeGuard) WritePath(p string) (string, error) {
	if g.refused(p, g.deny) {
		return "", errors.New("guard: write refused for " + p)
	}
	return toolpath.JoinRoot(g.root, p), nil
}

// TestMoveFileDirectoryGuard moves directories holding entries the guard
// refuses: the move is refused, naming the first such entry and how many,
// and nothing moves.
func TestMoveFileDirectoryGuard(t *testing.T) {
	t.Parallel()
	files := map[string]string{"pkg/a.go": "A", "pkg/keys/k.pem": "K", "pkg/keys/l.pem": "L", "pkg/z/token": "T"}
	tests := []struct {
		name             string
		deny, unreadable []string
		limit            int
		dst              string
		want             string
		wantErr          string
		names            string // the entry the refusal must name
	}{
		{name: "nothing refused", dst: "lib/pkg", want: "moved pkg to lib/pkg"},
		{name: "a refused directory is not entered", deny: []string{"pkg/keys"}, dst: "lib/pkg",
			wantErr: "move_file: cannot move pkg: the sandbox refuses 1 entry below it; the first: guard: write refused for ",
			names:   "/pkg/keys"},
		{name: "refused entries are counted", deny: []string{"pkg/keys/l.pem", "pkg/z/token"}, dst: "lib/pkg",
			wantErr: "refuses 2 entries below it; the first: guard: write refused for ", names: "/pkg/keys/l.pem"},
		{name: "an entry that may not be read", unreadable: []string{"pkg/z/token"}, dst: "lib/pkg",
			wantErr: "refuses 1 entry below it; the first: guard: read refused for ", names: "/pkg/z/token"},
		{name: "an entry whose new place is refused", deny: []string{"lib/pkg/keys"}, dst: "lib/pkg",
			wantErr: "refuses 1 entry below it; the first: guard: write refused for ", names: "/lib/pkg/keys"},
		{name: "a source that may not be read", unreadable: []string{"pkg"}, dst: "lib/pkg",
			wantErr: "move_file: source: guard: read refused for pkg"},
		{name: "too many entries to check", limit: 3, dst: "lib/pkg",
			wantErr: "move_file: cannot move pkg: it holds more than 3 entries"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			for rel, text := range files {
				putFile(t, root, rel, text)
			}
			limit := moveMaxEntries
			if tc.limit > 0 {
				limit = tc.limit
			}
			mv := &moveFile{env: tool.Env{Root: root, Guard: treeGuard{root: root, deny: tc.deny, unreadable: tc.unreadable}}, limit: limit}
			got, err := callTool(t, mv, map[string]any{"path": "pkg", "destination": tc.dst})
			if tc.wantErr == "" {
				checkResult(t, got, err, tc.want, "")
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasSuffix(err.Error(), tc.names) {
				t.Fatalf("move = %q, %v; want an error containing %q and ending in %q", got, err, tc.wantErr, tc.names)
			}
			for rel, text := range files {
				if got := fileText(t, root, rel); got != text {
					t.Errorf("%s = %q after a refused move, want %q", rel, got, text)
				}
			}
			if _, err := os.Lstat(filepath.Join(root, "lib")); !os.IsNotExist(err) {
				t.Errorf("the refused move created the destination's parent (lstat err %v)", err)
			}
		})
	}
}
