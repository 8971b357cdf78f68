package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/core/panics"
	"reasonix/core/testenv"
	"reasonix/core/tool"
)

var grepTree = map[string]string{
	".gitignore":   "ignored/\n*.log\n",
	"a.go":         "package a\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
	"b/b.go":       "package b\n\n// TODO: fix\nfunc Hello() {}\n",
	"b/c.ts":       "export const hello = 1\n",
	"b/d.tsx":      "const Hello = () => null\n",
	"b/e.js":       "const hello = 2\n",
	"ignored/x.go": "func main() {}\n",
	"app.log":      "func main\n",
	".git/config":  "func main\n",
	"bin.dat":      "func main\x00\x01\n",
	".hidden/h.go": "func main\n",
	"crlf.txt":     "line one\r\nfunc main\r\n",
	"ctx.txt":      "1\n2\nmatch 3\n4\n5\n6\n7\nmatch 8\nmatch 9\n10\n11\n12\n13\n14\nmatch 15",
	"long.txt":     strings.Repeat("a", 1000) + "needle" + strings.Repeat("b", 1000) + "\n",
	"secret/s.go":  "func main\n",
}

func TestGrep(t *testing.T) {
	t.Parallel()
	root := testenv.Tree(t, grepTree)
	tests := []toolCase{
		{
			name: "literal text in path order",
			args: map[string]any{"pattern": "func main"},
			want: ".hidden/h.go:1:func main\na.go:3:func main() {\ncrlf.txt:2:func main\nsecret/s.go:1:func main",
		},
		{
			name: "regular expression",
			args: map[string]any{"pattern": `func [A-Z]\w*`},
			want: "b/b.go:4:func Hello() {}",
		},
		{
			name: "ignore case",
			args: map[string]any{"pattern": "HELLO", "ignore_case": true},
			want: "a.go:4:\tprintln(\"hello\")\nb/b.go:4:func Hello() {}\nb/c.ts:1:export const hello = 1\nb/d.tsx:1:const Hello = () => null\nb/e.js:1:const hello = 2",
		},
		{
			name: "case sensitive by default",
			args: map[string]any{"pattern": "Hello"},
			want: "b/b.go:4:func Hello() {}\nb/d.tsx:1:const Hello = () => null",
		},
		{
			name: "literal flag",
			args: map[string]any{"pattern": "println(", "literal": true},
			want: "a.go:4:\tprintln(\"hello\")",
		},
		{
			name: "include by name",
			args: map[string]any{"pattern": "hello", "ignore_case": true, "include": "*.go"},
			want: "a.go:4:\tprintln(\"hello\")\nb/b.go:4:func Hello() {}",
		},
		{
			name: "include with braces",
			args: map[string]any{"pattern": "hello", "ignore_case": true, "include": "**/*.{ts,tsx}"},
			want: "b/c.ts:1:export const hello = 1\nb/d.tsx:1:const Hello = () => null",
		},
		{
			name: "include with a directory",
			args: map[string]any{"pattern": "hello", "ignore_case": true, "include": "b/*.js"},
			want: "b/e.js:1:const hello = 2",
		},
		{
			name: "path limits the search",
			args: map[string]any{"pattern": "hello", "path": "b", "ignore_case": true, "include": "*.ts"},
			want: "b/c.ts:1:export const hello = 1",
		},
		{
			name: "context with separators",
			args: map[string]any{"pattern": "match", "path": "ctx.txt", "context": 1},
			want: "ctx.txt-2-2\nctx.txt:3:match 3\nctx.txt-4-4\n--\nctx.txt-7-7\nctx.txt:8:match 8\nctx.txt:9:match 9\nctx.txt-10-10\n--\nctx.txt-14-14\nctx.txt:15:match 15",
		},
		{
			name: "context does not repeat lines",
			args: map[string]any{"pattern": "match [89]", "path": "ctx.txt", "context": 3},
			want: "ctx.txt-5-5\nctx.txt-6-6\nctx.txt-7-7\nctx.txt:8:match 8\nctx.txt:9:match 9\nctx.txt-10-10\nctx.txt-11-11\nctx.txt-12-12",
		},
		{
			name: "max results truncates",
			args: map[string]any{"pattern": "match", "path": "ctx.txt", "max_results": 2},
			want: "ctx.txt:3:match 3\nctx.txt:8:match 8\n[results truncated: showing the first 2 matching lines in path order; narrow the pattern, path or include to see the rest]",
		},
		{
			name: "truncation keeps the last match's trailing context only",
			args: map[string]any{"pattern": "match", "path": "ctx.txt", "max_results": 2, "context": 1},
			want: "ctx.txt-2-2\nctx.txt:3:match 3\nctx.txt-4-4\n--\nctx.txt-7-7\nctx.txt:8:match 8\n[results truncated: showing the first 2 matching lines in path order; narrow the pattern, path or include to see the rest]",
		},
		{
			name:   "env cap truncates across files",
			args:   map[string]any{"pattern": "func main"},
			limits: tool.Limits{GrepMatches: 2},
			want:   ".hidden/h.go:1:func main\na.go:3:func main() {\n[results truncated: showing the first 2 matching lines in path order; narrow the pattern, path or include to see the rest]",
		},
		{
			name:   "max results cannot exceed the env cap",
			args:   map[string]any{"pattern": "func main", "max_results": 100},
			limits: tool.Limits{GrepMatches: 1},
			want:   ".hidden/h.go:1:func main\n[results truncated: showing the first 1 matching lines in path order; narrow the pattern, path or include to see the rest]",
		},
		{
			name: "ignored directory searched on purpose",
			args: map[string]any{"pattern": "main", "path": "ignored"},
			want: "ignored/x.go:1:func main() {}",
		},
		{
			name: "ignored file named outright",
			args: map[string]any{"pattern": "main", "path": "app.log"},
			want: "app.log:1:func main",
		},
		{
			name: "binary file named outright",
			args: map[string]any{"pattern": "main", "path": "bin.dat"},
			want: "bin.dat is a binary file; not searched",
		},
		{
			name: "long line shows a window around the match",
			args: map[string]any{"pattern": "needle"},
			want: "long.txt:1:[... 900 bytes ...] " + strings.Repeat("a", 100) + "needle" + strings.Repeat("b", 294) + " [... 706 bytes ...]",
		},
		{
			name:  "guard hides refused paths and counts them",
			args:  map[string]any{"pattern": "func main"},
			guard: true,
			want:  ".hidden/h.go:1:func main\na.go:3:func main() {\ncrlf.txt:2:func main\n[1 path skipped by read restrictions]",
		},
		{
			name:  "guard count on no match",
			args:  map[string]any{"pattern": "zebra"},
			guard: true,
			want:  `no matches for "zebra" in . [1 path skipped by read restrictions]`,
		},
		{
			name:    "guard refuses a path named outright",
			args:    map[string]any{"pattern": "func", "path": "secret"},
			guard:   true,
			wantErr: "grep: refused by policy",
		},

		{
			name: "no match",
			args: map[string]any{"pattern": "zebra"},
			want: `no matches for "zebra" in .`,
		},
		{
			name: "no match with include",
			args: map[string]any{"pattern": "zebra", "include": "*.go"},
			want: `no matches for "zebra" in . (files matching "*.go")`,
		},
		{name: "invalid regex", args: map[string]any{"pattern": "println("}, wantErr: "grep: invalid regular expression: missing closing ): `println(`"},
		{name: "invalid repeat", args: map[string]any{"pattern": "*x"}, wantErr: "grep: invalid regular expression: missing argument to repetition operator: `*`"},
		{name: "bad include", args: map[string]any{"pattern": "x", "include": "[a-"}, wantErr: "grep: include: pattern"},
		{name: "missing path", args: map[string]any{"pattern": "x", "path": "nope"}, wantErr: "grep: nope does not exist"},
		{name: "context too large", args: map[string]any{"pattern": "x", "context": 21}, wantErr: "grep: context must be between 0 and 20"},
		{name: "negative max results", args: map[string]any{"pattern": "x", "max_results": -1}, wantErr: "grep: max_results must be 1 or more"},
		{name: "missing pattern", args: map[string]any{}, wantErr: `grep: "pattern" is required`},
	}
	runToolCases(t, root, func(env tool.Env) tool.Tool { return &grep{env: env} }, tests)
}

func TestGrepRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no device file to name")
	}
	_, err := callTool(t, &grep{env: tool.Env{Root: t.TempDir()}}, map[string]any{"pattern": "x", "path": os.DevNull})
	if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("err = %v, want a refusal", err)
	}
}

// TestGrepWorkerPanic makes grep workers panic while they walk a tree: the
// call must return the panic as its error, and promptly, since the other
// workers stop instead of waiting for the job that never finished. It sets
// a package-level hook, so it does not run in parallel.
func TestGrepWorkerPanic(t *testing.T) {
	files := map[string]string{}
	for d := range 4 {
		for f := range 50 {
			files[fmt.Sprintf("d%d/f%02d.txt", d, f)] = "hit\n"
		}
	}
	root := testenv.Tree(t, files)
	tests := []struct {
		name    string
		panicOn func(rel string) bool
		value   any
		wantIs  error
	}{
		{name: "one file", panicOn: func(rel string) bool { return rel == "d2/f17.txt" }, value: "bad index"},
		{name: "every file", panicOn: func(string) bool { return true }, value: io.ErrUnexpectedEOF, wantIs: io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testHookGrepFile = func(rel string) {
				if tc.panicOn(rel) {
					panic(tc.value)
				}
			}
			defer func() { testHookGrepFile = nil }()
			raw, _ := json.Marshal(map[string]any{"pattern": "hit"})
			g := &grep{env: tool.Env{Root: root}}
			done := make(chan error, 1)
			go func() {
				_, err := g.Execute(context.Background(), raw)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("grep did not return after a worker panicked")
			}
			var pe *panics.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *panics.Error", err)
			}
			if want := fmt.Sprintf("grep: search worker: panic: %v", tc.value); err.Error() != want {
				t.Errorf("err = %q, want %q", err, want)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("err = %v, want it to wrap %v", err, tc.wantIs)
			}
		})
	}
}

