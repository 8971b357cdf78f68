package permission

import (
	"strings"
	"testing"

	"reasonix/core/permission/shell"
)

// bypasses are commands whose program name, or whose code for eval or a
// shell, is built at run time; each can run rm without the text saying
// so, and does under bash when X=rm.
var bypasses = []string{
	// The constructs a deny rule once missed.
	"$(echo rm) f",
	"`echo rm` f",
	"X=rm; $X f",
	"X=rm; ${X} f",
	`X=rm; "$X" f`,
	"{rm,f}",
	"rm${IFS}f",
	"/bin/r? f",
	"/usr/bin/r[m] f",
	"/usr/bin/r* f",
	`eval "$X"`,
	"eval $X f",
	`bash -c "$(cat f)"`,
	`sh -c "$X"`,
	`echo "$X" | sh`,
	`printf '%s' "$X" | bash`,
	// The same inside wrappers and nested code.
	"env $X f",
	"env -i $X f",
	"sudo -u root $X f",
	"timeout 5 $X f",
	"nice -n 5 $(echo rm) f",
	"command $X f",
	"echo f | xargs $X",
	"find . -exec $X {} \\;",
	"find . -name x -exec {} f \\;",
	"echo rm f | xargs env",
	"echo rm | xargs -I{} {} f",
	"echo '-c rm' | xargs bash",
	"ls && (X=rm; $X f)",
	"echo $(X=rm; $X f)",
	`bash -c 'X=rm; $X f'`,
	`bash -c "eval \"\$X\""`,
	`sh -c 'echo "$1" | sh' _ x`,
	"f() { $1 f; }; f rm",
	"env FOO=$X make",
	"bash -o $X",
	// Other routes to code that is not in the text.
	"echo 'cm0gZg==' | base64 -d | sh",
	"cat script | bash",
	"bash",
	"bash -s < /dev/stdin",
	"sh <<EOF\n$X f\nEOF",
	`bash <<< "$X"`,
	"source <(echo rm f)",
	`. "$X"`,
	`trap "$X" EXIT`,
	"alias ls=rm; ls f",
	"hash -p /bin/rm ls; ls f",
	`env -S '$X f'`,
	`sg grp '$X f'`,
	`flock /tmp/l -c '$X f'`,
	"x='a[$(rm f)]'; echo $((x))",
	"declare -i n; n='a[$(rm f)]'",
	"x='$(rm f)'; echo \"${x@P}\"",
	`env 'BASH_FUNC_ls%%=() { rm "$@"; }' bash -c 'ls f'`,
	"BASH_ENV=<(echo rm f) bash -c true",
	"echo 'rm f' 'unterminated",
	"~/rm f",
	`$"rm" f`,
}

// TestDynamicCommandsFailClosed checks every bypass against deny, ask and
// allow rules that name programs: it is denied by a deny rule, held by an
// ask rule, and covered by no allow rule that has a specifier.
func TestDynamicCommandsFailClosed(t *testing.T) {
	t.Parallel()
	deny, err := NewPolicy("allow", []string{"Bash"}, nil, []string{"Bash(rm:*)"}, testRoot, testHome)
	if err != nil {
		t.Fatal(err)
	}
	ask, err := NewPolicy("allow", []string{"Bash"}, []string{"Bash(git push:*)"}, nil, testRoot, testHome)
	if err != nil {
		t.Fatal(err)
	}
	for _, command := range bypasses {
		t.Run(command, func(t *testing.T) {
			t.Parallel()
			v := deny.Explain(PostureYolo, "bash", false, cmd(command))
			if v.Decision != Deny || v.Rule.String() != "Bash(rm:*)" {
				t.Errorf("under deny Bash(rm:*): %v (%s), want deny", v.Decision, v.Reason())
			}
			v = ask.Explain(PostureAuto, "bash", false, cmd(command))
			if v.Decision != Ask || !strings.Contains(v.Reason(), "cannot tell which program runs") {
				t.Errorf("under ask Bash(git push:*): %v (%s), want ask saying it cannot tell", v.Decision, v.Reason())
			}
			for _, rule := range []string{"Bash(rm:*)", "Bash(echo:*)", "Bash(X=rm:*)", "Bash(eval:*)", "Bash(" + command + ")", "Bash(" + firstWord(command) + "*)"} {
				allow, err := NewPolicy("ask", []string{rule}, nil, nil, testRoot, testHome)
				if err != nil {
					continue // the command itself does not make a rule
				}
				if v := allow.Explain(PostureAsk, "bash", false, cmd(command)); v.Decision == Allow {
					t.Errorf("allowed by %s: %s", rule, v.Reason())
				}
				g := NewGrants(testRoot, testHome)
				if g.Add(rule) == nil && g.Covers("bash", cmd(command)) {
					t.Errorf("covered by the session grant %s", rule)
				}
			}
		})
	}
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, " \n"); i > 0 {
		return s[:i]
	}
	return s
}

