package sandbox

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// effective reports what a jailed command may do at p under the bubblewrap
// argv: "hidden", "rw" or "ro". Mounts apply in order, so the last one
// whose target covers p decides.
func effective(argv []string, p string) string {
	got := "ro" // the --ro-bind / / every jail starts with
	for i := 0; i < len(argv) && argv[i] != "--"; i++ {
		var target, mode string
		switch argv[i] {
		case "--bind":
			target, mode = argv[i+2], "rw"
		case "--ro-bind":
			target, mode = argv[i+2], "ro"
			if argv[i+1] == "/dev/null" {
				mode = "hidden"
			}
		case "--tmpfs":
			target, mode = argv[i+1], "hidden"
		default:
			continue
		}
		if within(target, p) {
			got = mode
		}
	}
	return got
}

// newClaimFixture is the bwrap fixture with a writer's claims in place:
// the directory a, the file b/c.txt beside an unclaimed b/other, and
// missing, which does not exist yet.
func newClaimFixture(t *testing.T) (bwrapFixture, *Sandbox, *Sandbox) {
	t.Helper()
	f, s := newBwrapFixture(t, false)
	mkdir(t, filepath.Join(f.root, "a"))
	mkdir(t, filepath.Join(f.root, "b"))
	writeFile(t, filepath.Join(f.root, "b", "c.txt"), "c")
	writeFile(t, filepath.Join(f.root, "b", "other"), "o")
	n, err := s.Narrow([]string{"a", "b/c.txt", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	return f, s, n
}

func TestNarrowJailLayout(t *testing.T) {
	t.Parallel()
	f, s, n := newClaimFixture(t)
	argv, err := n.Wrap("", []string{"bash", "-c", "make"})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := s.Wrap("", []string{"bash", "-c", "make"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		path        string
		want, whole string
	}{
		{"claimed directory", filepath.Join(f.root, "a", "x"), "rw", "rw"},
		{"claimed file", filepath.Join(f.root, "b", "c.txt"), "rw", "rw"},
		{"unclaimed file beside a claimed one", filepath.Join(f.root, "b", "other"), "ro", "rw"},
		{"workspace root", filepath.Join(f.root, "top.txt"), "ro", "rw"},
		{"allow_write inside the workspace", filepath.Join(f.root, "sub", "x"), "ro", "rw"},
		{"claim that does not exist yet", filepath.Join(f.root, "missing", "x"), "ro", "rw"},
		{"allow_write outside the workspace", filepath.Join(f.extra, "x"), "rw", "rw"},
		{"TMPDIR", filepath.Join(f.tmpdir, "x"), "rw", "rw"},
		{"go build cache", filepath.Join(f.gocache, "x"), "rw", "rw"},
		{"/tmp", "/tmp/x", "rw", "rw"},
		{"forbid_read inside the workspace", filepath.Join(f.secrets, "x"), "hidden", "hidden"},
		{"outside every root", "/etc/passwd", "ro", "ro"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := effective(argv, tt.path); got != tt.want {
				t.Errorf("writer's jail: %s is %s, want %s\nargv %q", tt.path, got, tt.want, argv)
			}
			if got := effective(whole, tt.path); got != tt.whole {
				t.Errorf("whole-workspace jail: %s is %s, want %s\nargv %q", tt.path, got, tt.whole, whole)
			}
		})
	}
	if binds, _ := flagArgs(argv, "--bind", 2); slices.ContainsFunc(binds, func(b []string) bool { return b[0] == f.home }) {
		t.Errorf("the Reasonix home is bound writable for a writer task: %q", argv)
	}
	if got, want := n.Roots(), []string{filepath.Join(f.root, "a"), filepath.Join(f.root, "b", "c.txt"), filepath.Join(f.root, "missing")}; !slices.Equal(got, want) {
		t.Errorf("Roots() = %q, want the claims %q", got, want)
	}
}

func TestNarrowWholeWorkspace(t *testing.T) {
	t.Parallel()
	f, s := newBwrapFixture(t, false)
	for _, claims := range [][]string{nil, {}, {"."}, {"a", f.root}} {
		n, err := s.Narrow(claims)
		if err != nil {
			t.Fatalf("Narrow(%q): %v", claims, err)
		}
		if n != s {
			t.Errorf("Narrow(%q) made a narrower sandbox; the claims cover the whole workspace", claims)
		}
	}
}

func TestNarrowRefusesClaims(t *testing.T) {
	t.Parallel()
	f, s := newBwrapFixture(t, false)
	symlink(t, f.outside, filepath.Join(f.root, "link"))
	tests := []struct {
		name, claim, want string
	}{
		{"outside the roots", filepath.Join(f.outside, "x"), "outside the writable roots"},
		{"through a symlink", "link/x", "outside the writable roots"},
		{"forbid_read", "secrets/k", "forbid_read"},
		{"climb below a missing directory", "nope/../../x", "does not exist"},
		{"empty", " ", "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Narrow([]string{"a", tt.claim})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Narrow(%q) = %v, want an error about %q", tt.claim, err, tt.want)
			}
		})
	}
}

