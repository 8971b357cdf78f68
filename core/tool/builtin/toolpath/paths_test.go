package toolpath

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/tool"
)

// stubGuard is a PathGuard that anchors paths at root and refuses reads or
// writes on demand, so tests can tell which policy was consulted.
type stubGuard struct {
	root      string
	readDeny  bool
	writeDeny bool
}

func (g stubGuard) ReadPath(p string) (string, error) {
	if g.readDeny {
		return "", errors.New("guard: read refused for " + p)
	}
	return JoinRoot(g.root, p), nil
}

func (g stubGuard) WritePath(p string) (string, error) {
	if g.writeDeny {
		return "", errors.New("guard: write refused for " + p)
	}
	return JoinRoot(g.root, p), nil
}

func TestResolve(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	other := t.TempDir()
	guarded := tool.Env{Root: root, Guard: stubGuard{root: other}}
	tests := []struct {
		name    string
		env     tool.Env
		resolve func(tool.Env, string) (string, error)
		in      string
		want    string
		wantErr string
	}{
		{name: "relative read", env: tool.Env{Root: root}, resolve: ResolveRead, in: "a/../b.txt", want: filepath.Join(root, "b.txt")},
		{name: "relative write", env: tool.Env{Root: root}, resolve: ResolveWrite, in: "./x/y", want: filepath.Join(root, "x", "y")},
		{name: "absolute kept", env: tool.Env{Root: root}, resolve: ResolveRead, in: filepath.Join(other, "q", "..", "z"), want: filepath.Join(other, "z")},
		{name: "empty path", env: tool.Env{Root: root}, resolve: ResolveRead, in: "  ", wantErr: "path is empty"},
		{name: "guard read decides", env: guarded, resolve: ResolveRead, in: "f", want: filepath.Join(other, "f")},
		{name: "guard write decides", env: guarded, resolve: ResolveWrite, in: "f", want: filepath.Join(other, "f")},
		{name: "guard read refuses", env: tool.Env{Root: root, Guard: stubGuard{readDeny: true}}, resolve: ResolveRead, in: "f", wantErr: "read refused"},
		{name: "guard write refuses", env: tool.Env{Root: root, Guard: stubGuard{writeDeny: true}}, resolve: ResolveWrite, in: "f", wantErr: "write refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.resolve(tc.env, tc.in)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v; want an error containing %q", got, err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("unexpected error: %v", err)
			case got != tc.want:
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDisplayPath(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := filepath.Join(filepath.Dir(root), "elsewhere", "f")
	tests := []struct {
		name string
		env  tool.Env
		abs  string
		want string
	}{
		{name: "under root", env: tool.Env{Root: root}, abs: filepath.Join(root, "a", "b.go"), want: "a/b.go"},
		{name: "root itself", env: tool.Env{Root: root}, abs: root, want: "."},
		{name: "dotdot-prefixed name stays relative", env: tool.Env{Root: root}, abs: filepath.Join(root, "..x"), want: "..x"},
		{name: "outside root", env: tool.Env{Root: root}, abs: outside, want: outside},
		{name: "no root", env: tool.Env{}, abs: outside, want: outside},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Display(tc.env, tc.abs); got != tc.want {
				t.Fatalf("Display(%q) = %q, want %q", tc.abs, got, tc.want)
			}
		})
	}
}
