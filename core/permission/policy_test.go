package permission

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const (
	testRoot = "/work/proj"
	testHome = "/home/u"
)

// argsJSON builds tool arguments from key/value pairs.
func argsJSON(kv ...string) json.RawMessage {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func cmd(c string) json.RawMessage { return argsJSON("command", c) }

type decideCase struct {
	name     string
	mode     string
	allow    []string
	ask      []string
	deny     []string
	posture  Posture
	tool     string
	readOnly bool
	args     json.RawMessage
	want     Decision
	wantRule string // the rule the verdict names, when one decided
}

func runDecideCases(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := NewPolicy(tc.mode, tc.allow, tc.ask, tc.deny, testRoot, testHome)
			if err != nil {
				t.Fatalf("NewPolicy: %v", err)
			}
			posture := tc.posture
			if posture == "" {
				posture = PostureAsk
			}
			v := p.Explain(posture, tc.tool, tc.readOnly, tc.args)
			if v.Decision != tc.want {
				t.Errorf("Explain(%s, %s, %s) = %v (%s), want %v", posture, tc.tool, tc.args, v.Decision, v.Reason(), tc.want)
			}
			if tc.wantRule != "" && v.Rule.String() != tc.wantRule {
				t.Errorf("verdict rule = %q, want %q (%s)", v.Rule, tc.wantRule, v.Reason())
			}
			if got := p.DecideWith(posture, tc.tool, tc.readOnly, tc.args); got != v.Decision {
				t.Errorf("DecideWith = %v, Explain = %v", got, v.Decision)
			}
			if posture == PostureAsk {
				if got := p.Decide(tc.tool, tc.readOnly, tc.args); got != v.Decision {
					t.Errorf("Decide = %v, Explain = %v", got, v.Decision)
				}
			}
		})
	}
}

func TestDecideFallback(t *testing.T) {
	t.Parallel()
	runDecideCases(t, []decideCase{
		{name: "writer asks by default", tool: "bash", args: cmd("ls"), want: Ask},
		{name: "mode allow", mode: "allow", tool: "bash", args: cmd("ls"), want: Allow},
		{name: "mode deny", mode: "deny", tool: "write_file", args: argsJSON("path", "a"), want: Deny},
		{name: "mode is case-insensitive", mode: "Allow", tool: "bash", args: cmd("ls"), want: Allow},
		{name: "reader allowed", tool: "grep", readOnly: true, args: argsJSON("pattern", "x"), want: Allow},
		{name: "reader allowed under mode deny", mode: "deny", tool: "read_file", readOnly: true, args: argsJSON("path", "a"), want: Allow},
		{name: "bash is a writer even if flagged read-only", tool: "bash", readOnly: true, args: cmd("ls"), want: Ask},
		{name: "edit tool is a writer even if flagged read-only", tool: "write_file", readOnly: true, args: argsJSON("path", "a"), want: Ask},
		{name: "read-only mcp tool allowed", tool: "mcp__gh__list", readOnly: true, want: Allow},
		{name: "mcp writer asks", tool: "mcp__gh__create", want: Ask},
		{name: "no args at all", tool: "bash", want: Ask},
	})
}

