package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layout is a real directory tree for the guard tests: a workspace root
// holding symlinks and hard links that lead out of it, a sibling whose name
// extends the root's, writable and forbidden places beside it, and a
// Reasonix home holding symlinks that lead out of it.
type layout struct {
	base, root, sibling, home, extra, outside, secret, secretFile, token string
}

// newLayout builds the tree under a fresh, symlink-free temporary directory
// and a sandbox over it. ForbidRead uses each spelling the settings allow:
// ${VAR}, ~/ and a path relative to the root.
func newLayout(t *testing.T) (layout, *Sandbox) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := layout{
		base:       base,
		root:       filepath.Join(base, "abc"),
		sibling:    filepath.Join(base, "abcdef"),
		home:       filepath.Join(base, "home"),
		extra:      filepath.Join(base, "extra"),
		outside:    filepath.Join(base, "outside"),
		secret:     filepath.Join(base, "secret"),
		secretFile: filepath.Join(base, "secretfile"),
		token:      filepath.Join(base, "extra", "worker.token"),
	}
	for _, d := range []string{l.root, l.sibling, l.home, l.extra, l.outside, l.secret,
		filepath.Join(l.root, "inside"), filepath.Join(base, "secret2")} {
		mkdir(t, d)
	}
	for _, f := range []string{
		filepath.Join(l.root, "plain.txt"),
		filepath.Join(l.root, ".env"),
		filepath.Join(l.outside, "target.txt"),
		filepath.Join(l.outside, "victim.txt"),
		filepath.Join(l.secret, "key"),
		filepath.Join(base, "secret2", "x"),
		l.secretFile,
		filepath.Join(l.home, "config.toml"),
		filepath.Join(l.home, ".env"),
		l.token,
	} {
		writeFile(t, f, "content of "+filepath.Base(f))
	}
	symlink(t, l.outside, filepath.Join(l.root, "link"))
	symlink(t, filepath.Join(l.outside, "target.txt"), filepath.Join(l.root, "evil.txt"))
	symlink(t, filepath.Join(l.outside, "missing.txt"), filepath.Join(l.root, "dangle"))
	symlink(t, "plain.txt", filepath.Join(l.root, "alias.txt"))
	symlink(t, "inside", filepath.Join(l.root, "insidelink"))
	symlink(t, "loop2", filepath.Join(l.root, "loop1"))
	symlink(t, "loop1", filepath.Join(l.root, "loop2"))
	symlink(t, filepath.Join(l.secret, "key"), filepath.Join(l.root, "keylink"))
	symlink(t, l.secret, filepath.Join(l.root, "secretlink"))
	link(t, filepath.Join(l.outside, "victim.txt"), filepath.Join(l.root, "hl.txt"))
	link(t, l.secretFile, filepath.Join(l.root, "secret-hl"))
	symlink(t, l.home, filepath.Join(l.root, "homelink"))
	symlink(t, filepath.Join(l.home, "config.toml"), filepath.Join(l.root, "config-link.toml"))
	symlink(t, l.outside, filepath.Join(l.home, "out"))
	symlink(t, l.extra, filepath.Join(l.home, "ext"))
	link(t, l.token, filepath.Join(l.root, "token-hl"))

	s, err := New(Options{
		Root:       l.root,
		Home:       l.home,
		AllowWrite: []string{"${EXTRA}"},
		ForbidRead: []string{"${BASE}/secret", "~/secretfile", ".env"},
		Secrets:    []string{filepath.Join(l.home, ".env"), l.token},
		Bash:       "off",
		LookupEnv:  fakeEnv(map[string]string{"EXTRA": l.extra, "BASE": base, "HOME": base}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return l, s
}

func mkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, f, content string) {
	t.Helper()
	if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Skipf("symlinks unavailable here: %v", err)
	}
}

func link(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Link(target, name); err != nil {
		t.Fatal(err)
	}
}