// TestStaticCommandsKeepTheirVerdicts checks that commands whose every
// program name is written out are judged as before: a deny rule for rm
// does not touch them and allow rules cover them as they did.
func TestStaticCommandsKeepTheirVerdicts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		command string
		allow   string // an allow rule with a specifier that covers it, or ""
	}{
		{"ls -la", "Bash(ls:*)"},
		{"go test ./...", "Bash(go test:*)"},
		{"echo $HOME", ""},
		{`echo "$(date)"`, ""},
		{"[ -f x ] && echo y", ""},
		{"if [[ -f x ]]; then echo y; fi", ""},
		{"for i in 1 2; do echo $i; done", ""},
		{"git commit -m 'fix `x`'", "Bash(git commit:*)"},
		{"awk '{print $(NF)}' f", "Bash(awk:*)"},
		{"find . -name '*.go' -exec grep -l x {} +", ""},
		{`find . -exec sh -c 'echo "$1"' _ {} \;`, ""},
		{"xargs -I{} cp {} /tmp", ""},
		{"ls | xargs grep x", ""},
		{"sudo -u root make $X", ""},
		{"timeout 5 go test $X", ""},
		{`env FOO="$X" make`, ""},
		{"env -i PATH=/bin make", ""},
		{"nohup ./server --port $PORT &", ""},
		{`bash script.sh "$V"`, ""},
		{"bash -o pipefail -c 'ls | wc -l'", ""},
		{"echo 'ls' | sh", ""},
		{"sh <<'EOF'\nls $X\nEOF", ""},
		{"cd \"$DIR\" && make", ""},
		{"while read -r l; do echo \"$l\"; done < f", ""},
		{"command -v $X", ""},
		{"time make", ""},
		{"echo {}", "Bash(echo:*)"},
		{"'ls' \"-la\"", "Bash(ls:*)"},
		{`$'ls' -la`, ""},
		{"\\ls", "Bash(ls:*)"},
		{"trap 'echo bye' EXIT", ""},
		{"source venv/bin/activate", ""},
	}
	deny, err := NewPolicy("allow", []string{"Bash"}, nil, []string{"Bash(rm:*)"}, testRoot, testHome)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.command, func(t *testing.T) {
			t.Parallel()
			if why := shell.Analyze(tc.command).Dynamic(); why != "" {
				t.Errorf("judged dynamic: %s", why)
			}
			if v := deny.Explain(PostureAsk, "bash", false, cmd(tc.command)); v.Decision != Allow {
				t.Errorf("under deny Bash(rm:*): %v (%s), want allow", v.Decision, v.Reason())
			}
			if tc.allow == "" {
				return
			}
			p, err := NewPolicy("ask", []string{tc.allow}, nil, nil, testRoot, testHome)
			if err != nil {
				t.Fatal(err)
			}
			if v := p.Explain(PostureAsk, "bash", false, cmd(tc.command)); v.Decision != Allow {
				t.Errorf("under allow %s: %v (%s), want allow", tc.allow, v.Decision, v.Reason())
			}
		})
	}
}