func TestDecideBashAllow(t *testing.T) {
	t.Parallel()
	goTest := []string{"Bash(go test:*)"}
	gitLegacy := []string{"Bash(git *)"}
	gitPrefix := []string{"Bash(git:*)"}
	runDecideCases(t, []decideCase{
		// Word prefix.
		{name: "prefix bare command", allow: goTest, tool: "bash", args: cmd("go test"), want: Allow, wantRule: "Bash(go test:*)"},
		{name: "prefix with args", allow: goTest, tool: "bash", args: cmd("go test ./... -run TestX"), want: Allow},
		{name: "prefix extra spaces", allow: goTest, tool: "bash", args: cmd("  go   test\t./...  "), want: Allow},
		{name: "prefix quoted words", allow: goTest, tool: "bash", args: cmd(`'go' "test" ./...`), want: Allow},
		{name: "prefix escaped letters", allow: goTest, tool: "bash", args: cmd(`go te\st`), want: Allow},
		{name: "prefix line continuation", allow: goTest, tool: "bash", args: cmd("go test \\\n ./..."), want: Allow},
		{name: "prefix is word-wise", allow: goTest, tool: "bash", args: cmd("go testify"), want: Ask},
		{name: "prefix needs every word", allow: goTest, tool: "bash", args: cmd("go"), want: Ask},
		{name: "prefix other subcommand", allow: goTest, tool: "bash", args: cmd("go build"), want: Ask},
		{name: "prefix 2>&1 ok", allow: goTest, tool: "bash", args: cmd("go test ./... 2>&1"), want: Allow},
		{name: "prefix /dev/null ok", allow: goTest, tool: "bash", args: cmd("go test >/dev/null 2>&1 </dev/null"), want: Allow},
		{name: "prefix comment ok", allow: goTest, tool: "bash", args: cmd("go test ./... # && rm -rf x"), want: Allow},
		{name: "and-chain", allow: goTest, tool: "bash", args: cmd("go test ./... && rm -rf tmp"), want: Ask},
		{name: "or-chain", allow: goTest, tool: "bash", args: cmd("go test || rm -rf tmp"), want: Ask},
		{name: "semicolon", allow: goTest, tool: "bash", args: cmd("go test; rm -rf x"), want: Ask},
		{name: "trailing semicolon", allow: goTest, tool: "bash", args: cmd("go test;"), want: Ask},
		{name: "newline injection", allow: goTest, tool: "bash", args: cmd("go test\nrm -rf x"), want: Ask},
		{name: "carriage return newline injection", allow: goTest, tool: "bash", args: cmd("go test\r\nrm -rf x"), want: Ask},
		{name: "command substitution", allow: goTest, tool: "bash", args: cmd("go test $(rm -rf x)"), want: Ask},
		{name: "substitution in double quotes", allow: goTest, tool: "bash", args: cmd(`go test "$(rm -rf x)"`), want: Ask},
		{name: "backticks", allow: goTest, tool: "bash", args: cmd("go test `rm -rf x`"), want: Ask},
		{name: "process substitution", allow: goTest, tool: "bash", args: cmd("go test <(rm -rf x)"), want: Ask},
		{name: "parameter expansion", allow: goTest, tool: "bash", args: cmd("go test $PKG"), want: Ask},
		{name: "parameter default with substitution", allow: goTest, tool: "bash", args: cmd("go test ${X:-$(rm -rf x)}"), want: Ask},
		{name: "arithmetic", allow: goTest, tool: "bash", args: cmd("go test $((1+1))"), want: Ask},
		{name: "ansi-c quoting", allow: goTest, tool: "bash", args: cmd(`go $'test'`), want: Ask},
		{name: "pipe", allow: goTest, tool: "bash", args: cmd("go test | sh"), want: Ask},
		{name: "background", allow: goTest, tool: "bash", args: cmd("go test &"), want: Ask},
		{name: "redirect to file", allow: goTest, tool: "bash", args: cmd("go test > out.txt"), want: Ask},
		{name: "append to file", allow: goTest, tool: "bash", args: cmd("go test >> ~/.bashrc"), want: Ask},
		{name: "redirect both to file", allow: goTest, tool: "bash", args: cmd("go test &> out.txt"), want: Ask},
		{name: "dup to named file", allow: goTest, tool: "bash", args: cmd("go test >& out.txt"), want: Ask},
		{name: "read from file", allow: goTest, tool: "bash", args: cmd("go test < in.txt"), want: Ask},
		{name: "here-doc", allow: goTest, tool: "bash", args: cmd("go test <<EOF\nx\nEOF"), want: Ask},
		{name: "here-string", allow: goTest, tool: "bash", args: cmd("go test <<< x"), want: Ask},
		{name: "assignment prefix", allow: goTest, tool: "bash", args: cmd("GOFLAGS=-toolexec=evil go test"), want: Ask},
		{name: "PATH override", allow: goTest, tool: "bash", args: cmd("PATH=/tmp/evil go test"), want: Ask},
		{name: "subshell", allow: goTest, tool: "bash", args: cmd("(go test)"), want: Ask},
		{name: "block", allow: goTest, tool: "bash", args: cmd("{ go test; }"), want: Ask},
		{name: "negation", allow: goTest, tool: "bash", args: cmd("! go test"), want: Ask},
		{name: "time keyword", allow: goTest, tool: "bash", args: cmd("time go test"), want: Ask},
		{name: "unparsable", allow: goTest, tool: "bash", args: cmd("go test 'unterminated"), want: Ask},
		{name: "bash -c wrapper", allow: goTest, tool: "bash", args: cmd(`bash -c "go test"`), want: Ask},
		{name: "brace expansion of the subcommand", allow: goTest, tool: "bash", args: cmd("go {test,x}"), want: Ask},

		// Reported against other agents: a git allow must not admit these.
		{name: "git legacy status", allow: gitLegacy, tool: "bash", args: cmd("git status"), want: Allow, wantRule: "Bash(git:*)"},
		{name: "git legacy substitution", allow: gitLegacy, tool: "bash", args: cmd("git log $(rm -rf x)"), want: Ask},
		{name: "git legacy semicolon", allow: gitLegacy, tool: "bash", args: cmd("git status; rm -rf x"), want: Ask},
		{name: "git legacy redirect", allow: gitLegacy, tool: "bash", args: cmd("git log > /etc/passwd"), want: Ask},
		{name: "git legacy pipe to shell", allow: gitLegacy, tool: "bash", args: cmd("git log | sh"), want: Ask},
		{name: "git legacy backticks", allow: gitLegacy, tool: "bash", args: cmd("git log `rm -rf x`"), want: Ask},
		{name: "git legacy newline", allow: gitLegacy, tool: "bash", args: cmd("git status\nrm -rf x"), want: Ask},
		{name: "git prefix status", allow: gitPrefix, tool: "bash", args: cmd("git status --short"), want: Allow},
		{name: "git prefix substitution", allow: gitPrefix, tool: "bash", args: cmd("git log $(rm -rf x)"), want: Ask},
		{name: "git prefix semicolon", allow: gitPrefix, tool: "bash", args: cmd("git status; rm -rf x"), want: Ask},
		{name: "git prefix redirect", allow: gitPrefix, tool: "bash", args: cmd("git log > /etc/passwd"), want: Ask},
		{name: "git prefix pipe to shell", allow: gitPrefix, tool: "bash", args: cmd("git log | sh"), want: Ask},
		{name: "git prefix not gitk", allow: gitPrefix, tool: "bash", args: cmd("gitk"), want: Ask},

		// Legacy spellings.
		{name: "lower-case family", allow: []string{"bash(git:*)"}, tool: "bash", args: cmd("git status"), want: Allow, wantRule: "Bash(git:*)"},
		{name: "legacy literal is exact", allow: []string{"bash=go test"}, tool: "bash", args: cmd("go test"), want: Allow, wantRule: "Bash(go test)"},
		{name: "legacy literal exact only", allow: []string{"bash=go test"}, tool: "bash", args: cmd("go test ./..."), want: Ask},
		{name: "legacy literal prefix", allow: []string{"bash=go test *"}, tool: "bash", args: cmd("go test ./..."), want: Allow, wantRule: "Bash(go test:*)"},

		// Exact commands.
		{name: "exact", allow: []string{"Bash(make)"}, tool: "bash", args: cmd("make"), want: Allow},
		{name: "exact with spacing and quotes", allow: []string{"Bash(git commit -m 'a b')"}, tool: "bash", args: cmd(`git  commit -m "a b"`), want: Allow},
		{name: "exact not longer", allow: []string{"Bash(make)"}, tool: "bash", args: cmd("make all"), want: Ask},
		{name: "exact not chained", allow: []string{"Bash(make)"}, tool: "bash", args: cmd("make && rm -rf x"), want: Ask},
		{name: "exact compound text", allow: []string{"Bash(cd web && npm test)"}, tool: "bash", args: cmd("cd web && npm test"), want: Allow},
		{name: "exact compound plus more", allow: []string{"Bash(cd web && npm test)"}, tool: "bash", args: cmd("cd web && npm test; rm -rf /"), want: Ask},
		{name: "exact wrapper with identical words", allow: []string{`Bash(bash -c "make")`}, tool: "bash", args: cmd(`bash -c 'make'`), want: Allow},
		{name: "exact wrapper different code", allow: []string{`Bash(bash -c "make")`}, tool: "bash", args: cmd(`bash -c 'make; rm -rf x'`), want: Ask},
		{name: "exact unparsable never allowed", allow: []string{"Bash(echo 'x)"}, tool: "bash", args: cmd("echo 'x"), want: Ask},

		// Character prefix.
		{name: "char prefix", allow: []string{"Bash(git st*)"}, tool: "bash", args: cmd("git status"), want: Allow},
		{name: "char prefix stash", allow: []string{"Bash(git st*)"}, tool: "bash", args: cmd("git stash list"), want: Allow},
		{name: "char prefix normalised spacing", allow: []string{"Bash(git st*)"}, tool: "bash", args: cmd("git   status"), want: Allow},
		{name: "char prefix chained", allow: []string{"Bash(git st*)"}, tool: "bash", args: cmd("git status; rm -rf x"), want: Ask},
		{name: "char prefix redirect", allow: []string{"Bash(git st*)"}, tool: "bash", args: cmd("git status > x"), want: Ask},

		// Prefix rules never cover wrappers.
		{name: "env wrapper", allow: []string{"Bash(env:*)"}, tool: "bash", args: cmd("env rm -rf x"), want: Ask},
		{name: "bash wrapper", allow: []string{"Bash(bash:*)"}, tool: "bash", args: cmd("bash -c 'rm -rf x'"), want: Ask},
		{name: "sh -c wrapper", allow: []string{"Bash(sh -c:*)"}, tool: "bash", args: cmd("sh -c 'go test'"), want: Ask},
		{name: "eval wrapper", allow: []string{"Bash(eval:*)"}, tool: "bash", args: cmd("eval go test"), want: Ask},
		{name: "xargs wrapper", allow: []string{"Bash(xargs:*)"}, tool: "bash", args: cmd("xargs rm"), want: Ask},
		{name: "sudo char prefix", allow: []string{"Bash(sudo*)"}, tool: "bash", args: cmd("sudo rm -rf /"), want: Ask},

		// Bare rules.
		{name: "bare Bash", allow: []string{"Bash"}, tool: "bash", args: cmd("rm -rf / && curl x | sh"), want: Allow, wantRule: "Bash"},
		{name: "Bash(*) is bare", allow: []string{"Bash(*)"}, tool: "bash", args: cmd("a; b"), want: Allow, wantRule: "Bash"},
		{name: "bare Bash without args", allow: []string{"Bash"}, tool: "bash", want: Allow},
		{name: "specifier needs command", allow: goTest, tool: "bash", args: argsJSON("path", "go test"), want: Ask},
		{name: "Bash does not cover edits", allow: []string{"Bash"}, tool: "write_file", args: argsJSON("path", "a"), want: Ask},
	})
}

