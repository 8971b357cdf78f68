package permission

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix/core/sandbox"
)

// resolveLikeKernel is the sandbox's resolver, the one sessions give
// their policy: symlinks followed and ".." taken after them, as the kernel
// does.
var resolveLikeKernel = sandbox.Resolve

// symlinkTree lays out a workspace for the path tests and returns its
// root, reached both through a symlink (link) and directly (real, free of
// symlinks), and a directory outside it.
//
//	real/secrets/key
//	real/lnk -> secrets
//	real/docs/a.md
//	real/docs/lnk -> ../src/main.go
//	real/docs/sub -> ../src
//	real/src/main.go
//	real/vault -> outside
//	real/pub -> docs
//	outside/key
//	link -> real
func symlinkTree(t *testing.T) (link, real, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real, outside, link = filepath.Join(base, "real"), filepath.Join(base, "outside"), filepath.Join(base, "link")
	for _, d := range []string{"secrets", "docs", "src"} {
		if err := os.MkdirAll(filepath.Join(real, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"secrets/key", "docs/a.md", "src/main.go"} {
		if err := os.WriteFile(filepath.Join(real, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "key"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		filepath.Join(real, "lnk"):      "secrets",
		filepath.Join(real, "docs/lnk"): "../src/main.go",
		filepath.Join(real, "docs/sub"): "../src",
		filepath.Join(real, "vault"):    outside,
		filepath.Join(real, "pub"):      "docs",
		link:                            real,
	} {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	return link, real, outside
}

func TestPathRulesFollowSymlinks(t *testing.T) {
	t.Parallel()
	link, real, outside := symlinkTree(t)
	cases := []struct {
		name        string
		root        string
		allow, deny []string
		tool        string
		args        json.RawMessage
		want        Decision // with a resolver
		lexical     Decision // without one, as before
	}{
		{"read through a link to a denied dir", real, nil, []string{"Read(secrets/**)"}, "read_file", argsJSON("path", "lnk/key"), Deny, Allow},
		{"grep through a link", real, nil, []string{"Read(secrets/**)"}, "grep", argsJSON("pattern", "x", "path", "lnk"), Deny, Allow},
		{"glob through a link", real, nil, []string{"Read(secrets/**)"}, "glob", argsJSON("pattern", "lnk/*"), Deny, Allow},
		{"edit through a link", real, []string{"Edit"}, []string{"Edit(secrets/**)"}, "write_file", argsJSON("path", "lnk/new"), Deny, Allow},
		{"move into a denied dir through a link", real, []string{"Edit"}, []string{"Edit(secrets/**)"}, "move_file", argsJSON("path", "docs/a.md", "destination", "lnk/a.md"), Deny, Allow},
		{"move out of a denied dir through a link", real, []string{"Edit"}, []string{"Edit(secrets/**)"}, "move_file", argsJSON("path", "lnk/key", "destination", "docs/key"), Deny, Allow},
		{"allow does not follow a link out", real, []string{"Edit(docs/**)"}, nil, "write_file", argsJSON("path", "docs/lnk"), Ask, Allow},
		{"dotdot after a link", real, []string{"Edit(docs/**)"}, nil, "write_file", argsJSON("path", "docs/sub/../x"), Ask, Allow},
		{"move needs both real ends", real, []string{"Edit(docs/**)"}, nil, "move_file", argsJSON("path", "docs/a.md", "destination", "docs/lnk"), Ask, Allow},
		{"allow inside still allowed", real, []string{"Edit(docs/**)"}, nil, "write_file", argsJSON("path", "docs/a.md"), Allow, Allow},
		{"allow a new file", real, []string{"Edit(docs/**)"}, nil, "write_file", argsJSON("path", "docs/new/b.md"), Allow, Allow},
		{"symlinked root allow", link, []string{"Edit(docs/**)"}, nil, "write_file", argsJSON("path", "docs/a.md"), Allow, Allow},
		{"symlinked root allow by real path", link, []string{"Edit(docs/**)"}, nil, "write_file", argsJSON("path", real+"/docs/a.md"), Allow, Ask},
		{"symlinked root, linked dir, real root path", link, []string{"Edit(pub/**)"}, nil, "write_file", argsJSON("path", real+"/pub/a.md"), Allow, Ask},
		{"symlinked root deny by real path", link, nil, []string{"Read(secrets/**)"}, "read_file", argsJSON("path", real+"/secrets/key"), Deny, Allow},
		{"symlinked root deny through a link", link, nil, []string{"Read(secrets/**)"}, "read_file", argsJSON("path", "lnk/key"), Deny, Allow},
		{"rule naming a link, real path read", real, nil, []string{"Read(vault/**)"}, "read_file", argsJSON("path", outside+"/key"), Deny, Allow},
		{"rule naming a link, link read", real, nil, []string{"Read(vault/**)"}, "read_file", argsJSON("path", "vault/key"), Deny, Deny},
		{"unrelated read", real, nil, []string{"Read(secrets/**)"}, "read_file", argsJSON("path", "docs/a.md"), Allow, Allow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := NewPolicy("ask", tc.allow, nil, tc.deny, tc.root, "")
			if err != nil {
				t.Fatal(err)
			}
			if v := p.Explain(PostureAsk, tc.tool, true, tc.args); v.Decision != tc.lexical {
				t.Errorf("without a resolver: %v (%s), want %v", v.Decision, v.Reason(), tc.lexical)
			}
			p.Resolve = resolveLikeKernel
			if v := p.Explain(PostureAsk, tc.tool, true, tc.args); v.Decision != tc.want {
				t.Errorf("with a resolver: %v (%s), want %v", v.Decision, v.Reason(), tc.want)
			}
		})
	}
}

func TestPathResolveErrorIsUndecidable(t *testing.T) {
	t.Parallel()
	broken := func(string) (string, error) { return "", errors.New("too many levels of symbolic links") }
	deny, err := NewPolicy("allow", nil, []string{"Edit(docs/**)"}, []string{"Read(secrets/**)"}, testRoot, testHome)
	if err != nil {
		t.Fatal(err)
	}
	deny.Resolve = broken
	v := deny.Explain(PostureAsk, "read_file", true, argsJSON("path", "docs/a.md"))
	if v.Decision != Deny || v.Rule.String() != "Read(secrets/**)" || !strings.Contains(v.Reason(), "cannot tell which file docs/a.md is: too many levels") {
		t.Errorf("read: %v (%s), want deny by Read(secrets/**) saying it cannot tell", v.Decision, v.Reason())
	}
	if v := deny.Explain(PostureAsk, "write_file", false, argsJSON("path", "docs/a.md")); v.Decision != Ask || v.Source != FromAsk {
		t.Errorf("write under an ask rule: %v (%s), want ask", v.Decision, v.Reason())
	}
	allow, err := NewPolicy("ask", []string{"Edit(docs/**)"}, nil, nil, testRoot, testHome)
	if err != nil {
		t.Fatal(err)
	}
	allow.Resolve = broken
	if v := allow.Explain(PostureAsk, "write_file", false, argsJSON("path", "docs/a.md")); v.Decision != Ask || v.Source != FromMode {
		t.Errorf("write under an allow rule: %v (%s), want the fallback", v.Decision, v.Reason())
	}
	// Bare rules do not look at paths, so they still decide.
	bare := Policy{Mode: Ask, Allow: []Rule{mustRule(t, "Edit")}, Resolve: broken}
	if v := bare.Explain(PostureAsk, "write_file", false, argsJSON("path", "docs/a.md")); v.Decision != Allow {
		t.Errorf("bare allow: %v (%s)", v.Decision, v.Reason())
	}
}

func TestPathDenied(t *testing.T) {
	t.Parallel()
	link, real, outside := symlinkTree(t)
	var calls atomic.Int64
	counting := func(p string) (string, error) {
		calls.Add(1)
		return resolveLikeKernel(p)
	}
	p, err := NewPolicy("ask", nil, nil,
		[]string{"read_file(src/**)", "Edit(docs/**)", "Read(secrets/**)", "Read(vault/**)", "Edit(~/.ssh/**)"},
		link, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	p.Resolve = counting
	cases := []struct {
		op, path string
		want     string // the rule reported, "" for none
	}{
		{"read", real + "/secrets/key", "Read(secrets/**)"},
		{"read", real + "/secrets", "Read(secrets/**)"},
		{"read", link + "/secrets/key", "Read(secrets/**)"},
		{"read", outside + "/key", "Read(vault/**)"},
		{"read", real + "/docs/a.md", ""},
		{"read", real + "/src/main.go", ""},
		{"write", real + "/docs/a.md", "Edit(docs/**)"},
		{"write", real + "/secrets/key", "Read(secrets/**)"},
		{"write", "/home/u/.ssh/config", "Edit(~/.ssh/**)"},
		{"write", real + "/src/main.go", ""},
		{"write", real, ""},
		{"delete", real + "/docs/a.md", "Edit(docs/**)"},
		{"read", real + "/secrets/../docs/a.md", ""},
	}
	check := func(t *testing.T, p Policy) {
		t.Helper()
		for _, tc := range cases {
			r, ok := p.PathDenied(tc.op, filepath.FromSlash(tc.path))
			if ok != (tc.want != "") || ok && r.String() != tc.want {
				t.Errorf("PathDenied(%s, %s) = %v, %v; want %q", tc.op, tc.path, r, ok, tc.want)
			}
		}
	}
	check(t, p)
	warm := calls.Load()
	if warm == 0 {
		t.Fatal("the resolver was never called; the test no longer checks resolved roots")
	}
	copied := p
	for range 100 {
		check(t, copied)
	}
	if n := calls.Load(); n != warm {
		t.Errorf("resolver called %d more times once the rules were placed", n-warm)
	}

	// Without a resolver only the root as written places the rules.
	p.Resolve, p.places = nil, &placeCache{}
	if _, ok := p.PathDenied("read", real+"/secrets/key"); ok {
		t.Error("without a resolver the real root matched; the resolver case proves nothing")
	}
	if r, ok := p.PathDenied("read", link+"/secrets/key"); !ok || r.String() != "Read(secrets/**)" {
		t.Errorf("without a resolver: %v, %v", r, ok)
	}

	bare, err := NewPolicy("ask", nil, nil, []string{"Read"}, real, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"read", "write"} {
		if r, ok := bare.PathDenied(op, "/anything"); !ok || r.String() != "Read" {
			t.Errorf("bare Read deny, %s: %v, %v", op, r, ok)
		}
	}
	editOnly, err := NewPolicy("ask", nil, nil, []string{"Edit"}, real, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := editOnly.PathDenied("read", "/anything"); ok {
		t.Error("an Edit deny rule refused a read")
	}
}

func TestEditPaths(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tool string
		args json.RawMessage
		want []string
	}{
		{"write_file", argsJSON("path", "a.go", "content", "x"), []string{"a.go"}},
		{"edit_file", argsJSON("file_path", "/x/b.go"), []string{"/x/b.go"}},
		{"multi_edit", argsJSON("path", "c", "file_path", "d"), []string{"c", "d"}},
		{"move_file", argsJSON("path", "src", "destination", "dst"), []string{"src", "dst"}},
		{"move_file", argsJSON("path", "src", "destination", "  "), []string{"src"}},
		{"write_file", json.RawMessage(`"{\"path\":\"e\"}"`), []string{"e"}},
		{"write_file", json.RawMessage(`{"PATH":"f"}`), []string{"f"}},
		{"write_file", json.RawMessage(`{"path":"g","path":"h"}`), []string{"h"}},
		{"read_file", argsJSON("path", "a"), nil},
		{"glob", argsJSON("pattern", "*"), nil},
		{"bash", cmd("rm a"), nil},
		{"mcp__fs__write", argsJSON("path", "a"), nil},
	}
	for _, tc := range cases {
		if got := EditPaths(tc.tool, tc.args); !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("EditPaths(%s, %s) = %q, want %q", tc.tool, tc.args, got, tc.want)
		}
	}
}

// TestFailureNeverAllows makes matching panic (through a resolver, the one
// part of matching a caller supplies) and checks that no entry point lets
// the call through.
func TestFailureNeverAllows(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy("allow", []string{"Edit(docs/**)", "Bash"}, nil, []string{"Read(secrets/**)"}, testRoot, testHome)
	if err != nil {
		t.Fatal(err)
	}
	p.Resolve = func(string) (string, error) { panic("resolver exploded") }
	for posture, want := range map[Posture]Decision{PostureAsk: Ask, PostureAuto: Deny, PostureYolo: Deny, "bogus": Ask} {
		for _, tool := range []string{"write_file", "read_file"} {
			v := p.Explain(posture, tool, tool == "read_file", argsJSON("path", "docs/a.md"))
			if v.Decision != want || v.Source != FromFailure || !strings.Contains(v.Reason(), "permission check failed") || !strings.Contains(v.Reason(), "resolver exploded") {
				t.Errorf("%s %s: %v from %v (%s), want %v from failure", posture, tool, v.Decision, v.Source, v.Reason(), want)
			}
		}
	}
	if got := p.Decide("write_file", false, argsJSON("path", "docs/a.md")); got != Ask {
		t.Errorf("Decide = %v, want ask", got)
	}
	if v := p.Explain(PostureAsk, "bash", false, cmd("ls")); v.Decision != Allow {
		t.Errorf("a call that never reaches the resolver: %v (%s)", v.Decision, v.Reason())
	}
	if got := p.Suggest("write_file", argsJSON("path", "docs/a.md")); got != nil {
		t.Errorf("Suggest = %q, want none", got)
	}
	if r, ok := p.PathDenied("read", "/work/proj/docs/a.md"); !ok || r != (Rule{}) {
		t.Errorf("PathDenied = %v, %v; want the zero rule and true", r, ok)
	}
	if FromFailure.String() != "failure" {
		t.Errorf("FromFailure.String() = %q", FromFailure.String())
	}
}

// TestGrantsFollowLinks: a session grant is an allow, so with links
// followed it covers a write only where the write really lands.
func TestGrantsFollowLinks(t *testing.T) {
	t.Parallel()
	_, real, _ := symlinkTree(t)
	g := NewGrants(real, "")
	if err := g.Add("Edit(docs/**)"); err != nil {
		t.Fatal(err)
	}
	out, in := argsJSON("path", "docs/lnk"), argsJSON("path", "docs/a.md")
	if !g.Covers("write_file", out) {
		t.Fatal("without links followed the grant should cover docs/lnk by its spelling")
	}
	g.FollowLinks(resolveLikeKernel)
	if g.Covers("write_file", out) {
		t.Error("the grant covers docs/lnk, which leads to src/main.go")
	}
	if !g.Covers("write_file", in) {
		t.Error("the grant no longer covers docs/a.md")
	}
}
