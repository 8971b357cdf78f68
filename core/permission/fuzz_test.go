package permission

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{
		"Bash", "bash", "Bash(*)", "Bash(go test:*)", "Bash(go test *)", "Bash(rm -rf*)",
		"Bash(npm run build)", "bash=go test", "bash = go test *", "Edit(docs/**)", "edit(src/*.go)",
		"Read(~/.ssh/**)", "write_file(docs/**)", "mcp__github__create_issue", "mcp__fs__write(a:*)",
		`Bash(echo ")")`, "Bash(echo (a))", "Bash(", "Bash()", "Bash(:*)", "Edit([)", "(x)", "a=b=c",
		"Bash(a\t*)", "Bash( :* :*)", "Bash(x\u00a0*)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			if r != (Rule{}) {
				t.Fatalf("ParseRule(%q) returned %+v with error %v", s, r, err)
			}
			return
		}
		text := r.String()
		again, err := ParseRule(text)
		if err != nil {
			t.Fatalf("ParseRule(%q).String() = %q does not parse: %v", s, text, err)
		}
		if again != r {
			t.Fatalf("ParseRule(%q) = %+v, but its String() %q parses to %+v", s, r, text, again)
		}
		if again.String() != text {
			t.Fatalf("String() not stable: %q then %q", text, again.String())
		}
	})
}

// bashSeeds are commands that probe the edges of the allow check.
var bashSeeds = []string{
	"go test", "go test ./...", "go test ./... && rm -rf tmp", "go test; rm -rf x", "go test\nrm -rf x",
	"go test $(rm -rf x)", "go test `rm -rf x`", "go test > /etc/passwd", "go test | sh", "go test &",
	"go test 2>&1", "go test >/dev/null", "PATH=/x go test", "'go' \"test\"", `go te\st`, "go {test,x}",
	"go test <<EOF\nx\nEOF", "bash -c 'go test'", "go test # x", "go test\\\n./...", "go testify",
	"(go test)", "go test ${x:-$(rm y)}", `go $'test'`, "go test >& x", "go test {fd}>&1", "go\ttest",
	"go test\r\nrm x", "go test; ", "! go test", "time go test", "go test <(x)", "go test $((1))",
	"ls{,x} -la", "ls* -la", "~/ls", "go{,} test", "echo{,} x",
}

// singleGoTest is the independent oracle for FuzzDecideBash. It uses the
// shell library's own expander rather than the package's helpers, and
// returns why cmd is not exactly one simple `go test` command, or "".
func singleGoTest(cmd string) string {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		return "does not parse: " + err.Error()
	}
	if len(f.Stmts) != 1 {
		return fmt.Sprintf("%d statements", len(f.Stmts))
	}
	st := f.Stmts[0]
	if st.Background || st.Negated || st.Coprocess || st.Disown {
		return "statement flags"
	}
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return fmt.Sprintf("not a simple command: %T", st.Cmd)
	}
	if len(ce.Assigns) > 0 {
		return "assignments"
	}
	bad := ""
	syntax.Walk(st, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ParamExp, *syntax.ArithmExp, *syntax.ExtGlob:
			bad = fmt.Sprintf("expansion %T", n)
		}
		return bad == ""
	})
	if bad != "" {
		return bad
	}
	cfg := &expand.Config{}
	for _, r := range st.Redirs {
		target, err := expand.Literal(cfg, r.Word)
		switch {
		case err != nil || r.Hdoc != nil:
			return "redirect with content"
		case (r.Op == syntax.DplOut || r.Op == syntax.DplIn) && target != "" && (strings.Trim(target, "0123456789") == "" || target == "-"):
		case target == "/dev/null":
		default:
			return "redirect to " + target
		}
	}
	fields, err := expand.Fields(cfg, ce.Args...)
	if err != nil {
		return "expand: " + err.Error()
	}
	if len(fields) < 2 || fields[0] != "go" || fields[1] != "test" {
		return fmt.Sprintf("words %q", fields)
	}
	return ""
}

