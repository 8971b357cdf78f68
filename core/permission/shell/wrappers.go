package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// positionals counts the operands some wrappers take before the program:
// timeout 5 rm, taskset 0x1 rm, flock /tmp/l rm, chroot /srv rm.
var positionals = map[string]int{"timeout": 1, "chrt": 1, "taskset": 1, "flock": 1, "chroot": 1}

// valueOptions lists, for wrappers whose options are known, the short
// option letters and the long options that require a value in the next
// word when none is attached. Options with an optional value take it only
// attached, so they are left out.
var valueOptions = map[string]struct {
	short string
	long  []string
}{
	"xargs":   {"adEILnPsJRS", []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}},
	"sudo":    {"CDghpRrTtUu", []string{"chdir", "close-from", "group", "host", "prompt", "chroot", "role", "type", "command-timeout", "other-user", "user"}},
	"doas":    {"aCu", nil},
	"env":     {"uCP", []string{"unset", "chdir"}},
	"nice":    {"n", []string{"adjustment"}},
	"ionice":  {"cnpPu", []string{"class", "classdata", "pid", "pgid", "uid"}},
	"timeout": {"sk", []string{"signal", "kill-after"}},
	"stdbuf":  {"ioe", []string{"input", "output", "error"}},
	"flock":   {"wE", []string{"timeout", "wait", "conflict-exit-code"}},
	"time":    {"fo", []string{"format", "output"}},
	"exec":    {"a", nil},
	"command": {"", nil},
	"builtin": {"", nil},
	"nohup":   {"", nil},
	"setsid":  {"", nil},
	"chrt":    {"", nil},
	"taskset": {"", nil},
	"chroot":  {"", []string{"userspec", "groups"}},
	"runuser": {"ugGsw", []string{"user", "group", "supp-group", "shell", "whitelist-environment"}},
	"nsenter": {"tSG", []string{"target", "setuid", "setgid"}},
	"busybox": {"", nil},
}

// takesValue reports whether an option word takes the next word as its
// value, and whether that is sure: for a wrapper whose options are not
// known, any option without "=" might.
func takesValue(base, v string) (takes, sure bool) {
	spec, known := valueOptions[base]
	if !known {
		return !strings.Contains(v, "="), false
	}
	if long, ok := strings.CutPrefix(v, "--"); ok {
		switch {
		case long == "" || strings.Contains(long, "="):
			return false, true
		case slices.Contains(spec.long, long):
			return true, true
		default:
			return true, false
		}
	}
	for i := 1; i < len(v); i++ {
		if strings.IndexByte(spec.short, v[i]) >= 0 {
			// A value letter takes the rest of the word, or else the next.
			return i == len(v)-1, true
		}
	}
	return false, true
}

// assigners take NAME=value words before the program.
var assigners = setOf("env", "sudo")