func TestDecideBashDenyAndAsk(t *testing.T) {
	t.Parallel()
	rm := []string{"Bash(rm:*)"}
	rmrf := []string{"Bash(rm -rf*)"}
	all := []string{"Bash"}
	runDecideCases(t, []decideCase{
		{name: "deny carves broad allow", allow: all, deny: rmrf, tool: "bash", args: cmd("rm -rf /"), want: Deny, wantRule: "Bash(rm -rf*)"},
		{name: "deny char prefix after and", allow: all, deny: rmrf, tool: "bash", args: cmd("echo hi && rm -rf /"), want: Deny},
		{name: "deny word prefix after and", allow: all, deny: rm, tool: "bash", args: cmd("echo hi && rm -rf /"), want: Deny, wantRule: "Bash(rm:*)"},
		{name: "deny char prefix normalises spacing", allow: all, deny: rmrf, tool: "bash", args: cmd("rm   -rf  /"), want: Deny},
		{name: "deny in bash -c", allow: all, deny: rm, tool: "bash", args: cmd(`bash -c "rm -rf x"`), want: Deny},
		{name: "deny char prefix in bash -c", allow: all, deny: rmrf, tool: "bash", args: cmd(`bash -lc "rm -rf x"`), want: Deny},
		{name: "deny in sh -c list", allow: all, deny: rm, tool: "bash", args: cmd(`sh -c 'echo a; rm -rf x'`), want: Deny},
		{name: "deny in nested shells", allow: all, deny: rm, tool: "bash", args: cmd(`bash -c "sh -c 'rm -rf x'"`), want: Deny},
		{name: "deny in substitution", allow: all, deny: rm, tool: "bash", args: cmd("echo $(rm -rf x)"), want: Deny},
		{name: "deny in backticks", allow: all, deny: rm, tool: "bash", args: cmd("echo `rm -rf x`"), want: Deny},
		{name: "deny in process substitution", allow: all, deny: rm, tool: "bash", args: cmd("cat <(rm -rf x)"), want: Deny},
		{name: "deny in subshell", allow: all, deny: rm, tool: "bash", args: cmd("(cd /; rm -rf x)"), want: Deny},
		{name: "deny in pipeline", allow: all, deny: rm, tool: "bash", args: cmd("ls | rm -rf x"), want: Deny},
		{name: "deny in function body", allow: all, deny: rm, tool: "bash", args: cmd("f() { rm -rf x; }; f"), want: Deny},
		{name: "deny in if", allow: all, deny: rm, tool: "bash", args: cmd("if true; then rm -rf x; fi"), want: Deny},
		{name: "deny in assignment substitution", allow: all, deny: rm, tool: "bash", args: cmd("x=$(rm -rf y)"), want: Deny},
		{name: "deny in parameter default", allow: all, deny: rm, tool: "bash", args: cmd("echo ${X:-$(rm -rf y)}"), want: Deny},
		{name: "deny through xargs", allow: all, deny: rm, tool: "bash", args: cmd("ls | xargs rm -rf"), want: Deny},
		{name: "deny through sudo with options", allow: all, deny: rmrf, tool: "bash", args: cmd("sudo -u root rm -rf /"), want: Deny},
		{name: "deny through env", allow: all, deny: rm, tool: "bash", args: cmd("env -i FOO=1 rm -rf x"), want: Deny},
		{name: "deny through timeout", allow: all, deny: rm, tool: "bash", args: cmd("timeout 5 rm -rf x"), want: Deny},
		{name: "deny absolute path", allow: all, deny: rm, tool: "bash", args: cmd("/bin/rm -rf x"), want: Deny},
		{name: "deny quoted name", allow: all, deny: rm, tool: "bash", args: cmd("'rm' -rf x"), want: Deny},
		{name: "deny escaped name", allow: all, deny: rm, tool: "bash", args: cmd(`r\m -rf x`), want: Deny},
		{name: "deny find -exec", allow: all, deny: rm, tool: "bash", args: cmd(`find . -name '*.o' -exec rm {} \;`), want: Deny},
		{name: "deny eval string", allow: all, deny: rmrf, tool: "bash", args: cmd(`eval "rm -rf x"`), want: Deny},
		{name: "deny eval words", allow: all, deny: rmrf, tool: "bash", args: cmd(`eval rm -rf x`), want: Deny},
		{name: "deny deep eval chain", allow: all, deny: rm, tool: "bash", args: cmd("eval eval eval eval eval eval eval rm x"), want: Deny},
		{name: "deny echo piped to shell", allow: all, deny: rm, tool: "bash", args: cmd(`echo "rm -rf x" | sh`), want: Deny},
		{name: "deny here-doc to shell", allow: all, deny: rm, tool: "bash", args: cmd("bash <<EOF\nrm -rf x\nEOF"), want: Deny},
		{name: "deny dynamic argument", allow: all, deny: rmrf, tool: "bash", args: cmd(`rm -rf "$HOME"`), want: Deny},
		{name: "deny with NUL bytes", allow: all, deny: rm, tool: "bash", args: cmd("true && rm\x00 -rf x"), want: Deny},
		{name: "NUL never allowed by a specifier", allow: []string{"Bash(go test:*)"}, tool: "bash", args: cmd("go test\x00"), want: Ask},
		{name: "deny raw text when unparsable", allow: all, deny: rmrf, tool: "bash", args: cmd("rm -rf / 'unterminated"), want: Deny},
		{name: "deny rough split when unparsable", allow: all, deny: rm, tool: "bash", args: cmd("echo 'x && rm -rf /"), want: Deny},
		{name: "deny exact", allow: all, deny: []string{"Bash(git push --force)"}, tool: "bash", args: cmd("git fetch && git push --force"), want: Deny},
		{name: "deny exact not longer", allow: all, deny: []string{"Bash(git push --force)"}, tool: "bash", args: cmd("git push --force-with-lease"), want: Allow},
		{name: "deny word prefix is word-wise", allow: all, deny: rm, tool: "bash", args: cmd("rmdir x"), want: Allow},
		{name: "deny not an argument", allow: all, deny: rm, tool: "bash", args: cmd("echo rm -rf x"), want: Allow},
		{name: "deny not a lookup", allow: all, deny: rm, tool: "bash", args: cmd("command -v rm"), want: Allow},
		{name: "deny through command", allow: all, deny: rm, tool: "bash", args: cmd("command rm -rf x"), want: Deny},
		{name: "deny in bash -c with expansion", allow: all, deny: rmrf, tool: "bash", args: cmd(`bash -c "$PRE rm -rf x"`), want: Deny},
		{name: "deny built from expansions", allow: all, deny: rm, tool: "bash", args: cmd(`r${X}m -rf x`), want: Deny},
		{name: "deny without allow", deny: rm, tool: "bash", args: cmd("rm x"), want: Deny},
		{name: "deny case-insensitive json key", deny: rm, tool: "bash", args: json.RawMessage(`{"COMMAND":"rm -rf /"}`), want: Deny},
		{name: "deny duplicate json key", deny: rm, tool: "bash", args: json.RawMessage(`{"command":"ls","command":"rm -rf /"}`), want: Deny},
		{name: "deny double-encoded args", deny: rm, tool: "bash", args: json.RawMessage(`"{\"command\":\"rm -rf /\"}"`), want: Deny},
		{name: "bare deny", allow: all, deny: []string{"Bash"}, tool: "bash", args: cmd("ls"), want: Deny},

		{name: "ask beats allow", allow: all, ask: []string{"Bash(git push:*)"}, tool: "bash", args: cmd("git push origin main"), want: Ask, wantRule: "Bash(git push:*)"},
		{name: "ask anywhere inside", allow: all, ask: []string{"Bash(git push:*)"}, tool: "bash", args: cmd("git commit -m x && git push"), want: Ask},
		{name: "ask leaves others", allow: all, ask: []string{"Bash(git push:*)"}, tool: "bash", args: cmd("git status"), want: Allow},
		{name: "deny beats ask", allow: all, ask: []string{"Bash(git:*)"}, deny: []string{"Bash(git push:*)"}, tool: "bash", args: cmd("git push"), want: Deny},
		{name: "ask beats mode allow", mode: "allow", ask: []string{"Bash(npm publish:*)"}, tool: "bash", args: cmd("npm publish"), want: Ask},
	})
}

