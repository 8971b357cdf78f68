package search

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"reasonix/core/testenv"
	"reasonix/core/tool"
)

// callTool runs one tool call with args marshalled from a map.
// toolCase is one call of a tool in a workspace and what it must give.
type toolCase struct {
	name    string
	args    map[string]any
	limits  tool.Limits
	guard   bool
	want    string
	wantErr string
}

// runToolCases calls the tool newTool makes for each case, in root, with
// the case's limits and, when it asks, a guard that hides "secret".
func runToolCases(t *testing.T, root string, newTool func(tool.Env) tool.Tool, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := tool.Env{Root: root, Limits: tc.limits}
			if tc.guard {
				env.Guard = refuseGuard{root: root, hidden: "secret"}
			}
			out, err := callTool(t, newTool(env), tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if out != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", out, tc.want)
			}
		})
	}
}

func callTool(t *testing.T, tl tool.Tool, args map[string]any) (string, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tl.Execute(context.Background(), raw)
}

// refuseGuard allows reads anywhere except paths whose base name is hidden.
type refuseGuard struct {
	root   string
	hidden string
}

func (g refuseGuard) ReadPath(p string) (string, error) {
	if filepath.Base(p) == g.hidden {
		return "", errors.New("refused by policy")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.root, p)
	}
	return filepath.Clean(p), nil
}

func (g refuseGuard) WritePath(p string) (string, error) { return "", errors.New("read only") }

var globTree = map[string]string{
	".gitignore":             "ignored/\n*.log\n",
	"main.go":                "",
	"app.log":                "",
	"cmd/tool/main.go":       "",
	"cmd/tool/util.go":       "",
	"cmd/other/main.go":      "",
	"cmd/README.md":          "",
	"web/a.ts":               "",
	"web/b.tsx":              "",
	"web/c.js":               "",
	"web/deep/d.ts":          "",
	"ignored/x.go":           "",
	".git/hooks/pre.go":      "",
	".github/workflows/x.go": "",
	"secret/key.go":          "",
	"empty/":                 "",
}

func TestGlob(t *testing.T) {
	t.Parallel()
	tests := []toolCase{
		{
			name: "recursive",
			args: map[string]any{"pattern": "**/*.go"},
			want: ".github/workflows/x.go\ncmd/other/main.go\ncmd/tool/main.go\ncmd/tool/util.go\nmain.go\nsecret/key.go",
		},
		{
			name: "top level only",
			args: map[string]any{"pattern": "*.go"},
			want: "main.go",
		},
		{
			name: "star directory",
			args: map[string]any{"pattern": "cmd/*/main.go"},
			want: "cmd/other/main.go\ncmd/tool/main.go",
		},
		{
			name: "brace alternation",
			args: map[string]any{"pattern": "**/*.{ts,tsx}"},
			want: "web/a.ts\nweb/b.tsx\nweb/deep/d.ts",
		},
		{
			name: "relative to path",
			args: map[string]any{"pattern": "*.ts", "path": "web"},
			want: "web/a.ts",
		},
		{
			name: "ignored directory searched on purpose",
			args: map[string]any{"pattern": "*.go", "path": "ignored"},
			want: "ignored/x.go",
		},
		{
			name: "ignored files stay hidden",
			args: map[string]any{"pattern": "*.log"},
			want: `no files match "*.log" under .`,
		},
		{
			name: "trailing double star",
			args: map[string]any{"pattern": "cmd/**"},
			want: "cmd/README.md\ncmd/other/main.go\ncmd/tool/main.go\ncmd/tool/util.go",
		},
		{
			name: "leading dot slash",
			args: map[string]any{"pattern": "./web/*.js"},
			want: "web/c.js",
		},
		{
			name:   "capped",
			args:   map[string]any{"pattern": "**/*.go"},
			limits: tool.Limits{ListEntries: 2},
			want:   ".github/workflows/x.go\ncmd/other/main.go\n[4 more files not shown; the list is capped at 2. Narrow the pattern or path.]",
		},
		{
			name:  "guard hides refused paths and counts them",
			args:  map[string]any{"pattern": "**/*.go"},
			guard: true,
			want:  ".github/workflows/x.go\ncmd/other/main.go\ncmd/tool/main.go\ncmd/tool/util.go\nmain.go\n[1 path skipped by read restrictions]",
		},
		{
			name:  "guard count on no match",
			args:  map[string]any{"pattern": "secret/*"},
			guard: true,
			want:  `no files match "secret/*" under . [1 path skipped by read restrictions]`,
		},
		{
			name:  "a directory the pattern cannot reach is not counted",
			args:  map[string]any{"pattern": "web/*.ts"},
			guard: true,
			want:  "web/a.ts",
		},
		{
			name:    "guard refuses a path named outright",
			args:    map[string]any{"pattern": "*", "path": "secret"},
			guard:   true,
			wantErr: "glob: refused by policy",
		},
		{
			name: "no match",
			args: map[string]any{"pattern": "**/*.rs"},
			want: `no files match "**/*.rs" under .`,
		},
		{name: "malformed class", args: map[string]any{"pattern": "[a-"}, wantErr: `glob: pattern "[a-": malformed element`},
		{name: "unbalanced brace", args: map[string]any{"pattern": "*.{go"}, wantErr: `glob: pattern "*.{go": unbalanced "{"`},
		{name: "absolute pattern", args: map[string]any{"pattern": "/etc/*"}, wantErr: "must be relative"},
		{name: "parent pattern", args: map[string]any{"pattern": "../*"}, wantErr: `may not contain ".."`},
		{name: "empty pattern", args: map[string]any{"pattern": " "}, wantErr: "glob: pattern is empty"},
		{name: "missing pattern", args: map[string]any{}, wantErr: `glob: "pattern" is required`},
		{name: "path is a file", args: map[string]any{"pattern": "*", "path": "main.go"}, wantErr: "glob: main.go is a file"},
		{name: "missing path", args: map[string]any{"pattern": "*", "path": "nope"}, wantErr: "glob: nope does not exist"},
	}
	root := testenv.Tree(t, globTree)
	runToolCases(t, root, func(env tool.Env) tool.Tool { return &glob{env: env} }, tests)
}

