package sandbox

import (
	"path/filepath"
	"slices"
	"testing"
)

// planFixture is a base directory (in t.TempDir, so below the /tmp bind)
// holding a workspace with every trust-bearing path and project memory, a
// Reasonix home that is also the user's HOME (so its .cache is a scratch
// directory inside it), and a workspace inside the home.
type planFixture struct {
	base, root, home, inner string
}

func newPlanFixture(t *testing.T, hooks bool) planFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := planFixture{base: base, root: filepath.Join(base, "ws"), home: filepath.Join(base, "home")}
	f.inner = filepath.Join(f.home, "project")
	for _, d := range []string{".reasonix/commands", ".reasonix/memory", ".git", "src"} {
		mkdir(t, filepath.Join(f.root, d))
	}
	if hooks {
		mkdir(t, filepath.Join(f.root, ".git", "hooks"))
	}
	for _, p := range []string{"reasonix.toml", ".mcp.json", ".git/config"} {
		writeFile(t, filepath.Join(f.root, p), "x")
	}
	for _, d := range []string{".cache", "allowed", "project"} {
		mkdir(t, filepath.Join(f.home, d))
	}
	writeFile(t, filepath.Join(f.home, "config.toml"), "x")
	return f
}

func (f planFixture) sandbox(t *testing.T, root string, allow ...string) *Sandbox {
	t.Helper()
	s, err := New(Options{
		Root: root, Home: f.home, AllowWrite: allow, GOOS: "linux",
		LookPath:  (&fakeLookPath{found: map[string]string{"bwrap": "/opt/bwrap"}}).look,
		LookupEnv: fakeEnv(map[string]string{"HOME": f.home}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJailLayoutProtections checks what a jailed command may do at each
// protected path under the argv Wrap builds, for the whole workspace's
// sandbox and for writers with various claims.
func TestJailLayoutProtections(t *testing.T) {
	t.Parallel()
	for _, hooks := range []bool{true, false} {
		f := newPlanFixture(t, hooks)
		hooksMode := "ro"
		if !hooks {
			hooksMode = "hidden" // an empty read-only directory
		}
		whole := f.sandbox(t, f.root, filepath.Join(f.home, "allowed"))
		narrow := func(claims ...string) *Sandbox {
			n, err := whole.Narrow(claims)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		in := func(rel string) string { return filepath.Join(f.root, filepath.FromSlash(rel)) }
		tests := []struct {
			name string
			s    *Sandbox
			want map[string]string // path → mode
		}{
			{name: "whole workspace", s: whole, want: map[string]string{
				in("src/x.go"): "rw", in("reasonix.toml"): "ro", in(".mcp.json"): "ro",
				in(".reasonix/commands/c.md"): "ro", in(".reasonix/memory/m.md"): "rw", in(".reasonix/autoresearch/r"): "ro",
				in(".git/config"): "ro", in(".git/hooks/pre-commit"): hooksMode, in(".git/HEAD"): "rw",
				filepath.Join(f.home, "config.toml"): "ro", filepath.Join(f.home, ".cache", "go"): "rw",
				filepath.Join(f.home, "allowed", "x"): "ro", "/tmp/x": "rw",
			}},
			{name: "writer of src", s: narrow("src"), want: map[string]string{
				in("src/x.go"): "rw", in(".git/config"): "ro", in(".git/hooks/pre-commit"): "ro",
				in(".reasonix/memory/m.md"): "ro", filepath.Join(f.home, "config.toml"): "ro",
				filepath.Join(f.home, ".cache", "go"): "rw", filepath.Join(f.home, "allowed", "x"): "ro",
			}},
			{name: "writer of .git and .reasonix", s: narrow(".git", ".reasonix"), want: map[string]string{
				in(".git/HEAD"): "rw", in(".git/config"): "ro", in(".git/hooks/pre-commit"): hooksMode,
				in(".reasonix/commands/c.md"): "ro", in(".reasonix/memory/m.md"): "rw", in("src/x.go"): "ro",
			}},
			{name: "writer of the project config", s: narrow("reasonix.toml", ".reasonix/memory"), want: map[string]string{
				in("reasonix.toml"): "ro", in(".reasonix/memory/m.md"): "rw", in(".reasonix/commands/c.md"): "ro",
			}},
			{name: "a workspace inside the home", s: f.sandbox(t, f.inner), want: map[string]string{
				filepath.Join(f.inner, "x"): "ro", filepath.Join(f.home, "config.toml"): "ro",
				filepath.Join(f.home, ".cache", "go"): "rw",
			}},
		}
		for _, tt := range tests {
			argv, err := tt.s.Wrap("", []string{"true"})
			if err != nil {
				t.Fatal(err)
			}
			for p, want := range tt.want {
				if got := effective(argv, p); got != want {
					t.Errorf("hooks=%v, %s: %s is %s, want %s\nargv %q", hooks, tt.name, p, got, want, argv)
				}
			}
			// bubblewrap makes the mount point of an empty directory, which
			// fails where the jail is read-only: there it is never asked for.
			if tmpfs, _ := flagArgs(argv, "--tmpfs", 1); !hooks && tt.name == "writer of src" && len(tmpfs) > 0 {
				t.Errorf("writer of src: an empty directory is mounted where nothing is writable: %q", tmpfs)
			}
		}
	}
}

// TestJailLayoutPins checks the pins: each directory between a writable
// bind and a read-only mount inside it is bound onto itself before the
// read-only mount, and none is added elsewhere.
func TestJailLayoutPins(t *testing.T) {
	t.Parallel()
	f := newPlanFixture(t, true)
	argv, err := f.sandbox(t, f.root).Wrap("", []string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	binds, bindAt := flagArgs(argv, "--bind", 2)
	ro, roAt := flagArgs(argv, "--ro-bind", 2)
	at := func(ops [][]string, where []int, p string) int {
		if i := slices.IndexFunc(ops, func(o []string) bool { return o[1] == p }); i >= 0 {
			return where[i]
		}
		return -1
	}
	var aboveBase []string
	for d := f.base; d != "/tmp"; d = filepath.Dir(d) {
		aboveBase = append(aboveBase, d)
	}
	for _, tt := range []struct {
		protected string
		pins      []string
	}{
		{filepath.Join(f.root, ".git", "config"), append([]string{filepath.Join(f.root, ".git"), f.root}, aboveBase...)},
		{filepath.Join(f.root, "reasonix.toml"), append([]string{f.root}, aboveBase...)},
		{f.home, aboveBase},
	} {
		p := at(ro, roAt, tt.protected)
		if p < 0 {
			t.Errorf("%s is not bound read-only: %q", tt.protected, argv)
			continue
		}
		for _, pin := range tt.pins {
			if b := at(binds, bindAt, pin); b < 0 || b > p {
				t.Errorf("%s is not pinned before %s: %q", pin, tt.protected, argv)
			}
		}
	}
	for _, b := range binds {
		if b[1] != "/tmp" && !slices.Contains(aboveBase, b[1]) && !slices.Contains([]string{f.root, filepath.Join(f.root, ".git"),
			filepath.Join(f.root, ".reasonix", "memory"), filepath.Join(f.home, ".cache")}, b[1]) {
			t.Errorf("unexpected bind %s: %q", b[1], argv)
		}
	}
}
