package command

import (
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		input, name, args string
		ok                bool
	}{
		{"/git:commit fix it", "git:commit", "fix it", true},
		{"/help", "help", "", true},
		{"/review   a  b  ", "review", "a  b", true},
		{"  /help", "help", "", true},
		{"/x\tand\nmore", "x", "and\nmore", true},
		{"/mcp__srv__p arg", "mcp__srv__p", "arg", true},
		{"/a-b_c:d", "a-b_c:d", "", true},
		{"/", "", "", false},
		{"//x", "", "", false},
		{"/ x", "", "", false},
		{"/usr/bin is a dir", "", "", false},
		{"/etc.", "", "", false},
		{"/héllo", "", "", false},
		{"hello /help", "", "", false},
		{"", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.input, func(t *testing.T) {
			t.Parallel()
			name, args, ok := Split(tc.input)
			if name != tc.name || args != tc.args || ok != tc.ok {
				t.Fatalf("Split(%q) = %q, %q, %v; want %q, %q, %v", tc.input, name, args, ok, tc.name, tc.args, tc.ok)
			}
		})
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, args, want string
	}{
		{"all arguments", "Fix: $ARGUMENTS.", "the   bug\tnow", "Fix: the bug now."},
		{"positional", "$2 then $1, $3 missing", "a b", "b then a,  missing"},
		{"multi digit", "$10|$1", "1 2 3 4 5 6 7 8 9 ten", "ten|1"},
		{"literal dollar", "cost $$5 and $$ARGUMENTS", "x", "cost $5 and $ARGUMENTS\n\nx"},
		{"other dollars stay", "$HOME $0 $ at end $", "", "$HOME $0 $ at end $"},
		{"no placeholder appends", "Review the diff.", "focus on tests", "Review the diff.\n\nfocus on tests"},
		{"no placeholder, no args", "Review the diff.", "  ", "Review the diff."},
		{"empty args", "Fix $ARGUMENTS!", "", "Fix !"},
		{"huge index", "[$99999999999999999999]", "a", "[]"},
		{"arguments keep their dollars", "say $ARGUMENTS", "$1 $$", "say $1 $$"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := (Command{Body: tc.body}).Render(tc.args); got != tc.want {
				t.Fatalf("Render(%q) of %q = %q, want %q", tc.args, tc.body, got, tc.want)
			}
		})
	}
}

func TestBuiltins(t *testing.T) {
	t.Parallel()
	var names []string
	for _, b := range Builtins {
		names = append(names, b.Name)
		if b.Description == "" {
			t.Errorf("/%s has no description", b.Name)
		}
		if n, _, ok := Split("/" + b.Name); !ok || n != b.Name {
			t.Errorf("/%s does not split as a command", b.Name)
		}
	}
	want := []string{"clear", "compact", "effort", "goal", "help", "init", "mcp", "model", "new", "plan", "posture", "quit", "resume", "status", "tasks"}
	if !slices.Equal(names, want) {
		t.Fatalf("Builtins = %q, want %q", names, want)
	}
	if !IsBuiltin("goal") || IsBuiltin("git:commit") {
		t.Fatal("IsBuiltin")
	}
	for _, b := range Builtins {
		if b.Name == "goal" && !strings.Contains(b.Args, "--research") {
			t.Fatalf("goal args %q", b.Args)
		}
	}
}