func TestDecideFiles(t *testing.T) {
	t.Parallel()
	docs := []string{"Edit(docs/**)"}
	runDecideCases(t, []decideCase{
		{name: "edit glob write", allow: docs, tool: "write_file", args: argsJSON("path", "docs/a.md"), want: Allow, wantRule: "Edit(docs/**)"},
		{name: "edit glob nested", allow: docs, tool: "edit_file", args: argsJSON("path", "docs/x/y/z.md"), want: Allow},
		{name: "edit glob file_path", allow: docs, tool: "multi_edit", args: argsJSON("file_path", "docs/a.md"), want: Allow},
		{name: "edit glob absolute", allow: docs, tool: "write_file", args: argsJSON("path", testRoot+"/docs/a.md"), want: Allow},
		{name: "edit glob outside", allow: docs, tool: "write_file", args: argsJSON("path", "src/a.go"), want: Ask},
		{name: "edit glob dotdot escape", allow: docs, tool: "write_file", args: argsJSON("path", "docs/../src/a.go"), want: Ask},
		{name: "edit glob other root", allow: docs, tool: "write_file", args: argsJSON("path", "/other/docs/a.md"), want: Ask},
		{name: "edit glob trailing slash", allow: []string{"Edit(docs/)"}, tool: "write_file", args: argsJSON("path", "docs/a.md"), want: Allow},
		{name: "edit glob single star stays in dir", allow: []string{"Edit(docs/*.md)"}, tool: "write_file", args: argsJSON("path", "docs/x/a.md"), want: Ask},
		{name: "move inside allowed", allow: docs, tool: "move_file", args: argsJSON("path", "docs/a", "destination", "docs/b"), want: Allow},
		{name: "move out needs both", allow: docs, tool: "move_file", args: argsJSON("path", "docs/a", "destination", "src/b"), want: Ask},
		{name: "move deny either end", allow: []string{"Edit"}, deny: []string{"Edit(**/.env)"}, tool: "move_file", args: argsJSON("path", "x", "destination", "sub/.env"), want: Deny},
		{name: "deny root dotfile", allow: []string{"Edit"}, deny: []string{"Edit(**/.env)"}, tool: "write_file", args: argsJSON("path", ".env"), want: Deny},
		{name: "deny relative glob is rooted", allow: []string{"Edit"}, deny: []string{"Edit(.env)"}, tool: "write_file", args: argsJSON("path", "sub/.env"), want: Allow},
		{name: "deny home glob", allow: []string{"Edit"}, deny: []string{"Edit(~/.ssh/**)"}, tool: "write_file", args: argsJSON("path", testHome+"/.ssh/config"), want: Deny},
		{name: "deny home glob tilde arg", allow: []string{"Edit"}, deny: []string{"Edit(~/.ssh/**)"}, tool: "write_file", args: argsJSON("path", "~/.ssh/config"), want: Deny},
		{name: "allow home glob absolute arg", allow: []string{"Edit(~/notes/**)"}, tool: "write_file", args: argsJSON("path", testHome+"/notes/a"), want: Allow},
		{name: "allow home glob ambiguous tilde arg", allow: []string{"Edit(~/notes/**)"}, tool: "write_file", args: argsJSON("path", "~/notes/a"), want: Ask},
		{name: "edit specifier needs path", allow: docs, tool: "write_file", args: argsJSON("content", "x"), want: Ask},
		{name: "bare edit", allow: []string{"Edit"}, tool: "move_file", args: argsJSON("path", "a", "destination", "b"), want: Allow},
		{name: "edit does not cover bash", allow: []string{"Edit"}, tool: "bash", args: cmd("ls"), want: Ask},
		{name: "edit does not cover readers", ask: []string{"Edit"}, tool: "read_file", readOnly: true, args: argsJSON("path", "a"), want: Allow},
		{name: "legacy concrete tool is narrow", allow: []string{"write_file(docs/**)"}, tool: "edit_file", args: argsJSON("path", "docs/a"), want: Ask},
		{name: "legacy concrete tool matches", allow: []string{"write_file(docs/**)"}, tool: "write_file", args: argsJSON("path", "docs/a"), want: Allow},
		{name: "legacy edit family", allow: []string{"edit(docs/**)"}, tool: "multi_edit", args: argsJSON("path", "docs/a"), want: Allow, wantRule: "Edit(docs/**)"},
		{name: "escaped glob is literal", allow: []string{`Edit(a\*.txt)`}, tool: "write_file", args: argsJSON("path", "ab.txt"), want: Ask},
		{name: "escaped glob matches itself", allow: []string{`Edit(a\*.txt)`}, tool: "write_file", args: argsJSON("path", "a*.txt"), want: Allow},

		{name: "read deny", deny: []string{"Read(secrets/**)"}, tool: "read_file", readOnly: true, args: argsJSON("path", "secrets/key"), want: Deny},
		{name: "read deny grep dir", deny: []string{"Read(secrets/**)"}, tool: "grep", readOnly: true, args: argsJSON("pattern", "x", "path", "secrets"), want: Deny},
		{name: "read deny glob pattern", deny: []string{"Read(secrets/**)"}, tool: "glob", readOnly: true, args: argsJSON("pattern", "secrets/*.pem"), want: Deny},
		{name: "read deny leaves others", deny: []string{"Read(secrets/**)"}, tool: "ls", readOnly: true, args: argsJSON("path", "src"), want: Allow},
		{name: "read deny without path", deny: []string{"Read(secrets/**)"}, tool: "grep", readOnly: true, args: argsJSON("pattern", "secrets/x"), want: Allow},
		{name: "read ask", ask: []string{"Read(**/*.pem)"}, tool: "read_file", readOnly: true, args: argsJSON("path", "a/b.pem"), want: Ask},
		{name: "read rule ignores edits", deny: []string{"Read"}, tool: "write_file", args: argsJSON("path", "a"), want: Ask},
	})
}

