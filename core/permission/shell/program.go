package shell

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// checkPrograms looks for the first place in a parsed command line where
// the program a shell will run, or the shell code it will run, cannot be
// read from the text: a program name built by an expansion, a glob or a
// brace expansion, code handed to eval or another shell that is built at
// run time, a wrapper whose program comes from its input, and the like. It
// returns a short reason, or "" when every program name is a static word.
//
// Deny and ask rules match program names, so a command with such a name
// could run a denied program under any name at all; the policy therefore
// treats it as matching every deny and ask rule with a specifier and as
// covered by no allow rule with one.
func checkPrograms(f *syntax.File) string {
	var p programCheck
	p.file(f, 0)
	if p.why == "" && p.evaluates != "" && p.codeText != "" {
		p.fail("cannot tell which program runs (%s may run %s as code)", p.evaluates, clip(p.codeText))
	}
	return p.why
}

// programCheck is the state of one checkPrograms pass. Unlike the
// collector, it reads only code that will certainly run (the top-level
// command, the code of eval and of sh -c, a here-document fed to a shell),
// since reading an ordinary argument as code would find "program names"
// in text no shell ever runs.
type programCheck struct {
	why  string
	work int
	// consumed holds the words this pass has read as code, so the text
	// inside them is judged as code and not as data.
	consumed map[*syntax.Word]bool
	// checked remembers each command already checked, by its first word
	// and what fills it in, with whether it reads code from standard
	// input: a wrapper's candidates overlap, and without this a chain of
	// wrappers would be checked an exponential number of times.
	checked map[checkedKey]bool
	// evaluates names a construct that makes bash run text as code when it
	// holds $( or a backtick: arithmetic, array subscripts, declare, ${x@P}
	// and friends. codeText is the first static text holding either.
	// Together they mean a quoted string may run a command.
	evaluates, codeText string
}

type checkedKey struct {
	first *syntax.Word
	run   runner
}

// runner says what fills in or adds to a command's words at run time: find
// -exec replaces {} and with "+" appends paths, xargs appends its input or
// replaces its -I string.
type runner struct {
	name    string // find, xargs or parallel; "" for the shell itself
	fills   string // text replaced in the words, or ""
	appends bool   // arguments are added after the words
}

func (p *programCheck) fail(format string, args ...any) {
	if p.why == "" {
		p.why = fmt.Sprintf(format, args...)
	}
}

// spend charges n units of work against a budget the size of the
// collector's; a command line too large to check is one the check cannot
// vouch for.
func (p *programCheck) spend(n int) bool {
	p.work += n
	if p.work > maxShellWork {
		p.fail("the command is too large to check")
	}
	return p.why == ""
}

// file checks every statement of f, including those nested in
// substitutions, function bodies and compound commands.
func (p *programCheck) file(f *syntax.File, depth int) {
	feeders := map[*syntax.Stmt]*syntax.Stmt{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if p.why != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.BinaryCmd:
			if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
				feeders[x.Y] = x.X
			}
		case *syntax.Stmt:
			p.stmt(x, feeders[x], depth)
		case *syntax.Word:
			if p.consumed[x] {
				return false
			}
			p.noteText(x)
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause:
			p.noteEvaluates("arithmetic")
		case *syntax.DeclClause:
			if x.Variant.Value != "export" && slices.ContainsFunc(x.Args, func(a *syntax.Assign) bool { return a.Naked && a.Value != nil }) {
				p.noteEvaluates(x.Variant.Value)
			}
		case *syntax.UnaryTest:
			if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
				p.noteEvaluates("[[ " + x.Op.String() + " ]]")
			}
		case *syntax.BinaryTest:
			if x.Op >= syntax.TsEql && x.Op <= syntax.TsGtr {
				p.noteEvaluates("[[ " + x.Op.String() + " ]]")
			}
		case *syntax.ParamExp:
			if x.Excl || x.Index != nil || x.Slice != nil || x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && render(x.Exp.Word) == "P" {
				p.noteEvaluates("${...}")
			}
		case *syntax.Assign:
			if x.Index != nil {
				p.noteEvaluates("an array subscript")
			}
			if x.Name != nil {
				p.envAssign(x.Name.Value, x.Value, x.Naked)
			}
		}
		return p.why == ""
	})
}

// evaluators are builtins that evaluate text as arithmetic or as a
// variable name with a subscript, which runs any $( ) inside it.
var evaluators = setOf("let", "read", "printf", "unset", "mapfile", "readarray", "test", "[",
	"getopts", "wait", "declare", "typeset", "local")

