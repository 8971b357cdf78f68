package sandbox

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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