func TestDecideOtherTools(t *testing.T) {
	t.Parallel()
	runDecideCases(t, []decideCase{
		{name: "mcp bare allow", allow: []string{"mcp__github__create_issue"}, tool: "mcp__github__create_issue", args: argsJSON("title", "x"), want: Allow},
		{name: "mcp other tool", allow: []string{"mcp__github__create_issue"}, tool: "mcp__github__delete_repo", want: Ask},
		{name: "mcp case-sensitive", allow: []string{"mcp__GitHub__create_issue"}, tool: "mcp__github__create_issue", want: Ask},
		{name: "mcp deny beats allow", allow: []string{"mcp__github__delete_repo"}, deny: []string{"mcp__github__delete_repo"}, tool: "mcp__github__delete_repo", want: Deny},
		{name: "mcp deny read-only", deny: []string{"mcp__db__query"}, tool: "mcp__db__query", readOnly: true, want: Deny},
		{name: "literal specifier", allow: []string{"mcp__fs__write(notes.txt)"}, tool: "mcp__fs__write", args: argsJSON("path", "notes.txt"), want: Allow},
		{name: "literal specifier other", allow: []string{"mcp__fs__write(notes.txt)"}, tool: "mcp__fs__write", args: argsJSON("path", "other.txt"), want: Ask},
		{name: "literal specifier no subject", allow: []string{"mcp__fs__write(notes.txt)"}, tool: "mcp__fs__write", args: argsJSON("x", "notes.txt"), want: Ask},
		{name: "tool name is not a family", allow: []string{"Bash"}, tool: "Bash", args: cmd("ls"), want: Ask},
	})
}