// wrapper checks a command that runs another command given by some of its
// words. Which word is the program depends on the wrapper's options, so
// every word that might be it must be static, until one is certainly it:
// the first static word that is not an option, not an assignment, not
// perhaps the value of the option before it and not a leading operand. own
// is what fills in the wrapper's own words, inner what fills in those of
// the command it runs (they differ only for xargs and parallel). It
// reports whether the command run reads code from standard input, and
// whether a program was found among the words at all.
func (p *programCheck) wrapper(base string, args []*syntax.Word, own, inner runner, depth int) (stdin, found bool) {
	if base == "command" && len(args) > 0 {
		if v, why := staticWord(args[0]); why == "" && (v == "-v" || v == "-V") {
			return false, true // command -v rm only asks where rm is
		}
	}
	pending := positionals[base]
	maybeValue, isValue := false, false
	for i := 0; i < len(args); i++ {
		if !p.spend(1) {
			return false, false
		}
		w := args[i]
		v, why := staticWord(w)
		if isValue {
			// Surely the value of the option before it; it must still not
			// split into more words.
			isValue = false
			if why == "" || quotedOnly(w) {
				continue
			}
		}
		if why != "" {
			if safeOptionWord(w, assigners[base]) {
				maybeValue = false
				continue
			}
			p.fail("cannot tell which program runs (%s)", why)
			return false, false
		}
		if own.fills != "" && strings.Contains(v, own.fills) {
			p.fail("cannot tell which program runs (%s fills in the program %s runs)", own.name, base)
			return false, false
		}
		switch {
		case v == "--":
			if i+1 < len(args) {
				return p.command(args[i+1:], inner, depth), true
			}
			i = len(args)
		case base == "env" && splitOption(v):
			// env -S splits one word into a command line of its own.
			split, inline := strings.CutPrefix(v, "--split-string=")
			if !inline && v != "--split-string" && v != "-S" {
				split, inline = v[2:], true
			}
			if !inline {
				if i++; i >= len(args) {
					return false, false
				}
				var ok bool
				if split, ok = p.consume(args[i], "env -S splits words built at run time"); !ok {
					return false, false
				}
			}
			if strings.Contains(split, "$") {
				p.fail("cannot tell which program runs (env -S expands variables in %s)", clip(split))
				return false, false
			}
			p.code(split, "env -S", depth+1)
			maybeValue = false
		case (base == "flock" || base == "runuser") && (v == "-c" || v == "--command"):
			if i++; i < len(args) {
				if code, ok := p.consume(args[i], base+" -c runs code built at run time"); ok {
					p.code(code, base, depth+1)
				}
			}
			return false, true
		case len(v) > 1 && v[0] == '-':
			takes, sure := takesValue(base, v)
			maybeValue, isValue = takes && !sure, takes && sure
		case assigners[base] && strings.IndexByte(v, '=') > 0:
			// Before the program, env and sudo take any word with "=" for
			// an assignment, whatever the name.
			p.envAssign(v[:strings.IndexByte(v, '=')], nil, false)
			maybeValue = false
		case maybeValue:
			// Perhaps the option's value, perhaps the program: check it as
			// a program too.
			if p.command(args[i:], inner, depth) {
				stdin = true
			}
			maybeValue = false
		case pending > 0:
			pending--
		default:
			return p.command(args[i:], inner, depth) || stdin, true
		}
		if p.why != "" {
			return false, false
		}
	}
	if own.appends {
		p.fail("cannot tell which program runs (%s supplies the program %s runs)", own.name, base)
	}
	return stdin, false
}

// splitOption reports whether an env option is -S or --split-string.
func splitOption(v string) bool {
	return strings.HasPrefix(v, "-S") || v == "--split-string" || strings.HasPrefix(v, "--split-string=")
}

// safeOptionWord reports whether a word that is not static is still surely
// an option (-x...) or, for env and sudo, an assignment (NAME=...): it
// starts with such literal text and holds no unquoted expansion, so it
// cannot split into other words.
func safeOptionWord(w *syntax.Word, assigns bool) bool {
	lead, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return false
	}
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if hasGlobChar(x.Value) {
				return false
			}
		case *syntax.SglQuoted, *syntax.DblQuoted:
		default:
			return false
		}
	}
	v := unescapeBare(lead.Value)
	return strings.HasPrefix(v, "-") || assigns && isAssignment(v)
}

// isAssignment reports whether s starts with NAME=.
func isAssignment(s string) bool {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := s[j]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// find checks the commands of find's -exec, -execdir, -ok and -okdir
// actions, whose {} find replaces with each path and which, ended by "+",
// get paths appended. An unquoted expansion among find's words could
// split into an action of its own.
func (p *programCheck) find(args []*syntax.Word, run runner, depth int) {
	if !p.spend(len(args)) {
		return
	}
	for i := 0; i < len(args); i++ {
		v, why := staticWord(args[i])
		if why != "" {
			if !quotedOnly(args[i]) {
				p.fail("cannot tell which program runs (find's actions are built at run time: %s)", why)
				return
			}
			continue
		}
		switch v {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for ; j < len(args) && p.spend(1); j++ {
			if e, why := staticWord(args[j]); why == "" && (e == ";" || e == "+") {
				break
			}
		}
		if j > i+1 {
			appends := j < len(args) && render(args[j]) == "+"
			p.command(args[i+1:j], runner{name: "find", fills: "{}", appends: appends}, depth)
			if p.why != "" {
				return
			}
		}
		i = j
	}
}

// quotedOnly reports whether every expansion in a word is inside double
// quotes, so the word stays one word whatever it expands to.
func quotedOnly(w *syntax.Word) bool {
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if hasGlobChar(x.Value) {
				return false
			}
		case *syntax.SglQuoted, *syntax.DblQuoted:
		default:
			return false
		}
	}
	return true
}