// evaluatesArgs reports whether a call of one of the evaluators may
// evaluate one of its arguments: test only with -v or -R, the rest when a
// name may hold a subscript.
func evaluatesArgs(base string, args []*syntax.Word) bool {
	switch base {
	case "let", "declare", "typeset", "local":
		return true
	}
	for _, w := range args {
		v, why := staticWord(w)
		switch {
		case base == "test" || base == "[":
			if why == "" && (v == "-v" || v == "-R") {
				return true
			}
		case why != "" || strings.Contains(v, "["):
			return true
		}
	}
	return false
}

// promptVars are expanded, command substitutions included, when a shell
// prints a prompt or a trace line; BASH_ENV and ENV name a file a shell
// runs at start.
var promptVars = setOf("PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND")

func (p *programCheck) noteEvaluates(what string) {
	if p.evaluates == "" {
		p.evaluates = what
	}
}

// noteText records static text that holds $( or a backtick: harmless as
// data, but code in any of the places noteEvaluates records.
func (p *programCheck) noteText(w *syntax.Word) {
	if p.codeText != "" {
		return
	}
	var texts []string
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			texts = append(texts, unescapeBare(x.Value))
		case *syntax.SglQuoted:
			v := x.Value
			if x.Dollar {
				v, _ = ansiC(x)
			}
			texts = append(texts, v)
		case *syntax.DblQuoted:
			for _, inner := range x.Parts {
				if lit, ok := inner.(*syntax.Lit); ok {
					texts = append(texts, unescapeDouble(lit.Value))
				}
			}
		}
	}
	for _, s := range texts {
		if strings.Contains(s, "$(") || strings.Contains(s, "`") {
			p.codeText = s
			return
		}
	}
}

// envAssign checks a variable assignment that changes what a shell started
// later runs: a function passed in the environment (BASH_FUNC_name%%), a
// start-up file (BASH_ENV, ENV) or a prompt a trace expands (PS4).
func (p *programCheck) envAssign(name string, value *syntax.Word, naked bool) {
	switch {
	case strings.HasPrefix(name, "BASH_FUNC_"):
		p.fail("cannot tell which program runs (%s defines a function for the shells it starts)", clip(name))
	case name == "BASH_ENV" || name == "ENV":
		if naked || value == nil {
			return
		}
		v, why := staticWord(value)
		if why != "" || stdinPath(v) {
			p.fail("cannot tell which program runs (%s names a start-up file chosen at run time)", name)
		}
	case promptVars[name]:
		p.noteEvaluates(name)
	}
}

// stmt checks one statement: its command, and for a shell that reads its
// code from standard input, where that input comes from.
func (p *programCheck) stmt(st *syntax.Stmt, feeder *syntax.Stmt, depth int) {
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 {
		return
	}
	if p.command(ce.Args, runner{}, depth) && p.why == "" {
		p.stdinCode(st, feeder, depth)
	}
}

// command checks one command's words, ws[0] being the program. It reports
// whether the program reads shell code from its standard input.
func (p *programCheck) command(ws []*syntax.Word, run runner, depth int) bool {
	key := checkedKey{ws[0], run}
	if stdin, ok := p.checked[key]; ok {
		return stdin
	}
	if p.checked == nil {
		p.checked = map[checkedKey]bool{}
	}
	stdin := p.program(ws, run, depth)
	p.checked[key] = stdin
	return stdin
}

// program is command without the memory.
func (p *programCheck) program(ws []*syntax.Word, run runner, depth int) bool {
	if !p.spend(1) {
		return false
	}
	name, why := staticWord(ws[0])
	if why != "" {
		p.fail("cannot tell which program runs (%s)", why)
		return false
	}
	if run.fills != "" && strings.Contains(name, run.fills) {
		p.fail("cannot tell which program runs (%s fills in the program name)", run.name)
		return false
	}
	base := baseName(name)
	args := ws[1:]
	if evaluators[base] && evaluatesArgs(base, args) {
		p.noteEvaluates(base)
	}
	switch {
	case base == "eval":
		p.eval(args, depth)
	case bashLike[base]:
		return p.shell(base, args, run, depth)
	case shells[base]:
		return p.otherShell(base, args, run, depth)
	case base == "find":
		p.find(args, run, depth)
	case base == "xargs":
		p.xargs(args, run, depth)
	case base == "parallel":
		p.parallel(args, run, depth)
	case base == "sg":
		p.sg(args, depth)
	case wrappers[base]:
		stdin, _ := p.wrapper(base, args, run, run, depth)
		return stdin
	case base == "trap":
		p.trap(args, depth)
	case base == "alias":
		p.alias(args)
	case base == "hash":
		p.hash(args)
	case base == "source" || base == ".":
		return p.source(base, args)
	case base == "mapfile" || base == "readarray" || base == "compgen":
		p.callback(base, args, depth)
	}
	return false
}