func TestWritePath(t *testing.T) {
	t.Parallel()
	l, s := newLayout(t)
	tests := []struct {
		name string
		path string
		want string // resolved path when allowed
		deny string // substring of the refusal's reason when refused
		err  string // substring of a resolution error
	}{
		// Escapes.
		{name: "dot dot out of the root", path: "../outside.txt", deny: "outside the writable roots"},
		{name: "absolute path outside", path: filepath.Join(l.outside, "new.txt"), deny: "outside the writable roots"},
		{name: "symlinked directory pointing outside", path: "link/x.txt", deny: "outside the writable roots"},
		{name: "new nested target under a symlinked parent", path: "link/new/dir/file", deny: "outside the writable roots"},
		{name: "symlink file pointing outside", path: "evil.txt", deny: "outside the writable roots"},
		{name: "dangling symlink pointing outside", path: "dangle", deny: "outside the writable roots"},
		{name: "hard link of a file outside", path: "hl.txt", deny: "has 2 hard links"},
		{name: "sibling whose name extends the root", path: filepath.Join(l.sibling, "x.txt"), deny: "outside the writable roots"},
		{name: "sibling reached relatively", path: "../abcdef/x.txt", deny: "outside the writable roots"},
		// Lexically link/../x is root/x; the kernel climbs from where the
		// link leads, which is outside.
		{name: "dot dot after a symlink climbs from its target", path: "link/../escaped.txt", deny: "outside the writable roots"},
		{name: "forbidden file inside the root", path: ".env", deny: "forbid_read entry"},
		{name: "forbidden directory outside the roots", path: filepath.Join(l.secret, "key"), deny: "outside the writable roots"},
		{name: "dot dot below a missing directory", path: "new/../../outside.txt", err: "does not exist"},
		{name: "symlink loop", path: "loop1/x", err: "too many levels"},
		{name: "empty", path: " ", err: "path is empty"},
		// Allowed.
		{name: "plain file", path: "plain.txt", want: filepath.Join(l.root, "plain.txt")},
		{name: "new nested file", path: "a/b/c/new.txt", want: filepath.Join(l.root, "a", "b", "c", "new.txt")},
		{name: "absolute inside", path: filepath.Join(l.root, "inside", "f"), want: filepath.Join(l.root, "inside", "f")},
		{name: "symlink inside to inside", path: "alias.txt", want: filepath.Join(l.root, "plain.txt")},
		{name: "symlinked directory inside", path: "insidelink/n.txt", want: filepath.Join(l.root, "inside", "n.txt")},
		{name: "dot dot that stays inside", path: "inside/../plain.txt", want: filepath.Join(l.root, "plain.txt")},
		{name: "the root itself", path: ".", want: l.root},
		// The Reasonix home, by where a path resolves and by its spelling.
		{name: "config in the reasonix home", path: filepath.Join(l.home, "config.toml"), deny: "in the Reasonix home"},
		{name: "new file in the reasonix home", path: filepath.Join(l.home, "new.toml"), deny: "in the Reasonix home"},
		{name: "the reasonix home itself", path: l.home, deny: "in the Reasonix home"},
		{name: "symlink in the workspace into the home", path: "homelink/config.toml", deny: "in the Reasonix home"},
		{name: "symlinked file in the workspace into the home", path: "config-link.toml", deny: "in the Reasonix home"},
		{name: "spelled in the home, resolving to a writable root", path: filepath.Join(l.home, "ext", "x"), deny: "in the Reasonix home"},
		{name: "secret outside the home", path: l.token, deny: "holds Reasonix credentials"},
		{name: "allow_write root", path: filepath.Join(l.extra, "out", "x"), want: filepath.Join(l.extra, "out", "x")},
		{name: "allow_write reached relatively", path: "../extra/y", want: filepath.Join(l.extra, "y")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := s.WritePath(tt.path)
			checkGuard(t, "WritePath", tt.path, got, err, tt.want, tt.deny, tt.err)
		})
	}
}

