package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		old     string // existing content; "" for none
		oldPerm fs.FileMode
		perm    fs.FileMode
	}{
		{name: "new file", perm: 0o644},
		{name: "new secret", perm: 0o600},
		{name: "replace", old: "old content that is longer", oldPerm: 0o600, perm: 0o640},
		{name: "replace read-only", old: "old", oldPerm: 0o444, perm: 0o444},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.oldPerm&0o200 == 0 && tt.old != "" && runtime.GOOS == "windows" {
				t.Skip("Windows refuses to rename over a read-only file")
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "f.txt")
			if tt.old != "" {
				if err := os.WriteFile(path, []byte(tt.old), tt.oldPerm); err != nil {
					t.Fatal(err)
				}
			}
			if err := Write(path, []byte("new\n"), tt.perm); err != nil {
				t.Fatalf("Write: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != "new\n" {
				t.Fatalf("content = %q, %v; want %q", got, err, "new\n")
			}
			if runtime.GOOS != "windows" {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != tt.perm {
					t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tt.perm)
				}
			}
			assertNoTemp(t, dir)
		})
	}
}

func TestWriteRelative(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := Write("rel.txt", []byte("x"), 0o644); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "rel.txt")); err != nil || string(got) != "x" {
		t.Fatalf("content = %q, %v", got, err)
	}
	assertNoTemp(t, dir)
}

func TestWriteFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string) string
		wantErr string
	}{
		{
			name:    "missing directory",
			setup:   func(t *testing.T, dir string) string { return filepath.Join(dir, "no", "f.txt") },
			wantErr: "create temporary file",
		},
		{
			name: "target is a directory",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "d")
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(p, "keep"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			},
			wantErr: "replace file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			err := Write(tt.setup(t, dir), []byte("data"), 0o644)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Write error = %v, want one containing %q", err, tt.wantErr)
			}
			assertNoTemp(t, dir)
		})
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// TestWriteJSON: the value lands indented with a final newline, with the
// mode asked for, in a directory created when missing.
func TestWriteJSON(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "new", "store.json")
	if err := WriteJSON(name, map[string]int{"version": 1}, 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(name)
	if err != nil || string(data) != "{\n  \"version\": 1\n}\n" {
		t.Fatalf("file = %q, %v", data, err)
	}
	if fi, err := os.Stat(name); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Errorf("mode = %v, %v", fi.Mode(), err)
	}
	if err := WriteJSON(name, func() {}, 0o600); err == nil {
		t.Error("a value JSON cannot encode was written")
	}
}
