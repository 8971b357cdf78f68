package builtin

import (
	"os"
	"path/filepath"
	"testing"

	"reasonix/core/tool"
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
