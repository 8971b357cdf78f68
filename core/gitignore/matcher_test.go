package gitignore

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	"reasonix/core/testenv"
)

func TestParseLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line string
		ok         bool
		want       pattern
	}{
		{"blank", "", false, pattern{}},
		{"comment", "# note", false, pattern{}},
		{"escaped hash", `\#file`, true, pattern{text: `\#file`, basename: true, prefix: 0}},
		{"trailing spaces trimmed", "foo   ", true, pattern{text: "foo", basename: true, prefix: 3}},
		{"escaped trailing space kept", `foo\ `, true, pattern{text: `foo\ `, basename: true, prefix: 3}},
		{"trailing tab kept", "foo\t", true, pattern{text: "foo\t", basename: true, prefix: 4}},
		{"only spaces", "   ", false, pattern{}},
		{"negation", "!keep.txt", true, pattern{text: "keep.txt", negate: true, basename: true, prefix: 8}},
		{"escaped bang", `\!important`, true, pattern{text: `\!important`, basename: true, prefix: 0}},
		{"dir only", "build/", true, pattern{text: "build", dirOnly: true, basename: true, prefix: 5}},
		{"anchored", "/bin", true, pattern{text: "/bin", prefix: 4}},
		{"middle slash", "doc/*.txt", true, pattern{text: "doc/*.txt", prefix: 4}},
		{"ends with", "*.o", true, pattern{text: "*.o", basename: true, endsWith: true, prefix: 0}},
		{"star and class is no suffix", "*.[oa]", true, pattern{text: "*.[oa]", basename: true, prefix: 0}},
		{"lone slash", "/", false, pattern{}},
		{"lone bang", "!", false, pattern{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := parseLine(tc.line)
			if ok != tc.ok || got != tc.want {
				t.Errorf("parseLine(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestIgnored runs the examples of gitignore(5) and the precedence rules
// through a real tree.
func TestIgnored(t *testing.T) {
	t.Parallel()
	type query struct {
		path  string
		isDir bool
		want  bool
	}
	tests := []struct {
		name    string
		files   map[string]string
		queries []query
	}{
		{
			name:  "basename pattern matches at any depth",
			files: map[string]string{".gitignore": "hello.*\n"},
			queries: []query{
				{"hello.c", false, true},
				{"a/b/hello.txt", false, true},
				{"hello.d", true, true},
				{"hello", false, false},
				{"ahello.c", false, false},
			},
		},
		{
			name:  "trailing slash matches directories only",
			files: map[string]string{".gitignore": "foo/\n"},
			queries: []query{
				{"foo", true, true},
				{"foo", false, false},
				{"a/foo", true, true},
				{"foo/x.go", false, true},
			},
		},
		{
			name:  "slash in the middle anchors to the file's directory",
			files: map[string]string{".gitignore": "doc/frotz/\n"},
			queries: []query{
				{"doc/frotz", true, true},
				{"a/doc/frotz", true, false},
				{"doc/frotz/x", false, true},
			},
		},
		{
			name:  "leading slash anchors",
			files: map[string]string{".gitignore": "/bar\n"},
			queries: []query{
				{"bar", false, true},
				{"a/bar", false, false},
			},
		},
		{
			name:  "leading slash is redundant with a middle slash",
			files: map[string]string{".gitignore": "doc/frotz\n/x/y\n"},
			queries: []query{
				{"doc/frotz", false, true},
				{"a/doc/frotz", false, false},
				{"x/y", true, true},
			},
		},
		{
			name:  "star does not cross directories",
			files: map[string]string{".gitignore": "foo/*\n"},
			queries: []query{
				{"foo/test.json", false, true},
				{"foo/bar", true, true},
				// Ignored through its ignored parent foo/bar.
				{"foo/bar/hello.c", false, true},
				{"foo", true, false},
			},
		},
		{
			name:  "leading double star",
			files: map[string]string{".gitignore": "**/foo\n**/x/bar\n"},
			queries: []query{
				{"foo", false, true},
				{"a/b/foo", true, true},
				{"x/bar", false, true},
				{"a/x/bar", false, true},
				{"a/y/bar", false, false},
			},
		},
		{
			name:  "trailing double star",
			files: map[string]string{".gitignore": "abc/**\n"},
			queries: []query{
				{"abc", true, false},
				{"abc/x", false, true},
				{"abc/x/y", false, true},
				{"d/abc/x", false, false},
			},
		},
		{
			name:  "middle double star",
			files: map[string]string{".gitignore": "a/**/b\n"},
			queries: []query{
				{"a/b", false, true},
				{"a/x/b", false, true},
				{"a/x/y/b", false, true},
				{"a/x/y/c", false, false},
			},
		},
		{
			name:  "negation re-includes",
			files: map[string]string{".gitignore": "*.log\n!keep.log\n"},
			queries: []query{
				{"a.log", false, true},
				{"keep.log", false, false},
				{"d/keep.log", false, false},
			},
		},
		{
			name:  "later line wins",
			files: map[string]string{".gitignore": "!keep.log\n*.log\n"},
			queries: []query{
				{"keep.log", false, true},
			},
		},
		{
			name:  "only foo/bar survives",
			files: map[string]string{".gitignore": "/*\n!/foo\n/foo/*\n!/foo/bar\n"},
			queries: []query{
				{"top.txt", false, true},
				{"foo", true, false},
				{"foo/baz", false, true},
				{"foo/bar", true, false},
				{"foo/bar/x", false, false},
			},
		},
		{
			name:  "no re-inclusion under an ignored directory",
			files: map[string]string{".gitignore": "build/\n!build/keep.txt\n"},
			queries: []query{
				{"build/keep.txt", false, true},
			},
		},
		{
			name: "deeper file overrides shallower",
			files: map[string]string{
				".gitignore":     "*.gen\n",
				"sub/.gitignore": "!*.gen\n/local\n",
			},
			queries: []query{
				{"a.gen", false, true},
				{"sub/a.gen", false, false},
				{"sub/deep/a.gen", false, false},
				{"sub/local", false, true},
				{"local", false, false},
				{"sub/deep/local", false, false},
			},
		},
		{
			name: "info exclude is weaker than gitignore",
			files: map[string]string{
				".git/info/exclude": "*.tmp\nsecret\n",
				".gitignore":        "!keep.tmp\n",
			},
			queries: []query{
				{"a.tmp", false, true},
				{"keep.tmp", false, false},
				{"x/secret", false, true},
			},
		},
		{
			name:  "escapes and trailing spaces",
			files: map[string]string{".gitignore": "\\#hash\n\\!bang\nspace\\ \ntrimmed   \n"},
			queries: []query{
				{"#hash", false, true},
				{"!bang", false, true},
				{"space ", false, true},
				{"space", false, false},
				{"trimmed", false, true},
			},
		},
		{
			name:  "crlf lines and bom",
			files: map[string]string{".gitignore": "\xef\xbb\xbf*.bak\r\nout/\r\n"},
			queries: []query{
				{"x.bak", false, true},
				{"out", true, true},
			},
		},
		{
			name:  "dot git always ignored",
			files: map[string]string{".gitignore": "!.git\n"},
			queries: []query{
				{".git", true, true},
				{".git", false, true},
				{"sub/.git/config", false, true},
				{".github", true, false},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			testenv.WriteTree(t, root, tc.files)
			m := New(root)
			for _, q := range tc.queries {
				if got := m.Ignored(q.path, q.isDir); got != q.want {
					t.Errorf("Ignored(%q, dir=%v) = %v, want %v", q.path, q.isDir, got, q.want)
				}
			}
		})
	}
}

// TestEnclosingRepository checks that a root below a repository's top sees
// the repository's rules, anchored at the top.
func TestEnclosingRepository(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	testenv.WriteTree(t, top, map[string]string{
		".git/info/exclude": "*.x\n",
		".gitignore":        "*.log\n/sub/gen/\n/local.txt\n",
		"sub/.gitignore":    "*.tmp\n",
	})
	m := New(filepath.Join(top, "sub"))
	tests := []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"a.log", false, true},
		{"a.tmp", false, true},
		{"a.x", false, true},
		{"gen", true, true},
		{"local.txt", false, false},
		{"a.go", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			if got := m.Ignored(tc.path, tc.isDir); got != tc.want {
				t.Errorf("Ignored(%q) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}

func TestWalk(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteTree(t, root, map[string]string{
		".gitignore":       "*.o\nvendor/\n",
		".git/HEAD":        "ref",
		"a.go":             "",
		"a.o":              "",
		"b/.gitignore":     "!keep.o\nskip.txt\n",
		"b/keep.o":         "",
		"b/skip.txt":       "",
		"b/c/d.go":         "",
		"vendor/x/y.go":    "",
		"z/.git":           "gitdir: elsewhere",
		"z/file.go":        "",
		"empty/":           "",
		"a.go.d/inner.txt": "",
	})
	collect := func(t *testing.T, rel string, skip string) []string {
		t.Helper()
		var got []string
		err := New(root).Walk(rel, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			suffix := ""
			if d.IsDir() {
				suffix = "/"
			}
			got = append(got, p+suffix)
			if p == skip {
				return fs.SkipDir
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Walk: %v", err)
		}
		return got
	}
	tests := []struct {
		name, rel, skip string
		want            []string
	}{
		{
			name: "whole tree",
			want: []string{"./", ".gitignore", "a.go", "a.go.d/", "a.go.d/inner.txt", "b/", "b/.gitignore", "b/c/", "b/c/d.go", "b/keep.o", "empty/", "z/", "z/file.go"},
		},
		{
			name: "skip a directory",
			skip: "b",
			want: []string{"./", ".gitignore", "a.go", "a.go.d/", "a.go.d/inner.txt", "b/", "empty/", "z/", "z/file.go"},
		},
		{
			name: "skip the rest of a directory from a file",
			skip: "b/c/d.go",
			want: []string{"./", ".gitignore", "a.go", "a.go.d/", "a.go.d/inner.txt", "b/", "b/.gitignore", "b/c/", "b/c/d.go", "b/keep.o", "empty/", "z/", "z/file.go"},
		},
		{
			name: "subdirectory keeps the rules above it",
			rel:  "b",
			want: []string{"b/", "b/.gitignore", "b/c/", "b/c/d.go", "b/keep.o"},
		},
		{
			name: "an ignored directory can be walked on purpose",
			rel:  "./vendor/",
			want: []string{"vendor/", "vendor/x/", "vendor/x/y.go"},
		},
		{
			name: "a single file",
			rel:  "a.o",
			want: []string{"a.o"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := collect(t, tc.rel, tc.skip)
			if !slices.Equal(got, tc.want) {
				t.Errorf("walk %q:\n got %q\nwant %q", tc.rel, got, tc.want)
			}
		})
	}
}

func TestWalkErrors(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteTree(t, root, map[string]string{"a/b.txt": "", "c.txt": ""})
	sentinel := errors.New("stop")
	tests := []struct {
		name    string
		rel     string
		fn      fs.WalkDirFunc
		wantErr error
		wantNil bool
	}{
		{
			name:    "missing start is reported to fn",
			rel:     "nope",
			fn:      func(string, fs.DirEntry, error) error { return sentinel },
			wantErr: sentinel,
		},
		{
			name:    "fn error stops the walk",
			fn:      func(p string, _ fs.DirEntry, _ error) error { return map[bool]error{true: sentinel}[p == "a/b.txt"] },
			wantErr: sentinel,
		},
		{
			name:    "skip all stops quietly",
			fn:      func(p string, _ fs.DirEntry, _ error) error { return fs.SkipAll },
			wantNil: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := New(root).Walk(tc.rel, tc.fn)
			if tc.wantNil && err != nil {
				t.Fatalf("Walk = %v, want nil", err)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("Walk = %v, want %v", err, tc.wantErr)
			}
		})
	}
}
