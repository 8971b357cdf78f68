package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"reasonix/core/tool"
)

func TestLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   map[string]string
		dirs    []string
		args    string
		limits  tool.Limits
		want    string
		wantErr string
	}{
		{name: "sorted with kinds and sizes",
			files: map[string]string{"b.txt": "hello", "a.go": "x", ".hidden": "", "sub/inner.txt": "in"},
			args:  `{"path":"."}`,
			want:  "./ (4 entries)\n.hidden (0 bytes)\na.go (1 byte)\nb.txt (5 bytes)\nsub/"},
		{name: "default is the root", files: map[string]string{"f": "12"},
			args: `{}`, want: "./ (1 entry)\nf (2 bytes)"},
		{name: "subdirectory", files: map[string]string{"sub/inner.txt": "in"}, dirs: []string{"sub/deeper"},
			args: `{"path":"sub"}`, want: "sub/ (2 entries)\ndeeper/\ninner.txt (2 bytes)"},
		{name: "empty directory", dirs: []string{"empty"},
			args: `{"path":"empty"}`, want: "empty/ is empty"},
		{name: "capped", files: map[string]string{"1": "", "2": "", "3": "", "4": "", "5": ""},
			args: `{"path":"."}`, limits: tool.Limits{ListEntries: 2},
			want: "./ (5 entries)\n1 (0 bytes)\n2 (0 bytes)\n[3 more entries not shown; the listing is capped at 2]"},
		{name: "exactly at the cap", files: map[string]string{"1": "", "2": ""},
			args: `{"path":"."}`, limits: tool.Limits{ListEntries: 2},
			want: "./ (2 entries)\n1 (0 bytes)\n2 (0 bytes)"},
		{name: "file path", files: map[string]string{"f.txt": "x"},
			args: `{"path":"f.txt"}`, wantErr: "ls: f.txt is a file, not a directory; use read_file to read it"},
		{name: "missing path",
			args: `{"path":"nope"}`, wantErr: "ls: nope does not exist"},
		{name: "path wrong type",
			args: `{"path":3}`, wantErr: `ls: "path" must be a string, got number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			for rel, text := range tc.files {
				putFile(t, root, rel, text)
			}
			for _, d := range tc.dirs {
				if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			got, err := runTool(t, tool.Env{Root: root, Limits: tc.limits}, "ls", tc.args)
			checkResult(t, got, err, tc.want, tc.wantErr)
		})
	}
}

func TestLsSymlinksAndGuard(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	putFile(t, root, "real.txt", "abc")
	if err := os.Symlink("real.txt", filepath.Join(root, "link")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if err := os.Symlink("missing", filepath.Join(root, "dangling")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	putFile(t, outside, "o.txt", "")
	tests := []struct {
		name    string
		env     tool.Env
		args    string
		want    string
		wantErr string
	}{
		{name: "symlinks marked", env: tool.Env{Root: root}, args: `{}`,
			want: "./ (3 entries)\ndangling -> missing\nlink -> real.txt\nreal.txt (3 bytes)"},
		{name: "outside root shown absolute", env: tool.Env{Root: root}, args: fmt.Sprintf(`{"path":%q}`, outside),
			want: filepath.Clean(outside) + "/ (1 entry)\no.txt (0 bytes)"},
		{name: "guard hides an entry", env: tool.Env{Root: root, Guard: stubGuard{root: root, hide: "link"}}, args: `{}`,
			want: "./ (2 entries)\ndangling -> missing\nreal.txt (3 bytes)\n[1 entry hidden by read restrictions]"},
		{name: "guard refuses", env: tool.Env{Root: root, Guard: stubGuard{readDeny: true}}, args: `{}`,
			wantErr: "ls: guard: read refused for ."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := runTool(t, tc.env, "ls", tc.args)
			checkResult(t, got, err, tc.want, tc.wantErr)
		})
	}
}