// TestDynamicCommandReason checks the wording a blocked call shows and that
// a rule matching as written keeps its plain reason.
func TestDynamicCommandReason(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy("allow", nil, []string{"Bash(git push:*)"}, []string{"Bash(rm:*)", "Bash(curl:*)"}, testRoot, testHome)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		policy  Policy
		command string
		want    string
	}{
		{p, "$(echo rm) f", "blocked by deny rule Bash(rm:*): cannot tell which program runs ($(echo rm) builds the program name at run time)"},
		{p, "rm f; $(echo x)", "blocked by deny rule Bash(rm:*)"},
		{p, "{rm,f}", "blocked by deny rule Bash(rm:*): cannot tell which program runs ({rm,f} is a brace expansion)"},
		{p, "/bin/r? f", "blocked by deny rule Bash(rm:*): cannot tell which program runs (/bin/r? is a glob that picks a file)"},
		{p, `eval "$X"`, `blocked by deny rule Bash(rm:*): cannot tell which program runs (eval runs code built at run time: "$X")`},
		{Policy{Mode: Allow, Ask: p.Ask}, "X=rm; $X f", "ask rule Bash(git push:*) requires approval: cannot tell which program runs ($X builds the program name at run time)"},
	}
	for _, tc := range cases {
		t.Run(tc.command, func(t *testing.T) {
			t.Parallel()
			if got := tc.policy.Explain(PostureAsk, "bash", false, cmd(tc.command)).Reason(); got != tc.want {
				t.Errorf("Reason() = %q\nwant        %q", got, tc.want)
			}
		})
	}
	// A bare rule already matches every call and needs no detail.
	bare := Policy{Mode: Allow, Deny: []Rule{mustRule(t, "Bash")}}
	if v := bare.Explain(PostureAsk, "bash", false, cmd("$X")); v.Detail != "" || v.Reason() != "blocked by deny rule Bash" {
		t.Errorf("bare deny: %q", v.Reason())
	}
	// A bare allow allows every command, this one included.
	if v := (Policy{Mode: Ask, Allow: []Rule{mustRule(t, "Bash")}}).Explain(PostureAsk, "bash", false, cmd("$X")); v.Decision != Allow {
		t.Errorf("bare allow: %v (%s)", v.Decision, v.Reason())
	}
}

// TestOverBudgetCommand checks that a command too large to search for
// commands is denied by any deny rule with a specifier, and that a bare
// allow rule still allows it when no deny rule exists.
func TestOverBudgetCommand(t *testing.T) {
	t.Parallel()
	// Every tail of a wrapper is re-parsed as eval code, which exhausts
	// the shell analysis's work budget (see the shell package's tests).
	huge := "sudo " + strings.Repeat("eval ", 50000) + "true"
	p := Policy{Mode: Ask, Allow: []Rule{mustRule(t, "Bash")}, Deny: []Rule{mustRule(t, "Bash(rm:*)")}}
	if d := p.Decide("bash", false, cmd(huge)); d != Deny {
		t.Errorf("over-budget command decided %v, want deny", d)
	}
	p.Deny = nil
	if d := p.Decide("bash", false, cmd(huge)); d != Allow {
		t.Errorf("over-budget command without deny rules decided %v, want allow", d)
	}
}

// TestCodeArgumentsAreRead checks that a deny rule sees commands that a
// builtin or wrapper runs from an argument given as text.
func TestCodeArgumentsAreRead(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy("allow", nil, nil, []string{"Bash(rm:*)"}, testRoot, testHome)
	if err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{
		"trap 'rm f' EXIT", "env -S 'rm f'", "env -S'rm f'", "env --split-string='rm f'",
		"flock /tmp/l -c 'rm f'", "sg grp 'rm f'", "runuser -u x -c 'rm f'",
		"mapfile -C 'rm f' -c 1 a < x", "compgen -C 'rm f' x", "parallel ::: 'rm f'",
	} {
		if v := p.Explain(PostureAsk, "bash", false, cmd(command)); v.Decision != Deny {
			t.Errorf("%q: %v (%s), want deny", command, v.Decision, v.Reason())
		}
	}
}

func mustRule(t *testing.T, s string) Rule {
	t.Helper()
	r, err := ParseRule(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