func TestDecidePostures(t *testing.T) {
	t.Parallel()
	ask := []string{"Bash(git push:*)"}
	deny := []string{"Bash(rm:*)"}
	runDecideCases(t, []decideCase{
		{name: "ask: fallback asks", posture: PostureAsk, tool: "bash", args: cmd("ls"), want: Ask},
		{name: "auto: fallback allowed", posture: PostureAuto, tool: "bash", args: cmd("ls"), want: Allow},
		{name: "yolo: fallback allowed", posture: PostureYolo, tool: "bash", args: cmd("ls"), want: Allow},
		{name: "ask: ask rule", posture: PostureAsk, ask: ask, tool: "bash", args: cmd("git push"), want: Ask},
		{name: "auto: ask rule still asks", posture: PostureAuto, ask: ask, tool: "bash", args: cmd("git push"), want: Ask},
		{name: "yolo: ask rule waived", posture: PostureYolo, ask: ask, tool: "bash", args: cmd("git push"), want: Allow, wantRule: "Bash(git push:*)"},
		{name: "ask: deny", posture: PostureAsk, deny: deny, tool: "bash", args: cmd("rm x"), want: Deny},
		{name: "auto: deny holds", posture: PostureAuto, deny: deny, tool: "bash", args: cmd("rm x"), want: Deny},
		{name: "yolo: deny holds", posture: PostureYolo, deny: deny, tool: "bash", args: cmd("rm x"), want: Deny},
		{name: "auto: mode deny holds", posture: PostureAuto, mode: "deny", tool: "write_file", args: argsJSON("path", "a"), want: Deny},
		{name: "yolo: mode deny holds", posture: PostureYolo, mode: "deny", tool: "write_file", args: argsJSON("path", "a"), want: Deny},
		{name: "auto: allow rule", posture: PostureAuto, allow: []string{"Bash(ls:*)"}, tool: "bash", args: cmd("ls"), want: Allow},
		{name: "yolo: reader", posture: PostureYolo, tool: "grep", readOnly: true, want: Allow},
		{name: "auto: edit fallback", posture: PostureAuto, tool: "edit_file", args: argsJSON("path", "a"), want: Allow},
		{name: "unknown posture is ask", posture: Posture("bogus"), tool: "bash", args: cmd("ls"), want: Ask},
	})
}