// checkGuard compares one guard answer with what the case expects.
func checkGuard(t *testing.T, op, path, got string, err error, want, deny, errText string) {
	t.Helper()
	var denied *DeniedError
	switch {
	case deny != "":
		if !errors.As(err, &denied) {
			t.Fatalf("%s(%q) = %q, %v; want a refusal", op, path, got, err)
		}
		if !strings.Contains(denied.Reason, deny) || denied.Path != path || !strings.Contains(err.Error(), denied.Resolved) {
			t.Fatalf("%s(%q) refusal %q (resolved %q); want reason containing %q and the resolved path", op, path, err, denied.Resolved, deny)
		}
	case errText != "":
		if err == nil || errors.As(err, &denied) || !strings.Contains(err.Error(), errText) {
			t.Fatalf("%s(%q) = %q, %v; want an error containing %q", op, path, got, err, errText)
		}
	default:
		if err != nil || got != want {
			t.Fatalf("%s(%q) = %q, %v; want %q", op, path, got, err, want)
		}
	}
}

func TestWritePathRefusalText(t *testing.T) {
	t.Parallel()
	l, s := newLayout(t)
	_, err := s.WritePath("link/x.txt")
	msg := err.Error()
	for _, want := range []string{`"link/x.txt"`, filepath.Join(l.outside, "x.txt"), l.root, l.extra, "[sandbox] allow_write"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not mention %q", msg, want)
		}
	}
	if strings.Contains(msg, l.home) {
		t.Errorf("refusal %q offers the Reasonix home as a writable root", msg)
	}
	_, err = s.WritePath(filepath.Join(l.home, "config.toml"))
	for _, want := range []string{"Reasonix home " + l.home, "off limits to file tools", "do not try to reach it another way", "remember"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("home refusal %v does not say %q", err, want)
		}
	}
	_, err = s.WritePath("hl.txt")
	if msg := err.Error(); !strings.Contains(msg, "cp hl.txt hl.txt.tmp && mv hl.txt.tmp hl.txt") {
		t.Errorf("hard link refusal %q does not say how to break the link", msg)
	}
}

func TestReadPath(t *testing.T) {
	t.Parallel()
	l, s := newLayout(t)
	tests := []struct {
		name string
		path string
		want string
		deny string
	}{
		{name: "forbidden directory", path: l.secret, deny: "forbid_read entry " + l.secret},
		{name: "file in a forbidden directory", path: filepath.Join(l.secret, "key"), deny: "forbid_read entry"},
		{name: "missing file in a forbidden directory", path: filepath.Join(l.secret, "nope"), deny: "forbid_read entry"},
		{name: "forbidden file", path: l.secretFile, deny: "forbid_read entry " + l.secretFile},
		{name: "forbidden file relative to the root", path: ".env", deny: "forbid_read entry"},
		{name: "symlink to a forbidden file", path: "keylink", deny: "forbid_read entry"},
		{name: "through a symlinked forbidden directory", path: "secretlink/key", deny: "forbid_read entry"},
		{name: "dot dot into a forbidden directory", path: "../secret/key", deny: "forbid_read entry"},
		{name: "hard link of a forbidden file", path: "secret-hl", deny: "is a hard link of"},
		{name: "credentials in the reasonix home", path: filepath.Join(l.home, ".env"), deny: "in the Reasonix home"},
		{name: "config in the reasonix home", path: filepath.Join(l.home, "config.toml"), deny: "in the Reasonix home"},
		{name: "symlink in the workspace into the home", path: "homelink/.env", deny: "in the Reasonix home"},
		{name: "spelled in the home, resolving outside it", path: filepath.Join(l.home, "out", "target.txt"), deny: "in the Reasonix home"},
		{name: "secret outside the home", path: l.token, deny: "holds Reasonix credentials; they never reach the agent, so do not"},
		{name: "hard link of a secret", path: "token-hl", deny: "is a hard link of " + l.token},
		{name: "workspace file", path: "plain.txt", want: filepath.Join(l.root, "plain.txt")},
		{name: "outside the workspace", path: filepath.Join(l.outside, "target.txt"), want: filepath.Join(l.outside, "target.txt")},
		{name: "symlink out of the workspace", path: "evil.txt", want: filepath.Join(l.outside, "target.txt")},
		{name: "hard link of a file that is not forbidden", path: "hl.txt", want: filepath.Join(l.root, "hl.txt")},
		{name: "parent of a forbidden directory", path: l.base, want: l.base},
		{name: "sibling whose name extends a forbidden one", path: filepath.Join(l.base, "secret2", "x"), want: filepath.Join(l.base, "secret2", "x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := s.ReadPath(tt.path)
			checkGuard(t, "ReadPath", tt.path, got, err, tt.want, tt.deny, "")
		})
	}
}