// xargs checks the command xargs runs, which gets xargs's input appended
// or, with -I, put in place of the replacement string.
func (p *programCheck) xargs(args []*syntax.Word, run runner, depth int) {
	inner := runner{name: "xargs", appends: true}
	for i, w := range args {
		v, why := staticWord(w)
		if why != "" {
			break
		}
		switch {
		case v == "-I" || v == "-J":
			if i+1 < len(args) {
				inner.fills = render(args[i+1])
			}
		case strings.HasPrefix(v, "-I") || strings.HasPrefix(v, "-J"):
			inner.fills = v[2:]
		case v == "-i" || v == "--replace":
			inner.fills = "{}"
		case strings.HasPrefix(v, "-i"):
			inner.fills = v[2:]
		case strings.HasPrefix(v, "--replace="):
			inner.fills = strings.TrimPrefix(v, "--replace=")
		}
	}
	if inner.fills != "" {
		inner.appends = false
	}
	// Without a command xargs runs echo, so finding none is fine.
	p.wrapper("xargs", args, run, inner, depth)
}

// parallel checks GNU parallel, which runs its command with {} replaced
// and, given no command, runs each input after ::: as a command line.
func (p *programCheck) parallel(args []*syntax.Word, run runner, depth int) {
	k := slices.IndexFunc(args, func(w *syntax.Word) bool {
		v, why := staticWord(w)
		return why == "" && strings.HasPrefix(v, ":::")
	})
	cmd, inputs := args, []*syntax.Word(nil)
	if k >= 0 {
		cmd, inputs = args[:k], args[k+1:]
	}
	if _, found := p.wrapper("parallel", cmd, run, runner{name: "parallel", fills: "{", appends: true}, depth); found || p.why != "" {
		return
	}
	for _, w := range inputs {
		v, ok := p.consume(w, "parallel runs inputs built at run time")
		if !ok {
			return
		}
		if !strings.HasPrefix(v, ":::") {
			p.code(v, "parallel", depth+1)
		}
	}
}

// sg runs the words after its group, joined, with /bin/sh -c.
func (p *programCheck) sg(args []*syntax.Word, depth int) {
	var vals []string
	for i, w := range args {
		v, ok := p.consume(w, "sg runs code built at run time")
		if !ok {
			return
		}
		if (i == 0 && v == "-") || v == "-c" {
			continue
		}
		vals = append(vals, v)
	}
	if len(vals) > 1 {
		p.code(strings.Join(vals[1:], " "), "sg", depth+1)
	}
}

// trap runs its first operand as code when a signal arrives.
func (p *programCheck) trap(args []*syntax.Word, depth int) {
	if len(args) > 0 && render(args[0]) == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return
	}
	v, ok := p.consume(args[0], "trap runs code built at run time")
	if !ok || v == "-" || v == "-p" || v == "-l" || v == "-P" {
		return
	}
	p.code(v, "trap", depth+1)
}

// alias makes a name run other code, where aliases are expanded.
func (p *programCheck) alias(args []*syntax.Word) {
	for _, w := range args {
		if v, why := staticWord(w); why != "" || strings.Contains(v, "=") {
			p.fail("cannot tell which program runs (alias changes what a command name runs)")
			return
		}
	}
}

// hash -p makes a name run another program.
func (p *programCheck) hash(args []*syntax.Word) {
	for _, w := range args {
		if v, why := staticWord(w); why != "" || len(v) > 1 && v[0] == '-' && strings.Contains(v, "p") {
			p.fail("cannot tell which program runs (hash -p changes which program a name runs)")
			return
		}
	}
}

// source runs a file as code in the current shell; it reads code from
// standard input when that file is /dev/stdin.
func (p *programCheck) source(base string, args []*syntax.Word) bool {
	if len(args) > 0 && render(args[0]) == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return false
	}
	v, why := staticWord(args[0])
	if why != "" {
		p.fail("cannot tell which program runs (%s runs a file chosen at run time: %s)", base, why)
		return false
	}
	return stdinPath(v)
}

// callback checks the -C option of mapfile, readarray and compgen, whose
// value is code the builtin runs.
func (p *programCheck) callback(base string, args []*syntax.Word, depth int) {
	for i, w := range args {
		v, why := staticWord(w)
		if why != "" {
			continue
		}
		var code string
		switch {
		case v == "-C" && i+1 < len(args):
			var ok bool
			if code, ok = p.consume(args[i+1], base+" -C runs code built at run time"); !ok {
				return
			}
		case strings.HasPrefix(v, "-C") && len(v) > 2:
			code = v[2:]
		default:
			continue
		}
		p.code(code, base, depth+1)
		return
	}
}
