package builtin

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"reasonix/core/tool"
)

func TestWriteFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		existing map[string]string // files present before the call
		dirs     []string          // directories present before the call
		guard    tool.PathGuard
		args     string
		want     string
		wantErr  string
		file     string // file to check afterwards
		wantText string
	}{
		{name: "create with parents", args: `{"path":"a/b/c.txt","content":"hello"}`,
			want: "created a/b/c.txt (5 bytes written)", file: "a/b/c.txt", wantText: "hello"},
		{name: "overwrite", existing: map[string]string{"f.txt": "old content"}, args: `{"path":"f.txt","content":"new"}`,
			want: "overwrote f.txt (3 bytes written)", file: "f.txt", wantText: "new"},
		{name: "empty content", args: `{"path":"e.txt","content":""}`,
			want: "created e.txt (0 bytes written)", file: "e.txt", wantText: ""},
		{name: "extra fields ignored", args: `{"path":"x.txt","content":"x","mode":"0600"}`,
			want: "created x.txt (1 byte written)", file: "x.txt", wantText: "x"},
		{name: "directory target", dirs: []string{"d"}, args: `{"path":"d","content":"x"}`,
			wantErr: "write_file: d: is a directory"},
		{name: "content required", args: `{"path":"f.txt"}`,
			wantErr: `write_file: "content" is required`},
		{name: "content wrong type", args: `{"path":"f.txt","content":42}`,
			wantErr: `write_file: "content" must be a string, got number`},
		{name: "guard refuses", guard: stubGuard{writeDeny: true}, args: `{"path":"f.txt","content":"x"}`,
			wantErr: "write_file: guard: write refused for f.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			for rel, text := range tc.existing {
				putFile(t, root, rel, text)
			}
			for _, d := range tc.dirs {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			got, err := runTool(t, tool.Env{Root: root, Guard: tc.guard}, "write_file", tc.args)
			checkResult(t, got, err, tc.want, tc.wantErr)
			if tc.file != "" {
				if text := fileText(t, root, tc.file); text != tc.wantText {
					t.Fatalf("%s = %q, want %q", tc.file, text, tc.wantText)
				}
				assertNoTempFiles(t, filepath.Dir(filepath.Join(root, tc.file)))
			}
		})
	}
}

func TestWriteFileMode(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("permission bits are not meaningful on windows")
	}
	tests := []struct {
		name     string
		existing fs.FileMode // 0: file does not exist
		want     fs.FileMode
	}{
		{name: "new file", want: 0o644},
		{name: "private file kept private", existing: 0o600, want: 0o600},
		{name: "executable stays executable", existing: 0o755, want: 0o755},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			p := filepath.Join(root, "f")
			if tc.existing != 0 {
				putFile(t, root, "f", "old")
				if err := os.Chmod(p, tc.existing); err != nil {
					t.Fatal(err)
				}
			}
			for _, name := range []string{"write_file", "edit_file"} {
				if name == "edit_file" && tc.existing == 0 {
					continue
				}
				args := `{"path":"f","content":"old"}`
				if name == "edit_file" {
					args = `{"path":"f","old_string":"old","new_string":"new"}`
				}
				if _, err := runTool(t, tool.Env{Root: root}, name, args); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode().Perm(); got != tc.want {
					t.Fatalf("after %s mode = %v, want %v", name, got, tc.want)
				}
			}
		})
	}
}

func TestWriteFileThroughSymlink(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	target := putFile(t, root, "real.txt", "old")
	link := filepath.Join(root, "link.txt")
	if err := os.Symlink("real.txt", link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if _, err := runTool(t, tool.Env{Root: root}, "write_file", `{"path":"link.txt","content":"new"}`); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a regular file")
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "new" {
		t.Fatalf("target = %q, %v; want %q", b, err, "new")
	}
}

// assertNoTempFiles fails if an atomic write left its temporary file behind.
func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	if len(matches) > 0 {
		t.Fatalf("temporary files left behind: %v", matches)
	}
}
