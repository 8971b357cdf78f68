//go:build linux

package permission_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"reasonix/core/permission"
	"reasonix/core/sandbox"
	"reasonix/core/testenv"
)

// shimmed are the programs the jail replaces with recording shims. Each
// shim appends its name and arguments to the log; rm stops there, the
// others go on to run the real program, so pipelines and wrappers behave
// as they would.
var shimmed = []string{"rm", "echo", "cat", "ls", "touch", "printf", "xargs", "find", "env", "timeout", "nice", "nohup"}

// shimJail is a workspace, a directory of shims first on PATH, and a
// sandbox whose bubblewrap command line also mounts the rm shim over the
// real /usr/bin/rm, so naming rm by its absolute path records it too.
type shimJail struct {
	ws, log string
	binds   []string
	sb      *sandbox.Sandbox
	env     []string
}

func newShimJail(t *testing.T) *shimJail {
	t.Helper()
	testenv.NeedBwrap(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j := &shimJail{ws: filepath.Join(base, "ws"), log: filepath.Join(base, "log", "calls")}
	shims := filepath.Join(base, "shims")
	for _, d := range []string{j.ws, shims, filepath.Dir(j.log)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range shimmed {
		body := fmt.Sprintf("#!/bin/bash\nprintf '%%s\\n' %q\" $*\" >> %q\n", name, j.log)
		if name == "rm" {
			body += "exit 0\n"
		} else {
			body += fmt.Sprintf("exec /usr/bin/%s \"$@\"\n", name)
		}
		if err := os.WriteFile(filepath.Join(shims, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// /bin is a symlink to /usr/bin on current systems; bind both names
	// when they differ.
	for _, real := range []string{"/usr/bin/rm", "/bin/rm"} {
		if r, err := filepath.EvalSymlinks(real); err == nil && !slices.Contains(j.binds, r) {
			j.binds = append(j.binds, "--ro-bind", filepath.Join(shims, "rm"), r)
		}
	}
	if err := os.WriteFile(filepath.Join(j.ws, "victim"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	j.sb, err = sandbox.New(sandbox.Options{Root: j.ws, Bash: "enforce"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := j.sb.Check(ctx); err != nil {
		testenv.Missing(t, "bubblewrap cannot start a jail here: %v", err)
	}
	j.env = []string{"PATH=" + shims + ":/usr/bin:/bin", "HOME=" + j.ws, "LC_ALL=C"}
	return j
}

// run runs command with bash in the jail and returns what the shims
// recorded.
func (j *shimJail) run(t *testing.T, command string) []string {
	t.Helper()
	if err := os.WriteFile(j.log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	argv, err := j.sb.Wrap(j.ws, []string{"/bin/bash", "-c", command})
	if err != nil {
		t.Fatal(err)
	}
	sep := slices.Index(argv, "--")
	if sep < 0 {
		t.Fatalf("no -- in the jail's command line %q", argv)
	}
	argv = slices.Concat(argv[:sep], j.binds, argv[sep:])
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = j.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	if cmd.Run(); errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("%q timed out: %s", command, out.String())
	}
	b, err := os.ReadFile(j.log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(string(b), " ", "_"))
}

func ranRm(calls []string) bool {
	return slices.ContainsFunc(calls, func(c string) bool { return c == "rm" || strings.HasPrefix(c, "rm_") })
}

// TestDenyHoldsWhenRun generates commands that try to run rm, and a few
// other programs, in the ways a shell allows, and runs in a jail every one
// that a deny rule Bash(rm:*) does not deny: the rm shim must never run.
func TestDenyHoldsWhenRun(t *testing.T) {
	t.Parallel()
	j := newShimJail(t)
	p, err := permission.NewPolicy("allow", nil, nil, []string{"Bash(rm:*)"}, j.ws, j.ws)
	if err != nil {
		t.Fatal(err)
	}
	decide := func(command string) permission.Verdict {
		args, err := json.Marshal(map[string]string{"command": command})
		if err != nil {
			t.Fatal(err)
		}
		return p.Explain(permission.PostureYolo, "bash", false, args)
	}

	// The harness must be able to see rm run, by any of its names.
	for _, control := range []string{"rm victim", "/usr/bin/rm victim", "/bin/rm victim", "env -i rm victim", "X=rm; $X victim"} {
		if !ranRm(j.run(t, control)) {
			t.Fatalf("control %q did not reach the rm shim; the jail cannot tell whether rm ran", control)
		}
	}
	// Names written out are static and caught by the rule itself.
	for _, static := range []string{"/bin/rm victim", "/usr/bin/rm victim", `\rm victim`, "'rm' victim", `"/usr/bin/"rm victim`, "command rm victim", "env -i /usr/bin/rm victim", "/usr/bin/../bin/rm victim"} {
		if v := decide(static); v.Decision != permission.Deny || v.Detail != "" {
			t.Errorf("%q: %v (%s), want a plain deny", static, v.Decision, v.Reason())
		}
	}

	g := generator{r: rand.New(rand.NewPCG(1, 2))}
	const n = 300
	ran, recorded := 0, 0
	for range n {
		command := g.command()
		v := decide(command)
		if v.Decision == permission.Deny {
			continue
		}
		ran++
		calls := j.run(t, command)
		if len(calls) > 0 {
			recorded++
		}
		if ranRm(calls) {
			t.Errorf("%q ran rm (%q), but the policy said %v: %s", command, calls, v.Decision, v.Reason())
		}
	}
	t.Logf("%d commands, %d not denied and run, %d of those ran a shim", n, ran, recorded)
	if ran < n/20 || recorded < ran/4 {
		t.Errorf("only %d of %d commands ran and %d reached a shim; the generator no longer tests much", ran, n, recorded)
	}
}

// generator builds shell commands that run a program by some spelling of
// its name, through wrappers, nested shells and compound commands.
type generator struct {
	r *rand.Rand
}

func (g generator) pick(options ...string) string { return options[g.r.IntN(len(options))] }

// command returns one command line, most of them aimed at rm.
func (g generator) command() string {
	if g.r.IntN(10) == 0 {
		// Text that mentions rm without running it.
		return g.pick("echo rm victim", "cat <<< 'rm victim'", "command -v rm", "printf '%s\\n' rm", "ls rm victim 2>/dev/null", `X=rm; echo "$X"`, "echo 'rm victim' > notes.txt")
	}
	prog := "rm"
	if g.r.IntN(3) == 0 {
		prog = g.pick("touch", "ls", "cat")
	}
	name, prelude := g.name(prog)
	args := "victim"
	if name == "" {
		// The spelling takes the argument in (braces, ${IFS}).
		name, args = g.pick("{"+prog+",victim}", prog+"${IFS}victim"), ""
	}
	line := g.wrap(name, args)
	for range g.r.IntN(3) {
		line = g.compose(line)
	}
	return prelude + line
}

// name spells a program name, statically or not.
func (g generator) name(prog string) (name, prelude string) {
	hex := ""
	for _, c := range []byte(prog) {
		hex += fmt.Sprintf(`\x%02x`, c)
	}
	last := prog[len(prog)-1:]
	switch g.r.IntN(22) {
	case 0:
		return prog, ""
	case 1:
		return "'" + prog + "'", ""
	case 2:
		return `"` + prog + `"`, ""
	case 3:
		return `\` + prog, ""
	case 4:
		return "/usr/bin/" + prog, ""
	case 5:
		return "/bin/" + prog, ""
	case 6:
		return `"/usr/bin/"` + prog, ""
	case 7:
		return "$(echo " + prog + ")", ""
	case 8:
		return "`printf %s " + prog + "`", ""
	case 9:
		return "$X", "X=" + prog + "; "
	case 10:
		return `"${X}"`, "X=" + prog + "; "
	case 11:
		return "${UNSET:-" + prog + "}", ""
	case 12:
		return prog[:1] + "${EMPTY}" + prog[1:], ""
	case 13:
		return "$'" + hex + "'", ""
	case 14:
		return "/usr/bin/" + prog[:len(prog)-1] + "?", ""
	case 15:
		return "/usr/bin/" + prog[:len(prog)-1] + "[" + last + "]", ""
	case 16:
		return "$(rev <<< " + reverse(prog) + ")", ""
	case 17:
		return `"$(cat prog.txt)"`, "echo " + prog + " > prog.txt; "
	case 18:
		return "${A[0]}", "A=(" + prog + "); "
	case 19:
		return "$(echo " + reverse(prog) + " | rev)", ""
	case 20:
		return `$"` + prog + `"`, ""
	default:
		return "", ""
	}
}

// wrap runs a program through a wrapper, eval or another shell.
func (g generator) wrap(name, args string) string {
	q := func(s string) string {
		out, err := syntax.Quote(s, syntax.LangBash)
		if err != nil {
			return "'x'"
		}
		return out
	}
	call := strings.TrimSpace(name + " " + args)
	switch g.r.IntN(20) {
	case 0, 1, 2:
		return call
	case 3:
		return "env " + call
	case 4:
		return "env -i " + call
	case 5:
		return "command " + call
	case 6:
		return "timeout 5 " + call
	case 7:
		return "nice -n 1 " + call
	case 8:
		return "echo " + args + " | xargs " + name
	case 9:
		return "find . -maxdepth 1 -name victim -exec " + name + " {} \\;"
	case 10:
		return "find . -maxdepth 1 -name victim -exec " + name + " {} +"
	case 11:
		return "eval " + q(call)
	case 12:
		return "Y=" + q(call) + `; eval "$Y"`
	case 13:
		return "bash -c " + q(call)
	case 14:
		return "sh -c " + q(call)
	case 15:
		return "Y=" + q(call) + `; bash -c "$Y"`
	case 16:
		return "echo " + q(call) + " | sh"
	case 17:
		return "Y=" + q(call) + `; echo "$Y" | bash`
	case 18:
		return "bash <<< " + q(call)
	default:
		return "echo victim | xargs -I{} " + name + " {}"
	}
}

// compose puts a command line inside a larger one.
func (g generator) compose(line string) string {
	switch g.r.IntN(9) {
	case 0:
		return "true; " + line
	case 1:
		return "ls >/dev/null && " + line
	case 2:
		return "false || " + line
	case 3:
		return "(" + line + ")"
	case 4:
		return "{ " + line + "; }"
	case 5:
		return "echo $(" + line + ")"
	case 6:
		return "if true; then " + line + "; fi"
	case 7:
		return "f() { " + line + "; }; f"
	default:
		return line + " | cat"
	}
}

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}