// TestGrepDeterministic searches a tree with many matching files under a
// small cap, over and over: parallel workers and the collector's pruning
// must always yield the first matches in path order.
func TestGrepDeterministic(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	var all []string
	for d := range 8 {
		for f := range 25 {
			rel := fmt.Sprintf("d%d/f%02d.txt", d, f)
			files[rel] = "x hit\ny\nz hit\n"
			all = append(all, rel+":1:x hit", rel+":3:z hit")
		}
	}
	slices.Sort(all)
	root := testenv.Tree(t, files)
	tests := []struct {
		name  string
		limit int
	}{
		{"tight cap", 7},
		{"cap inside a file", 50},
		{"cap above the total", 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := strings.Join(all[:min(tc.limit, len(all))], "\n")
			if tc.limit < len(all) {
				want += fmt.Sprintf("\n[results truncated: showing the first %d matching lines in path order; narrow the pattern, path or include to see the rest]", tc.limit)
			}
			g := &grep{env: tool.Env{Root: root, Limits: tool.Limits{GrepMatches: tc.limit}}}
			for i := range 20 {
				out, err := callTool(t, g, map[string]any{"pattern": "hit"})
				if err != nil {
					t.Fatal(err)
				}
				if out != want {
					t.Fatalf("run %d differs:\n%s\nwant:\n%s", i, out, want)
				}
			}
		})
	}
}

// TestGrepSkippedDeterministic checks that the count of paths the guard
// refused is the same on every run even when the walk stops early: which
// refused paths past the last file shown a worker happens to reach depends
// on timing, so only those before it are counted. The guard refuses the
// directory a and a file a in every directory d0 to d7.
func TestGrepSkippedDeterministic(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a/x.txt": "hit\n"}
	var all []string
	for d := range 8 {
		files[fmt.Sprintf("d%d/a", d)] = "hit\n"
		for f := range 25 {
			rel := fmt.Sprintf("d%d/f%02d.txt", d, f)
			files[rel] = "x hit\ny\nz hit\n"
			all = append(all, rel+":1:x hit", rel+":3:z hit")
		}
	}
	slices.Sort(all)
	root := testenv.Tree(t, files)
	tests := []struct {
		name    string
		limit   int
		skipped int
	}{
		// The first 7 lines end in d0/f03.txt: a/ and d0/a sort before it.
		{"tight cap", 7, 2},
		{"cap above the total", 1000, 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := strings.Join(all[:min(tc.limit, len(all))], "\n")
			if tc.limit < len(all) {
				want += fmt.Sprintf("\n[results truncated: showing the first %d matching lines in path order; narrow the pattern, path or include to see the rest]", tc.limit)
			}
			want += fmt.Sprintf("\n[%d paths skipped by read restrictions]", tc.skipped)
			g := &grep{env: tool.Env{Root: root, Limits: tool.Limits{GrepMatches: tc.limit}, Guard: refuseGuard{root: root, hidden: "a"}}}
			for i := range 50 {
				out, err := callTool(t, g, map[string]any{"pattern": "hit"})
				if err != nil {
					t.Fatal(err)
				}
				if out != want {
					t.Fatalf("run %d differs:\n%s\nwant:\n%s", i, out, want)
				}
			}
		})
	}
}