func TestForbidden(t *testing.T) {
	t.Parallel()
	l, s := newLayout(t)
	tests := []struct {
		name string
		abs  string
		want bool
	}{
		{name: "forbidden directory", abs: l.secret, want: true},
		{name: "inside it", abs: filepath.Join(l.secret, "key"), want: true},
		{name: "symlink to it", abs: filepath.Join(l.root, "secretlink"), want: true},
		{name: "hard link of a forbidden file", abs: filepath.Join(l.root, "secret-hl"), want: true},
		{name: "forbidden file in the root", abs: filepath.Join(l.root, ".env"), want: true},
		{name: "the reasonix home", abs: l.home, want: true},
		{name: "symlink to the reasonix home", abs: filepath.Join(l.root, "homelink"), want: true},
		{name: "secret outside the home", abs: l.token, want: true},
		{name: "unresolvable path judged by spelling", abs: filepath.Join(l.secretFile, "x"), want: true},
		{name: "parent", abs: l.base, want: false},
		{name: "prefix sibling", abs: filepath.Join(l.base, "secret2"), want: false},
		{name: "workspace file", abs: filepath.Join(l.root, "plain.txt"), want: false},
		{name: "symlink loop is not forbidden", abs: filepath.Join(l.root, "loop1"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := s.Forbidden(tt.abs); got != tt.want {
				t.Fatalf("Forbidden(%q) = %v, want %v", tt.abs, got, tt.want)
			}
		})
	}
	t.Run("no entries", func(t *testing.T) {
		t.Parallel()
		open, err := New(Options{Root: l.root, Bash: "off"})
		if err != nil {
			t.Fatal(err)
		}
		if open.Forbidden(l.secret) {
			t.Fatal("a sandbox without forbid_read forbids a path")
		}
	})
}

