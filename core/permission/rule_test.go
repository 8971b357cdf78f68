package permission

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want string // canonical String()
		kind kind
		spec string
	}{
		{"bare family", "Bash", "Bash", kindAny, ""},
		{"lower-case family", "bash", "Bash", kindAny, ""},
		{"star is bare", "Bash(*)", "Bash", kindAny, ""},
		{"star is bare for edit", "Edit( * )", "Edit", kindAny, ""},
		{"word prefix", "Bash(go test:*)", "Bash(go test:*)", kindPrefix, "go test"},
		{"word prefix spaced", "Bash( go test :* )", "Bash(go test:*)", kindPrefix, "go test"},
		{"legacy space star", "Bash(go test *)", "Bash(go test:*)", kindPrefix, "go test"},
		{"legacy lower-case space star", "bash(npm run *)", "Bash(npm run:*)", kindPrefix, "npm run"},
		{"char prefix", "Bash(rm -rf*)", "Bash(rm -rf*)", kindStringPrefix, "rm -rf"},
		{"exact", "Bash(npm run build)", "Bash(npm run build)", kindExact, "npm run build"},
		{"exact with assignment", "Bash(FOO=1 make)", "Bash(FOO=1 make)", kindExact, "FOO=1 make"},
		{"exact with quoted paren", `Bash(echo ")")`, `Bash(echo ")")`, kindExact, `echo ")"`},
		{"exact with nested parens", "Bash(echo (a) (b))", "Bash(echo (a) (b))", kindExact, "echo (a) (b)"},
		{"surrounding space", "  Bash(make)\n", "Bash(make)", kindExact, "make"},
		{"legacy literal", "bash=go test", "Bash(go test)", kindExact, "go test"},
		{"legacy literal spaced", "bash = go test *", "Bash(go test:*)", kindPrefix, "go test"},
		{"legacy literal paren", "bash=echo (x)", "Bash(echo (x))", kindExact, "echo (x)"},
		{"edit glob", "Edit(docs/**)", "Edit(docs/**)", kindGlob, "docs/**"},
		{"legacy edit", "edit(src/*.go)", "Edit(src/*.go)", kindGlob, "src/*.go"},
		{"read glob", "Read(~/.ssh/**)", "Read(~/.ssh/**)", kindGlob, "~/.ssh/**"},
		{"legacy concrete writer", "write_file(docs/**)", "write_file(docs/**)", kindGlob, "docs/**"},
		{"legacy concrete writer bare", "move_file", "move_file", kindAny, ""},
		{"mcp bare", "mcp__github__create_issue", "mcp__github__create_issue", kindAny, ""},
		{"mcp with dash and dot", "mcp__my-srv.v2__do", "mcp__my-srv.v2__do", kindAny, ""},
		{"other tool literal", "mcp__fs__write(a:*)", "mcp__fs__write(a:*)", kindExact, "a:*"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := ParseRule(tc.in)
			if err != nil {
				t.Fatalf("ParseRule(%q): %v", tc.in, err)
			}
			if got := r.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if r.kind != tc.kind || r.spec != tc.spec {
				t.Errorf("kind, spec = %v, %q; want %v, %q", r.kind, r.spec, tc.kind, tc.spec)
			}
			again, err := ParseRule(r.String())
			if err != nil || again != r {
				t.Errorf("ParseRule(String()) = %+v, %v; want %+v", again, err, r)
			}
		})
	}
}

func TestParseRuleErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", errEmptyRule},
		{"blank", " \t", errEmptyRule},
		{"unclosed", "Bash(go test", errUnbalanced},
		{"text after close", "Bash(go test) x", errUnbalanced},
		{"close only", "Bash go test)", errUnbalanced},
		{"inner unbalanced", "Bash(echo (x)", errUnbalanced},
		{"inner extra close", "Bash(echo ))", errUnbalanced},
		{"legacy unbalanced", "bash=echo (", errUnbalanced},
		{"empty tool", "(go test)", errEmptyTool},
		{"empty legacy tool", "=go test", errEmptyTool},
		{"space in tool", "Ba sh", errBadToolName},
		{"space before paren", "Bash (ls)", errBadToolName},
		{"empty specifier", "Bash()", errEmptySpec},
		{"blank specifier", "Edit(  )", errEmptySpec},
		{"empty legacy specifier", "bash=", errEmptySpec},
		{"empty prefix", "Bash(:*)", errEmptyPrefix},
		{"bad glob", "Edit(src/[)", errBadGlob},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseRule(tc.in)
			if !errors.Is(err, tc.want) {
				t.Fatalf("ParseRule(%q) error = %v, want %v", tc.in, err, tc.want)
			}
			var re *RuleError
			if !errors.As(err, &re) || re.Rule != tc.in {
				t.Errorf("error %v is not a *RuleError for %q", err, tc.in)
			}
			if !strings.Contains(err.Error(), "permission rule") {
				t.Errorf("error %q does not say what failed", err)
			}
		})
	}
}

func TestZeroRuleMatchesNothing(t *testing.T) {
	t.Parallel()
	p := Policy{Mode: Ask, Deny: []Rule{{}}}
	for _, tool := range []string{"", "bash", "write_file", "mcp__x__y"} {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			if got := p.Decide(tool, false, cmd("rm -rf /")); got != Ask {
				t.Errorf("zero rule decided %v for %q", got, tool)
			}
		})
	}
}