// dynamicName is the independent oracle for the program-name properties.
// It uses the shell library's parser and expander rather than the
// package's helpers, and returns the first simple command, anywhere in cmd
// outside nested shell code, whose program name is not a static word, or
// "" when there is none. A command that does not parse counts as one.
func dynamicName(cmd string) string {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		return "does not parse"
	}
	found := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 || found != "" {
			return found == ""
		}
		w := ce.Args[0]
		var printed strings.Builder
		syntax.NewPrinter().Print(&printed, w)
		for i, part := range w.Parts {
			switch p := part.(type) {
			case *syntax.Lit:
				for j := 0; j < len(p.Value); j++ {
					switch c := p.Value[j]; {
					case c == '\\':
						j++
					case c == '*' || c == '?' || c == '[' && strings.Contains(cmd[int(p.Pos().Offset())+j:int(w.End().Offset())], "]"):
						found = printed.String()
					case c == '~' && i == 0 && j == 0:
						found = printed.String()
					}
				}
			case *syntax.SglQuoted:
			case *syntax.DblQuoted:
				if p.Dollar {
					found = printed.String()
				}
				for _, q := range p.Parts {
					if _, ok := q.(*syntax.Lit); !ok {
						found = printed.String()
					}
				}
			default:
				found = printed.String()
			}
		}
		if found == "" {
			// Only literal parts are left, which the expander handles
			// without an environment; more than one field is a brace
			// expansion.
			if fields, err := expand.Fields(&expand.Config{}, w); err != nil || len(fields) != 1 {
				found = printed.String()
			}
		}
		return found == ""
	})
	return found
}

func FuzzDecideBash(f *testing.F) {
	for _, s := range bashSeeds {
		f.Add(s)
	}
	for _, s := range bypasses {
		f.Add(s)
	}
	p, err := NewPolicy("ask", []string{"Bash(go test:*)"}, nil, nil, testRoot, testHome)
	if err != nil {
		f.Fatal(err)
	}
	allowOnly, err := NewPolicy("ask", []string{"Bash(go test:*)", "Bash(echo:*)", "Bash(rm:*)", "Bash(ls*)", "Bash(git status)"}, nil, nil, testRoot, testHome)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, command string) {
		args := cmd(command)
		// Judge the command the tool will run: JSON replaces invalid UTF-8.
		var sent struct{ Command string }
		if err := json.Unmarshal(args, &sent); err != nil {
			t.Fatal(err)
		}
		v := allowOnly.Explain(PostureAsk, "bash", false, args)
		if v.Source == FromFailure {
			t.Fatalf("Explain(%q) failed: %s", sent.Command, v.Reason())
		}
		if v.Decision == Allow && !strings.Contains(sent.Command, "\x00") {
			if name := dynamicName(sent.Command); name != "" {
				t.Fatalf("allowed %q by %s, but its program name %s is not static", sent.Command, v.Rule, name)
			}
		}
		if p.Decide("bash", false, args) != Allow {
			return
		}
		if why := singleGoTest(sent.Command); why != "" {
			t.Fatalf("allowed %q under Bash(go test:*), but it is not a single go test command: %s", sent.Command, why)
		}
	})
}

// hasLiteralRm reports whether the parsed command holds a simple command
// whose name is literally rm, using the shell library's expander.
func hasLiteralRm(cmd string) bool {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		return false
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 || found {
			return !found
		}
		for _, part := range ce.Args[0].Parts {
			switch p := part.(type) {
			case *syntax.Lit:
				if strings.ContainsAny(p.Value, "{}") {
					return true
				}
			case *syntax.SglQuoted:
			case *syntax.DblQuoted:
				for _, q := range p.Parts {
					if _, ok := q.(*syntax.Lit); !ok {
						return true
					}
				}
			default:
				return true
			}
		}
		if name, err := expand.Literal(&expand.Config{}, ce.Args[0]); err == nil {
			fields, err := expand.Fields(&expand.Config{}, ce.Args[0])
			found = name == "rm" || (err == nil && len(fields) == 1 && fields[0] == "rm")
		}
		return !found
	})
	return found
}

