package shell

import (
	"slices"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// TestLiteralAgreesWithExpand checks the package's own quote removal
// against the shell library's expander on words both consider literal.
func TestLiteralAgreesWithExpand(t *testing.T) {
	t.Parallel()
	words := []string{
		`plain`, `'single quoted'`, `"double quoted"`, `te\st`, `a\ b`, `"a\"b"`,
		`"\$HOME"`, `"a\\b"`, `"a\qb"`, `'a\b'`, `"it's"`, `x"y"'z'`, `~/x`, `*.go`,
		"a\\\nb", `""`, `''`, `-run=Test\|X`,
	}
	for _, src := range words {
		t.Run(src, func(t *testing.T) {
			t.Parallel()
			f, err := parseShell("cmd " + src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			w := f.Stmts[0].Cmd.(*syntax.CallExpr).Args[1]
			got, ok := literal(w)
			if !ok {
				t.Fatalf("literal(%s) reported non-literal", src)
			}
			want, err := expand.Literal(&expand.Config{}, w)
			if err != nil {
				t.Fatal(err)
			}
			fields, err := expand.Fields(&expand.Config{}, w)
			if err != nil {
				t.Fatal(err)
			}
			// expand.Literal keeps unquoted backslashes; Fields removes
			// them but drops empty words. Accept whichever applies.
			if got != want && !(len(fields) == 1 && got == fields[0]) {
				t.Errorf("literal(%s) = %q; expand gives %q / %q", src, got, want, fields)
			}
		})
	}
}

func TestLiteralRejectsExpansions(t *testing.T) {
	t.Parallel()
	for _, src := range []string{`$x`, `${x}`, `"$x"`, "`x`", `$(x)`, `"$(x)"`, `$((1))`, `$'x'`, `$"x"`, `<(x)`, `@(a|b)`} {
		t.Run(src, func(t *testing.T) {
			t.Parallel()
			f, err := parseShell("cmd " + src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			w := f.Stmts[0].Cmd.(*syntax.CallExpr).Args[1]
			if v, ok := literal(w); ok {
				t.Errorf("literal(%s) = %q, want non-literal", src, v)
			}
		})
	}
}

func TestPlainWords(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want []string // nil: not a plain simple command
	}{
		{"go test ./...", []string{"go", "test", "./..."}},
		{"go test 2>&1", []string{"go", "test"}},
		{"go test 2>/dev/null", []string{"go", "test"}},
		{"go test >&-", []string{"go", "test"}},
		{"go test > x", nil},
		{"go test 2>&1 | cat", nil},
		{"go test >&x", nil},
		{"go test {fd}>&1", nil},
		{"a=1 go test", nil},
		{"a=1", nil},
		{"", nil},
		{"# comment only", nil},
		{"go test; ", nil},
		{"go test & ", nil},
		{"[[ -f x ]]", nil},
		{"declare -x A=1", nil},
		{"x() { :; }", nil},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			f, err := parseShell(tc.src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if got := plainWords(f); !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("plainWords(%q) = %q, want %q", tc.src, got, tc.want)
			}
		})
	}
}

func TestCommandsFound(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want string // a command text that must be among those found
	}{
		{"a && b c", "b c"},
		{"a | b c", "b c"},
		{"echo $(b c)", "b c"},
		{"sudo -n b c", "b c"},
		{"nohup nice -n 5 b c", "b c"},
		{"/usr/bin/b c", "b c"},
		{"b.exe c", "b c"},
		{`bash -c "b c"`, "b c"},
		{`sh -c 'sh -c "b c"'`, "b c"},
		{`find . -exec b c {} +`, "b c {}"},
		{`find . -execdir sudo b c \;`, "b c"},
		{"eval 'b c'", "b c"},
		{"a && 'b c", "b c"},
		{"a 'b c", "b c"},
		{"a; b $X", "b $X"},
		{"r${X}m -rf /", "rm -rf /"},
		{"$EMPTY rm -rf /", "rm -rf /"},
		{"${X:-rm} -rf /", "rm -rf /"},
		{`"${X:-r}m" x`, "rm x"},
		{`$'\x72m' -rf /`, "rm -rf /"},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			sc := Analyze(tc.src)
			var texts []string
			for _, c := range sc.commands {
				texts = append(texts, c.text())
			}
			if !slices.Contains(texts, tc.want) {
				t.Errorf("commands of %q = %q, missing %q", tc.src, texts, tc.want)
			}
		})
	}
}

func TestAnalyzeBounded(t *testing.T) {
	t.Parallel()
	// Deeply nested shells and long wrapper chains must finish quickly
	// and still expose the innermost command.
	inner := "rm -rf x"
	for range 12 {
		q, err := syntax.Quote(inner, syntax.LangBash)
		if err != nil {
			t.Fatal(err)
		}
		inner = "bash -c " + q
	}
	long := strings.Repeat("sudo ", 2000) + "rm -rf x"
	for _, src := range []string{inner, long} {
		sc := Analyze(src)
		found := false
		for _, c := range sc.commands {
			if c.name == "rm" {
				found = true
			}
		}
		if !found {
			t.Errorf("no rm command found in %.60q...", src)
		}
	}
}

// text is the command as hasTextPrefix sees it.
func (s simpleCommand) text() string {
	if len(s.args) == 0 {
		return s.name
	}
	return s.name + " " + strings.Join(s.args, " ")
}

func TestHasTextPrefix(t *testing.T) {
	t.Parallel()
	cmds := []simpleCommand{
		{name: "rm"}, {name: "rm", args: []string{"-rf", "/"}}, {name: "rmdir", args: []string{"x"}},
		{name: "a", args: []string{"", "b"}}, {name: "git", args: []string{"st", "atus"}}, {name: ""},
	}
	prefixes := []string{"", "r", "rm", "rm ", "rm -", "rm -rf", "rm -rf /", "rm -rf /x", "rmd", "a  b", "a ", "git st", "git sta", "git st a"}
	for _, c := range cmds {
		for _, p := range prefixes {
			want := strings.HasPrefix(c.text(), p)
			if got := c.hasTextPrefix(p); got != want {
				t.Errorf("%q.hasTextPrefix(%q) = %v, want %v", c.text(), p, got, want)
			}
		}
	}
}

func TestShellWorkBudget(t *testing.T) {
	t.Parallel()
	// Every tail of a wrapper is re-parsed as eval code: without a budget
	// this is quadratic in the number of words.
	huge := "sudo " + strings.Repeat("eval ", 50000) + "true"
	start := time.Now()
	sc := Analyze(huge)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("analysis took %v", d)
	}
	if !sc.overflow {
		t.Fatal("budget not exhausted; the test no longer exercises it")
	}
	if !sc.Touches(WordPrefix, "rm") {
		t.Error("an over-budget command does not touch Bash(rm:*)")
	}
}

// TestZeroMatchMatchesNothing checks that a Match outside the constants,
// which the parent passes for rule kinds Bash rules do not have, neither
// allows nor touches a command that was fully searched.
func TestZeroMatchMatchesNothing(t *testing.T) {
	t.Parallel()
	sc := Analyze("ls")
	if sc.Allows(0, "ls") || sc.Touches(0, "ls") {
		t.Error("the zero Match matched ls")
	}
}