func TestVerdictReason(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy("ask", []string{"Bash(go test:*)"}, []string{"Bash(git push:*)"}, []string{"Bash(rm:*)"}, testRoot, testHome)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		posture Posture
		tool    string
		ro      bool
		args    json.RawMessage
		source  Source
		want    string
	}{
		{"deny", PostureAsk, "bash", false, cmd("rm -rf x"), FromDeny, "blocked by deny rule Bash(rm:*)"},
		{"ask", PostureAsk, "bash", false, cmd("git push"), FromAsk, "ask rule Bash(git push:*) requires approval"},
		{"ask waived", PostureYolo, "bash", false, cmd("git push"), FromAsk, "ask rule Bash(git push:*) waived by the yolo posture"},
		{"allow", PostureAsk, "bash", false, cmd("go test"), FromAllow, "allowed by rule Bash(go test:*)"},
		{"reader", PostureAsk, "grep", true, nil, FromReadOnly, "read-only tool allowed by default"},
		{"mode", PostureAsk, "bash", false, cmd("make"), FromMode, "no rule matched; writers require approval"},
		{"mode relaxed", PostureAuto, "bash", false, cmd("make"), FromMode, "no rule matched; writer allowed by the auto posture"},
		{"mode reader", PostureAsk, "bash", false, cmd("ls -la"), FromMode, "no rule matched; the command only reads, but shell commands require approval"},
		{"mode reader relaxed", PostureAuto, "bash", false, cmd("git status"), FromMode, "no rule matched; the command only reads, allowed by the auto posture"},
		{"mode find -delete", PostureAsk, "bash", false, cmd("find . -name x -delete"), FromMode, "no rule matched; writers require approval"},
		{"mode redirect", PostureAsk, "bash", false, cmd("ls > out.txt"), FromMode, "no rule matched; writers require approval"},
		{"mode git push", PostureAsk, "bash", false, cmd("git push"), FromAsk, "ask rule Bash(git push:*) requires approval"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := p.Explain(tc.posture, tc.tool, tc.ro, tc.args)
			if v.Source != tc.source {
				t.Errorf("Source = %v, want %v", v.Source, tc.source)
			}
			if got := v.Reason(); got != tc.want {
				t.Errorf("Reason() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNewPolicy(t *testing.T) {
	t.Parallel()
	t.Run("defaults", func(t *testing.T) {
		t.Parallel()
		p, err := NewPolicy("", nil, nil, nil, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if p.Mode != Ask {
			t.Errorf("Mode = %v, want ask", p.Mode)
		}
	})
	t.Run("collects every error", func(t *testing.T) {
		t.Parallel()
		_, err := NewPolicy("sometimes",
			[]string{"Bash(go test:*)", "Bash(go test"},
			[]string{"Edit()"},
			[]string{"Bash(rm:*)", "(x)"}, "", "")
		if err == nil {
			t.Fatal("NewPolicy accepted bad input")
		}
		for _, want := range []string{`"sometimes"`, `permissions.allow[1]`, `"Bash(go test"`, `permissions.ask[0]`, `"Edit()"`, `permissions.deny[1]`, `"(x)"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %s", err, want)
			}
		}
		var re *RuleError
		if !errors.As(err, &re) {
			t.Errorf("error %v holds no *RuleError", err)
		}
	})
	t.Run("zero policy on error", func(t *testing.T) {
		t.Parallel()
		p, err := NewPolicy("ask", nil, nil, []string{"Bash(rm:*)", "Bash("}, "", "")
		if err == nil || len(p.Deny) != 0 || p.Mode != Allow {
			t.Errorf("got %+v, %v; want the zero Policy and an error", p, err)
		}
	})
}

func TestDecisionString(t *testing.T) {
	t.Parallel()
	for d, want := range map[Decision]string{Allow: "allow", Ask: "ask", Deny: "deny", Decision(9): "Decision(9)"} {
		if got := d.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(d), got, want)
		}
	}
}

func TestSourceString(t *testing.T) {
	t.Parallel()
	for s, want := range map[Source]string{FromDeny: "deny", FromAsk: "ask", FromAllow: "allow", FromReadOnly: "read-only", FromMode: "mode", Source(7): "Source(7)"} {
		if got := s.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(s), got, want)
		}
	}
}

func TestParsePosture(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    Posture
		wantErr bool
	}{
		{"", PostureAsk, false},
		{"ask", PostureAsk, false},
		{" Auto ", PostureAuto, false},
		{"YOLO", PostureYolo, false},
		{"full", PostureAsk, true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParsePosture(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("ParsePosture(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}