// code checks shell code that a command will certainly run.
func (p *programCheck) code(src string, who string, depth int) {
	if !p.spend(len(src)) {
		return
	}
	if depth > maxShellDepth {
		p.fail("cannot tell which program runs (shell code is nested too deeply to check)")
		return
	}
	f, err := parseShell(src)
	if err != nil {
		p.fail("cannot tell which program runs (the code %s runs does not parse)", who)
		return
	}
	p.file(f, depth)
}

// consume marks a word as read for code and returns its static value. A
// word that is not static fails the check with what, which says whose code
// it is, and the word itself.
func (p *programCheck) consume(w *syntax.Word, what string) (string, bool) {
	v, why := staticWord(w)
	if why != "" {
		p.fail("cannot tell which program runs (%s: %s)", what, clip(source(w)))
		return "", false
	}
	p.consumedWord(w)
	return v, true
}

// eval runs its arguments, joined by spaces, as shell code.
func (p *programCheck) eval(args []*syntax.Word, depth int) {
	if !p.spend(len(args)) {
		return
	}
	vals := make([]string, 0, len(args))
	for _, w := range args {
		v, ok := p.consume(w, "eval runs code built at run time")
		if !ok {
			return
		}
		vals = append(vals, v)
	}
	p.code(strings.Join(vals, " "), "eval", depth+1)
}

// bashLike are the shells whose options follow sh: -c takes the code from
// the first operand, -o and -O take a value, -s and a missing operand mean
// the code comes from standard input.
var bashLike = setOf("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash")

// shell checks a bash-like shell's words up to its code or script operand.
// Every word before the operand must be static, since an expansion there
// could split into "-c" and code of its choosing; words after it are
// positional parameters, data to the code. A script file is as opaque as
// any other program. It reports whether the shell reads code from standard
// input.
func (p *programCheck) shell(base string, args []*syntax.Word, run runner, depth int) bool {
	withC, fromStdin := false, false
	for i := 0; i < len(args); i++ {
		if !p.spend(1) {
			return false
		}
		v, ok := p.shellWord(base, args[i], run)
		if !ok {
			return false
		}
		switch {
		case v == "-" || v == "--":
			return p.shellOperand(base, args[i+1:], withC, fromStdin, run, depth)
		case v == "--rcfile" || v == "--init-file":
			i++
			if i < len(args) {
				if _, ok := p.shellWord(base, args[i], run); !ok {
					return false
				}
			}
		case strings.HasPrefix(v, "--"):
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			if v[0] == '-' {
				withC = withC || strings.Contains(v, "c")
				fromStdin = fromStdin || strings.Contains(v, "s")
			}
			// -o and -O take the next word as their value.
			if last := v[len(v)-1]; (last == 'o' || last == 'O') && i+1 < len(args) {
				i++
				if _, ok := p.shellWord(base, args[i], run); !ok {
					return false
				}
			}
		default:
			return p.shellOperand(base, args[i:], withC, fromStdin, run, depth)
		}
	}
	return p.shellOperand(base, nil, withC, fromStdin, run, depth)
}

// shellWord checks one word a shell reads before its operand.
func (p *programCheck) shellWord(base string, w *syntax.Word, run runner) (string, bool) {
	v, why := staticWord(w)
	switch {
	case why != "":
		p.fail("cannot tell which program runs (%s runs code built at run time: %s)", base, clip(source(w)))
	case run.fills != "" && strings.Contains(v, run.fills):
		p.fail("cannot tell which program runs (%s fills in the arguments of %s)", run.name, base)
	default:
		return v, true
	}
	return "", false
}

// shellOperand checks what a shell runs once its options are read: the
// -c code, a script, or its standard input.
func (p *programCheck) shellOperand(base string, rest []*syntax.Word, withC, fromStdin bool, run runner, depth int) bool {
	if len(rest) == 0 {
		if run.appends {
			p.fail("cannot tell which program runs (%s supplies the arguments of %s)", run.name, base)
			return false
		}
		return !withC
	}
	if run.fills != "" {
		if _, ok := p.shellWord(base, rest[0], run); !ok {
			return false
		}
	}
	if withC {
		v, ok := p.consume(rest[0], base+" runs code built at run time")
		if ok {
			p.code(v, base, depth+1)
		}
		return false
	}
	v, ok := p.shellWord(base, rest[0], run)
	return ok && (fromStdin || stdinPath(v))
}

// stdinPath reports whether a script path names standard input.
func stdinPath(v string) bool {
	return v == "/dev/stdin" || v == "/dev/fd/0" || v == "/proc/self/fd/0"
}