func TestGlobSymlinkNotFollowed(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	root := testenv.Tree(t, map[string]string{"real/a.go": ""})
	if err := os.Symlink("real", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real/a.go", filepath.Join(root, "b.go")); err != nil {
		t.Fatal(err)
	}
	out, err := callTool(t, &glob{env: tool.Env{Root: root}}, map[string]any{"pattern": "**/*.go"})
	if err != nil {
		t.Fatal(err)
	}
	if out != "b.go\nreal/a.go" {
		t.Errorf("got %q", out)
	}
}

func TestGlobOutsideRoot(t *testing.T) {
	t.Parallel()
	other := testenv.Tree(t, map[string]string{"x.go": "", ".gitignore": "y.go\n", "y.go": ""})
	out, err := callTool(t, &glob{env: tool.Env{Root: t.TempDir()}}, map[string]any{"pattern": "*.go", "path": other})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(other, "x.go"); out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestExpandBraces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "*.go", want: []string{"*.go"}},
		{in: "*.{ts,tsx}", want: []string{"*.ts", "*.tsx"}},
		{in: "{a,b}/{c,d}", want: []string{"a/c", "a/d", "b/c", "b/d"}},
		{in: "x{a,{b,c}}y", want: []string{"xay", "xby", "xcy"}},
		{in: "{,pre}fix", want: []string{"fix", "prefix"}},
		{in: `\{a,b}`, want: []string{`\{a,b}`}},
		{in: `{a\,b,c}`, want: []string{`a\,b`, "c"}},
		{in: "{a,b", wantErr: `unbalanced "{"`},
		{in: "a}", want: []string{"a}"}},
		{in: strings.Repeat("{a,b}", 9), wantErr: "more than 256 alternatives"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := expandBraces(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("expandBraces(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestGlobSetMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern  string
		basename bool
		path     string
		want     bool
		descend  bool // mayContain(dir of path)
	}{
		{"**/*.go", false, "a.go", true, true},
		{"**/*.go", false, "a/b/c.go", true, true},
		{"*.go", false, "a/b.go", false, false},
		{"*.go", true, "a/b.go", true, true},
		{"a/**/b", false, "a/b", true, true},
		{"a/**/b", false, "a/x/y/b", true, true},
		{"a/*/c.go", false, "a/b/c.go", true, true},
		{"a/*/c.go", false, "x/b/c.go", false, false},
		{"src/**/*.{ts,tsx}", true, "src/x/y.tsx", true, true},
		{"src/**/*.{ts,tsx}", true, "lib/y.tsx", false, false},
		{"[ab].go", false, "b.go", true, true},
		{`\*.go`, false, "*.go", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			g, err := compileGlob(tc.pattern, tc.basename)
			if err != nil {
				t.Fatal(err)
			}
			if got := g.match(tc.path, ""); got != tc.want {
				t.Errorf("match = %v, want %v", got, tc.want)
			}
			if dir := filepath.ToSlash(filepath.Dir(tc.path)); dir != "." {
				if got := g.mayContain(dir); got != tc.descend {
					t.Errorf("mayContain(%q) = %v, want %v", dir, got, tc.descend)
				}
			}
		})
	}
}