func TestNarrowWritePath(t *testing.T) {
	t.Parallel()
	f, _, n := newClaimFixture(t)
	const claims = "outside this task's write_paths (a, b/c.txt, missing)"
	tests := []struct {
		path string
		deny string // substring of the refusal; "" when allowed
	}{
		{"a/new.txt", ""},
		{"b/c.txt", ""},
		{"missing/new.txt", ""},
		{"b/other", claims},
		{"top.txt", claims},
		{"sub/x", claims},
		{filepath.Join(f.extra, "x"), claims},
		{filepath.Join(f.home, "config.toml"), "in the Reasonix home"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			_, err := n.WritePath(tt.path)
			if tt.deny == "" && err != nil {
				t.Errorf("WritePath(%q) = %v, want it allowed", tt.path, err)
			}
			if tt.deny != "" {
				var d *DeniedError
				if !errors.As(err, &d) || !strings.Contains(err.Error(), tt.deny) {
					t.Errorf("WritePath(%q) = %v, want a refusal saying %q", tt.path, err, tt.deny)
				}
			}
		})
	}
}

func TestNarrowWrapModes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mkdir(t, filepath.Join(root, "a"))
	argv := []string{"bash", "-c", "echo hi"}
	tests := []struct {
		name, goos, bash string
		bwrap            bool
		wantErr          error
		wantText         string
	}{
		{name: "off", goos: "linux", bash: "off", wantErr: ErrUnconfined, wantText: `bash = "off"`},
		{name: "windows", goos: "windows", wantErr: ErrUnconfined, wantText: "Windows has no bash sandbox"},
		{name: "unavailable", goos: "linux", wantErr: ErrUnavailable},
		{name: "enforce", goos: "linux", bwrap: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			found := map[string]string{}
			if tt.bwrap {
				found["bwrap"] = "/opt/bwrap"
			}
			s, err := New(Options{Root: root, Bash: tt.bash, GOOS: tt.goos, LookPath: (&fakeLookPath{found: found}).look})
			if err != nil {
				t.Fatal(err)
			}
			n, err := s.Narrow([]string{"a"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := n.Wrap(root, argv)
			if tt.wantErr == nil {
				if err != nil || got[0] != "/opt/bwrap" {
					t.Fatalf("Wrap = %q, %v; want a jailed command", got, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("Wrap = %q, %v; want an error wrapping %v that says %q", got, err, tt.wantErr, tt.wantText)
			}
			if tt.wantErr == ErrUnconfined && (!strings.Contains(err.Error(), "write_file") || !strings.Contains(err.Error(), "(a)")) {
				t.Errorf("refusal does not name the claims and the way out: %v", err)
			}
			if whole, err := s.Wrap(root, argv); tt.wantErr == ErrUnconfined && (err != nil || !slices.Equal(whole, argv)) {
				t.Errorf("the parent's own sandbox changed: Wrap = %q, %v", whole, err)
			}
		})
	}
}

func TestNarrowSeatbeltProfile(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "ws")
	mkdir(t, filepath.Join(root, "a"))
	s, err := New(Options{
		Root: root, Home: filepath.Join(base, "rhome"), GOOS: "darwin",
		LookPath:  (&fakeLookPath{found: map[string]string{sandboxExec: sandboxExec}}).look,
		LookupEnv: fakeEnv(map[string]string{"HOME": filepath.Join(base, "uhome")}),
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Narrow([]string{"a", "later"})
	if err != nil {
		t.Fatal(err)
	}
	p := n.SeatbeltProfile()
	if err := balanced(p); err != nil {
		t.Fatalf("profile is not well formed: %v\n%s", err, p)
	}
	// Seatbelt applies the last matching rule: the workspace denial must
	// follow the scratch allowance, and the claims' allowance follow it.
	scratch := strings.Index(p, "(subpath "+sbplString(filepath.Join(base, "uhome", ".cache"))+")")
	deny := strings.Index(p, "(deny file-write* (subpath "+sbplString(root)+"))")
	claimA := strings.Index(p, "(subpath "+sbplString(filepath.Join(root, "a"))+")")
	claimLater := strings.Index(p, "(subpath "+sbplString(filepath.Join(root, "later"))+")")
	if scratch < 0 || deny < scratch || claimA < deny || claimLater < deny {
		t.Errorf("writer profile order wrong (scratch %d, workspace denial %d, claims %d %d):\n%s", scratch, deny, claimA, claimLater, p)
	}
	home := "(subpath " + sbplString(filepath.Join(base, "rhome")) + ")"
	homeDeny := strings.Index(p, "(deny file-write*\n  "+home)
	if homeDeny < claimA || strings.Count(p, home) != 1 {
		t.Errorf("writer profile does not deny writes to the Reasonix home after every allowance:\n%s", p)
	}
}
