package shell

import (
	"errors"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// TestStaticWord checks the word classes directly, against the shell
// library's expander where both apply.
func TestStaticWord(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src    string
		want   string
		static bool
	}{
		{`rm`, "rm", true},
		{`'r'"m"`, "rm", true},
		{`r\m`, "rm", true},
		{`$'\x72m'`, "rm", true},
		{`/bin/r\?`, "/bin/r?", true},
		{`'/bin/r?'`, "/bin/r?", true},
		{`[`, "[", true},
		{`{}`, "{}", true},
		{`{a}`, "{a}", true},
		{`a~b`, "a~b", true},
		{`/bin/r?`, "", false},
		{`r*`, "", false},
		{`r[m]`, "", false},
		{`r["m"]`, "", false},
		{`{r,m}`, "", false},
		{`{1..3}`, "", false},
		{`a{b,}`, "", false},
		{`~/x`, "", false},
		{`~`, "", false},
		{`$X`, "", false},
		{`"$X"`, "", false},
		{`$"rm"`, "", false},
		{`@(rm)`, "", false},
		{`$((1))`, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			f, err := parseShell("cmd " + tc.src)
			if err != nil {
				t.Fatal(err)
			}
			w := f.Stmts[0].Cmd.(*syntax.CallExpr).Args[1]
			got, why := staticWord(w)
			if (why == "") != tc.static || got != tc.want {
				t.Fatalf("staticWord(%s) = %q, %q; want %q, static %v", tc.src, got, why, tc.want, tc.static)
			}
			if !tc.static {
				return
			}
			fields, err := expand.Fields(&expand.Config{}, w)
			if err != nil || len(fields) != 1 || fields[0] != got {
				t.Errorf("expander gives %q, %v; staticWord %q", fields, err, got)
			}
		})
	}
}

// TestUndecodableQuoteIsUndecidable makes the expander fail and panic on
// $'...' and checks that the command is then taken as undecidable instead
// of being read as written. It swaps a package variable, so it does not run
// in parallel.
func TestUndecodableQuoteIsUndecidable(t *testing.T) {
	saved := expandLiteral
	t.Cleanup(func() { expandLiteral = saved })
	failures := map[string]func(*expand.Config, *syntax.Word) (string, error){
		"error": func(*expand.Config, *syntax.Word) (string, error) { return "", errors.New("boom") },
		"panic": func(*expand.Config, *syntax.Word) (string, error) { panic("boom") },
	}
	for name, fail := range failures {
		expandLiteral = fail
		for _, command := range []string{`rm $'\x2drf' x`, `$'\x72m' -rf x`} {
			if why := Analyze(command).Dynamic(); !strings.Contains(why, "cannot be decoded") {
				t.Errorf("%s: %q judged %q, want undecidable saying it cannot be decoded", name, command, why)
			}
		}
	}
	expandLiteral = saved
	for _, command := range []string{`rm $'\x2drf' x`, `$'\x72m' -rf x`} {
		sc := Analyze(command)
		if why := sc.Dynamic(); why != "" || !sc.Touches(TextPrefix, "rm -rf") {
			t.Errorf("with a working expander %q judged %q and touches Bash(rm -rf*) %v, want a plain match", command, why, sc.Touches(TextPrefix, "rm -rf"))
		}
	}
}

// TestProgramCheckBounded checks that wrappers whose options might take a
// value, and so each offer two readings, are checked once per word rather
// than once per reading: such a chain is ordinary enough to be judged, not
// given up on as too large.
func TestProgramCheckBounded(t *testing.T) {
	t.Parallel()
	for _, command := range []string{
		strings.Repeat("sudo --x ", 40) + "ls",
		strings.Repeat("nice --x sudo ", 30) + "ls",
		strings.Repeat("strace -x ", 40) + "ls",
		strings.Repeat("timeout --x ", 40) + "ls",
	} {
		if sc := Analyze(command); sc.dynamic != "" {
			t.Errorf("%.30q...: %s", command, sc.dynamic)
		}
	}
	if sc := Analyze(strings.Repeat("sudo --x ", 40) + "$X"); sc.dynamic == "" {
		t.Error("the program at the end of a wrapper chain was not checked")
	}
}