// TestMoveGuard checks the rule move_file follows: both ends of a move go
// through WritePath, so a rename is allowed only when both are.
func TestMoveGuard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		src, dst func(l layout) string
		refused  string // "source" or "destination"
	}{
		{name: "within the root",
			src: func(l layout) string { return "plain.txt" }, dst: func(l layout) string { return "inside/moved.txt" }},
		{name: "into the reasonix home",
			src: func(l layout) string { return "plain.txt" }, dst: func(l layout) string { return filepath.Join(l.home, "p.txt") }, refused: "destination"},
		{name: "into the reasonix home through a symlink",
			src: func(l layout) string { return "plain.txt" }, dst: func(l layout) string { return "homelink/p.txt" }, refused: "destination"},
		{name: "out of the reasonix home",
			src: func(l layout) string { return filepath.Join(l.home, "config.toml") }, dst: func(l layout) string { return "c.toml" }, refused: "source"},
		{name: "into an outside directory",
			src: func(l layout) string { return "plain.txt" }, dst: func(l layout) string { return filepath.Join(l.outside, "p.txt") }, refused: "destination"},
		{name: "into an outside directory through a symlink",
			src: func(l layout) string { return "plain.txt" }, dst: func(l layout) string { return "link/p.txt" }, refused: "destination"},
		{name: "out of an outside directory",
			src: func(l layout) string { return filepath.Join(l.outside, "target.txt") }, dst: func(l layout) string { return "stolen.txt" }, refused: "source"},
		{name: "onto a forbidden file",
			src: func(l layout) string { return "plain.txt" }, dst: func(l layout) string { return ".env" }, refused: "destination"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, s := newLayout(t)
			src, errSrc := s.WritePath(tt.src(l))
			dst, errDst := s.WritePath(tt.dst(l))
			switch tt.refused {
			case "source":
				if errSrc == nil {
					t.Fatalf("source %q allowed as %q", tt.src(l), src)
				}
				return
			case "destination":
				if errSrc != nil || errDst == nil {
					t.Fatalf("source err %v, destination %q err %v; want only the destination refused", errSrc, dst, errDst)
				}
				return
			}
			if errSrc != nil || errDst != nil {
				t.Fatalf("source err %v, destination err %v", errSrc, errDst)
			}
			if err := os.Rename(src, dst); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(dst); err != nil || string(b) != "content of plain.txt" {
				t.Fatalf("after the move %s holds %q, %v", dst, b, err)
			}
		})
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "real")
	mkdir(t, real)
	symlink(t, real, filepath.Join(base, "via"))
	env := fakeEnv(map[string]string{"HOME": base, "EMPTY": ""})
	tests := []struct {
		name      string
		o         Options
		wantRoots []string
		wantErr   string
	}{
		{name: "symlinked root is resolved",
			o: Options{Root: filepath.Join(base, "via")}, wantRoots: []string{real}},
		{name: "missing root resolves its deepest existing ancestor",
			o: Options{Root: filepath.Join(base, "via", "not", "yet")}, wantRoots: []string{filepath.Join(real, "not", "yet")}},
		{name: "allow_write in order without duplicates, and never the home",
			o:         Options{Root: real, Home: filepath.Join(base, "via", "h"), AllowWrite: []string{"~/w", "sub", real}},
			wantRoots: []string{real, filepath.Join(base, "w"), filepath.Join(real, "sub")}},
		{name: "relative secret",
			o: Options{Root: real, Secrets: []string{".env"}}, wantErr: `secret ".env" is not an absolute path`},
		{name: "forbid_read expanding to nothing",
			o: Options{Root: real, ForbidRead: []string{"${EMPTY}"}}, wantErr: "expands to an empty path"},
		{name: "allow_write with a bad reference",
			o: Options{Root: real, AllowWrite: []string{"${1}"}}, wantErr: "allow_write"},
		{name: "unknown bash mode",
			o: Options{Root: real, Bash: "strict"}, wantErr: `bash = "strict"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := tt.o
			o.LookupEnv = env
			o.GOOS = "windows"
			s, err := New(o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New = %v; want error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Roots(); !slices.Equal(got, tt.wantRoots) {
				t.Fatalf("Roots() = %q, want %q", got, tt.wantRoots)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		root, p string
		want    bool
	}{
		{name: "same", root: "/tmp/abc", p: "/tmp/abc", want: true},
		{name: "below", root: "/tmp/abc", p: "/tmp/abc/d", want: true},
		{name: "prefix sibling", root: "/tmp/abc", p: "/tmp/abcdef", want: false},
		{name: "parent", root: "/tmp/abc", p: "/tmp", want: false},
		{name: "filesystem root covers all", root: "/", p: "/x/y", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, p := filepath.FromSlash(tt.root), filepath.FromSlash(tt.p)
			if filepath.VolumeName(os.TempDir()) != "" {
				t.Skip("unix-style fixtures")
			}
			if got := within(root, p); got != tt.want {
				t.Fatalf("within(%q, %q) = %v, want %v", root, p, got, tt.want)
			}
		})
	}
}

// TestPathRule checks that the PathRule hook is asked about both the
// resolved path and the spelling of every path ReadPath, WritePath and
// Forbidden see, with the right op, and that a denial, or a panic, refuses
// the path.
func TestPathRule(t *testing.T) {
	t.Parallel()
	l, _ := newLayout(t)
	private := filepath.Join(l.root, "private")
	mkdir(t, private)
	writeFile(t, filepath.Join(private, "k.txt"), "private")
	symlink(t, "private", filepath.Join(l.root, "plink"))
	// spelled is denied by its spelling only: it resolves to inside/.
	symlink(t, "inside", filepath.Join(l.root, "spelled"))
	rule := func(op, p string) (string, bool) {
		switch {
		case within(private, p):
			return "Read(private/**) denies it.", true
		case within(filepath.Join(l.root, "spelled"), p):
			return "", true
		case op == "write" && p == filepath.Join(l.root, "plain.txt"):
			return "Edit(plain.txt) denies it", true
		case p == filepath.Join(l.root, "boom"):
			panic("rule bug")
		}
		return "", false
	}
	s, err := New(Options{Root: l.root, Bash: "off", PathRule: rule})
	if err != nil {
		t.Fatal(err)
	}
	const dont = "do not try to reach it another way"
	tests := []struct {
		name  string
		read  bool
		path  string
		want  string
		deny  string
		forbd bool // what Forbidden says of the absolute path, for reads
	}{
		{name: "read a denied file", read: true, path: "private/k.txt", deny: "Read(private/**) denies it; the user's rules keep it out of reach, so " + dont, forbd: true},
		{name: "read a denied directory", read: true, path: "private", deny: "Read(private/**)", forbd: true},
		{name: "read through a symlink", read: true, path: "plink/k.txt", deny: "it resolves to " + filepath.Join(private, "k.txt"), forbd: true},
		{name: "read the symlink itself", read: true, path: "plink", deny: "Read(private/**)", forbd: true},
		{name: "read denied by spelling", read: true, path: "spelled/x", deny: "a permission rule denies it", forbd: true},
		{name: "read allowed", read: true, path: "plain.txt", want: filepath.Join(l.root, "plain.txt")},
		{name: "write a denied file", path: "private/new.txt", deny: "Read(private/**)"},
		{name: "write through a symlink", path: "plink/new.txt", deny: "Read(private/**)"},
		{name: "write denied for writes only", path: "plain.txt", deny: "Edit(plain.txt) denies it"},
		{name: "a rule that panics refuses", read: true, path: "boom", deny: "the permission check failed (rule bug)", forbd: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			op, guard := "WritePath", s.WritePath
			if tt.read {
				op, guard = "ReadPath", s.ReadPath
			}
			got, err := guard(tt.path)
			checkGuard(t, op, tt.path, got, err, tt.want, tt.deny, "")
			if tt.read {
				if f := s.Forbidden(filepath.Join(l.root, tt.path)); f != tt.forbd {
					t.Errorf("Forbidden(%q) = %v, want %v", tt.path, f, tt.forbd)
				}
			}
		})
	}
	n, err := s.Narrow([]string{"private"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.WritePath("private/x"); err == nil || !strings.Contains(err.Error(), "Read(private/**)") {
		t.Errorf("a writer's sandbox does not ask the rule: %v", err)
	}
}

// TestHomeInWorkspace covers a Reasonix home inside the workspace (a
// session started in the user's home directory, say): the workspace is a
// writable root, yet the home in it stays closed to file tools and cannot
// be claimed by a writer.
func TestHomeInWorkspace(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, ".reasonix")
	mkdir(t, home)
	writeFile(t, filepath.Join(home, "config.toml"), "x")
	s, err := New(Options{Root: root, Home: home, Bash: "off"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".reasonix/config.toml", ".reasonix/new", ".reasonix"} {
		for op, guard := range map[string]func(string) (string, error){"WritePath": s.WritePath, "ReadPath": s.ReadPath} {
			got, err := guard(p)
			checkGuard(t, op, p, got, err, "", "in the Reasonix home", "")
		}
	}
	if got, err := s.WritePath("main.go"); err != nil || got != filepath.Join(root, "main.go") {
		t.Errorf("WritePath(main.go) = %q, %v", got, err)
	}
	if _, err := s.Narrow([]string{"src", ".reasonix"}); err == nil || !strings.Contains(err.Error(), "in the Reasonix home") {
		t.Errorf("Narrow claiming the home = %v, want a refusal", err)
	}
}

// TestWorkspaceInHome covers the opposite: a workspace inside the
// Reasonix home is closed to file tools as a whole, and Notes says so.
func TestWorkspaceInHome(t *testing.T) {
	t.Parallel()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(home, "project")
	mkdir(t, root)
	s, err := New(Options{Root: root, Home: home, AllowWrite: []string{filepath.Join(home, "skills")}, Bash: "off"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.WritePath("main.go")
	checkGuard(t, "WritePath", "main.go", got, err, "", "in the Reasonix home", "")
	got, err = s.WritePath(filepath.Join(home, "skills", "s.md"))
	checkGuard(t, "WritePath", filepath.Join(home, "skills", "s.md"), got, err, "", "in the Reasonix home", "")
	notes := strings.Join(s.Notes(), "\n")
	for _, want := range []string{"the workspace root " + root + " lies in the Reasonix home", "allow_write entry " + filepath.Join(home, "skills")} {
		if !strings.Contains(notes, want) {
			t.Errorf("Notes() = %q, want a note containing %q", notes, want)
		}
	}
}