func FuzzDenyBash(f *testing.F) {
	for _, s := range bashSeeds {
		f.Add(s, "rm -rf x")
	}
	f.Add("echo $(", "rm x)")
	f.Add("bash -c '", "rm x'")
	p, err := NewPolicy("allow", []string{"Bash"}, nil, []string{"Bash(rm:*)"}, testRoot, testHome)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range bypasses {
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, prefix, suffix string) {
		for _, command := range []string{prefix, prefix + suffix, prefix + "\n" + suffix, prefix + " && " + suffix} {
			args := cmd(command)
			var sent struct{ Command string }
			if err := json.Unmarshal(args, &sent); err != nil {
				t.Fatal(err)
			}
			v := p.Explain(PostureAsk, "bash", false, args)
			if v.Source == FromFailure {
				t.Fatalf("Explain(%q) failed: %s", sent.Command, v.Reason())
			}
			if hasLiteralRm(sent.Command) && v.Decision != Deny {
				t.Fatalf("%q runs rm but Bash(rm:*) did not deny it", sent.Command)
			}
			if v.Decision != Deny && !strings.Contains(sent.Command, "\x00") {
				if name := dynamicName(sent.Command); name != "" {
					t.Fatalf("%q has the program name %s, which is not static, but Bash(rm:*) did not deny it", sent.Command, name)
				}
			}
		}
	})
}

func FuzzSuggest(f *testing.F) {
	for _, s := range bashSeeds {
		f.Add("bash", "command", s)
	}
	f.Add("write_file", "path", "docs/a[1].md")
	f.Add("move_file", "path", "a/b")
	f.Add("edit_file", "file_path", "~/x")
	f.Add("mcp__a__b", "path", "x")
	p := Policy{Mode: Ask, Root: testRoot, Home: testHome}
	f.Fuzz(func(t *testing.T, tool, key, value string) {
		args, err := json.Marshal(map[string]string{key: value, "destination": "dst/" + value})
		if err != nil {
			return
		}
		for _, s := range p.Suggest(tool, args) {
			q, err := NewPolicy("ask", []string{s}, nil, nil, testRoot, testHome)
			if err != nil {
				t.Fatalf("Suggest(%q, %s) gave %q, which does not parse: %v", tool, args, s, err)
			}
			if d := q.Decide(tool, false, args); d != Allow {
				t.Fatalf("Suggest(%q, %s) gave %q, which does not cover the call (%v)", tool, args, s, d)
			}
		}
	})
}

func FuzzAddAllowRule(f *testing.F) {
	for _, doc := range []string{
		"", "[permissions]\n", "[permissions]\nallow = []\n", "[permissions]\nallow = [\n  'a',\n]\n",
		"a = \"\"\"\n[permissions]\n\"\"\"\n", "permissions.mode = 'ask'\n", "[x]\ny = [1, [2, 3], {a = 1}]\n",
		"[permissions]\nallow = ['a' # c\n, 'b']\n", "t = 1979-05-27 07:32:00\n[permissions]\nmode='ask'\r\n",
	} {
		f.Add(doc, "Bash(go test:*)")
	}
	f.Fuzz(func(t *testing.T, doc, rule string) {
		r, err := ParseRule(rule)
		if err != nil {
			return
		}
		out, changed, err := addAllowRule([]byte(doc), r)
		if err != nil || !changed {
			return
		}
		var cfg map[string]any
		if _, err := toml.Decode(string(out), &cfg); err != nil {
			t.Fatalf("edited document does not parse: %v\n%s", err, out)
		}
		table, _ := cfg["permissions"].(map[string]any)
		allow, _ := table["allow"].([]any)
		if n := len(allow); n == 0 || allow[n-1] != r.String() {
			t.Fatalf("allow = %q, want %q last\n%s", allow, r, out)
		}
	})
}