// otherShell checks a shell whose options this package does not model
// (fish, csh, su, watch, pwsh, ...): every argument must be static, and
// each is read as code, since any of them may be. Unless one is a -c
// style option the shell may read code from standard input.
func (p *programCheck) otherShell(base string, args []*syntax.Word, run runner, depth int) bool {
	if run.appends || run.fills != "" {
		p.fail("cannot tell which program runs (%s supplies the arguments of %s)", run.name, base)
		return false
	}
	fromStdin := base != "watch"
	for _, w := range args {
		if !p.spend(1) {
			return false
		}
		v, ok := p.consume(w, base+" runs code built at run time")
		if !ok {
			return false
		}
		switch strings.ToLower(v) {
		case "-c", "--command", "-command", "/c", "/k":
			fromStdin = false
		}
		p.code(v, base, depth+1)
		if p.why != "" {
			return false
		}
	}
	return fromStdin
}

// stdinCode checks where a shell that reads code from standard input gets
// it. A static here-document or here-string is read as code; a file
// redirect is as opaque as a script; a pipe is accepted only from an echo
// of static words, whose output is known. Anything else, the standard
// input the command inherits included, is code nobody can read here.
func (p *programCheck) stdinCode(st *syntax.Stmt, feeder *syntax.Stmt, depth int) {
	name := source(st.Cmd.(*syntax.CallExpr).Args[0])
	var in *syntax.Redirect
	for _, r := range st.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			in = r
		}
	}
	switch {
	case in == nil && feeder != nil:
		if code, ok := echoOutput(feeder); ok {
			p.code(code, name, depth+1)
			return
		}
		p.fail("cannot tell which program runs (%s runs code from a pipe)", name)
	case in == nil:
		p.fail("cannot tell which program runs (%s runs code from standard input)", name)
	case in.Op == syntax.Hdoc || in.Op == syntax.DashHdoc:
		if code, ok := heredocText(in); ok {
			p.consumedWord(in.Hdoc)
			p.code(code, name, depth+1)
			return
		}
		p.fail("cannot tell which program runs (%s runs a here-document built at run time)", name)
	case in.Op == syntax.WordHdoc:
		if v, ok := p.consume(in.Word, name+" runs a here-string built at run time"); ok {
			p.code(v+"\n", name, depth+1)
		}
	case in.Op == syntax.RdrIn:
		if v, why := staticWord(in.Word); why != "" || stdinPath(v) {
			p.fail("cannot tell which program runs (%s runs code from a file chosen at run time)", name)
		}
	default:
		p.fail("cannot tell which program runs (%s runs code from a descriptor)", name)
	}
}

// consumedWord marks a word as read for code.
func (p *programCheck) consumedWord(w *syntax.Word) {
	if p.consumed == nil {
		p.consumed = map[*syntax.Word]bool{}
	}
	p.consumed[w] = true
}

// echoOutput returns what a pipeline stage writes when it is a plain echo
// of static words: no options (-e would decode escapes) and no backslashes
// (some builds of echo decode them anyway).
func echoOutput(st *syntax.Stmt) (string, bool) {
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Assigns) > 0 || len(ce.Args) == 0 || len(st.Redirs) > 0 {
		return "", false
	}
	if v, why := staticWord(ce.Args[0]); why != "" || v != "echo" {
		return "", false
	}
	vals := make([]string, 0, len(ce.Args)-1)
	for _, w := range ce.Args[1:] {
		v, why := staticWord(w)
		if why != "" || strings.HasPrefix(v, "-") || strings.Contains(v, `\`) {
			return "", false
		}
		vals = append(vals, v)
	}
	return strings.Join(vals, " ") + "\n", true
}

// heredocText returns a here-document's text as the shell reading it sees
// it, when it holds no expansion. Under a quoted delimiter the text is
// literal; otherwise a backslash before $, `, \ or a newline is removed.
func heredocText(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	quoted := false
	for _, part := range r.Word.Parts {
		if lit, ok := part.(*syntax.Lit); !ok || strings.Contains(lit.Value, `\`) {
			quoted = true
		}
	}
	var b strings.Builder
	for _, part := range r.Hdoc.Parts {
		lit, ok := part.(*syntax.Lit)
		if !ok {
			return "", false
		}
		if quoted {
			b.WriteString(lit.Value)
		} else {
			b.WriteString(unescapeHeredoc(lit.Value))
		}
	}
	return b.String(), true
}

// unescapeHeredoc removes the backslashes an unquoted here-document
// removes: before $, `, \ and a newline.
func unescapeHeredoc(s string) string { return unescapeBefore(s, "$`\\\n") }