func TestRequiredLiterals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		pattern    string
		ignoreCase bool
		want       []string // literal strings, "~" prefix for case-folded
		exact      bool
	}{
		{name: "plain literal", pattern: "func main", want: []string{"func main"}, exact: true},
		{name: "literal prefix", pattern: `errors\.New\("[a-z]+`, want: []string{`errors.New("`}},
		{name: "longest piece", pattern: `ab\d+longer`, want: []string{"longer"}},
		{name: "folded", pattern: "deadline", ignoreCase: true, want: []string{"~deadline"}, exact: true},
		{name: "folded drops k and s", pattern: "task", ignoreCase: true, want: []string{"~ta"}},
		{name: "alternation", pattern: "TODO|FIXME", want: []string{"TODO", "FIXME"}},
		{name: "alternation with a gap", pattern: "TODO|.*", want: nil},
		{name: "plus keeps its literal", pattern: "(abc)+", want: []string{"abc"}},
		{name: "optional literal is not required", pattern: "x(abc)?", want: []string{"x"}},
		{name: "class", pattern: "[ab]c", want: []string{"c"}},
		{name: "case pair class folds", pattern: "[Tt]odo", want: []string{"~todo"}},
		{name: "nothing required", pattern: `\w+`, want: nil},
		{name: "literal mode", pattern: "a.b(", want: []string{"a.b("}, exact: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := newLineMatcher(tc.pattern, tc.name == "literal mode", tc.ignoreCase)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range m.lits {
				s := string(l.lit)
				if l.fold {
					s = "~" + s
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) || m.exact != tc.exact {
				t.Errorf("literals %q exact %v; want %q exact %v", got, m.exact, tc.want, tc.exact)
			}
		})
	}
}

// naiveMatches is the reference the line matcher must agree with: every
// line tested with the regular expression on its own.
func naiveMatches(re *regexp.Regexp, data []byte) []int {
	var out []int
	lines := bytes.SplitAfter(data, []byte{'\n'})
	for i, l := range lines {
		if len(l) == 0 {
			continue
		}
		if re.Match(bytes.TrimSuffix(l, []byte{'\n'})) {
			out = append(out, i+1)
		}
	}
	return out
}

// matcherLines lists the line numbers the line matcher finds.
func matcherLines(m *lineMatcher, data []byte) []int {
	var out []int
	for from := 0; from < len(data); {
		ls, le := m.next(data, from)
		if ls < 0 {
			break
		}
		out = append(out, bytes.Count(data[:ls], []byte{'\n'})+1)
		from = le + 1
	}
	return out
}

func TestLineMatcherAgreesWithRegexp(t *testing.T) {
	t.Parallel()
	text := "Kelvin \u212Aelvin kelvin\nSTATUS ſtatus status\nfoo\n\nbar foo\r\nTODO later\nnothing\nfixme FIXME\n" +
		"a\xffb\nDeadLine deadline\nend without newline foo"
	tests := []struct {
		pattern    string
		ignoreCase bool
	}{
		{"kelvin", true},
		{"status", true},
		{"foo", false},
		{"foo$", false},
		{"^foo", false},
		{"^$", false},
		{"TODO|FIXME", false},
		{"todo|fixme", true},
		{"deadline", true},
		{"a.b", false},
		{"\ufffd", false},
		{"newline foo", false},
		{`\bfoo\b`, false},
		{"(?s)foo.bar", false},
		{"o\nb", false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q/%v", tc.pattern, tc.ignoreCase), func(t *testing.T) {
			t.Parallel()
			m, err := newLineMatcher(tc.pattern, false, tc.ignoreCase)
			if err != nil {
				t.Fatal(err)
			}
			got := matcherLines(m, []byte(text))
			want := naiveMatches(m.re, []byte(text))
			if !slices.Equal(got, want) {
				t.Errorf("lines %v, want %v", got, want)
			}
		})
	}
}

// FuzzLineMatcher checks that the literal prefilter never loses a line the
// regular expression matches.
func FuzzLineMatcher(f *testing.F) {
	f.Add("func main", false, "x\nfunc main()\n")
	f.Add("k.s", true, "\u212A s\nKxS\n")
	f.Add("a|bc", false, "bc\na\n\n")
	f.Fuzz(func(t *testing.T, pattern string, ignoreCase bool, text string) {
		m, err := newLineMatcher(pattern, false, ignoreCase)
		if err != nil {
			return
		}
		got := matcherLines(m, []byte(text))
		want := naiveMatches(m.re, []byte(text))
		if !slices.Equal(got, want) {
			t.Errorf("pattern %q on %q: lines %v, want %v", pattern, text, got, want)
		}
	})
}
