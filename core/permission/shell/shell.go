package shell

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxShellDepth bounds how deep command strings handed to another shell
// (bash -c '...', eval '...') are parsed. Past it, the text is only split
// roughly, which still lets deny and ask rules see the commands in it.
const maxShellDepth = 4

// maxShellWork bounds the work spent looking for commands in one command
// line: bytes of nested code parsed plus commands recorded. A command line
// that needs more is treated as matching every deny and ask rule that has a
// specifier, so no input is both too costly to check and let through.
const maxShellWork = 1 << 20

// Command is what the analysis found in one bash command line: whether it
// parsed, its words when it is one plain simple command, every simple
// command inside it, and why its programs cannot be told when they cannot.
// Build it with Analyze; it is not changed afterwards.
type Command struct {
	raw    string // the command, trimmed
	parsed bool   // the command parsed as bash
	// words are the arguments of the command when it is exactly one plain
	// simple command (see plainWords), else nil. Only such a command can
	// be covered by an allow rule with a specifier.
	words []string
	// commands lists every simple command found anywhere in the text,
	// including inside substitutions and strings passed to another shell.
	// Deny and ask rules are checked against each of them.
	commands []simpleCommand
	// overflow is set when the search for commands gave up (maxShellWork).
	overflow bool
	// dynamic says, when it is not "", why the program some part of the
	// command runs cannot be read from its text: a program name built at
	// run time, code for eval or a shell built at run time, a command
	// that does not parse. Rules match program names, so such a command
	// is covered by no allow rule with a specifier and is taken to match
	// every deny and ask rule that has one (see
	// permission.Policy.Explain).
	dynamic string
}

// Words returns the arguments of the command when it is exactly one plain
// simple command: a single statement that calls a program with literal
// words and nothing else (no operators, expansions, assignments, or
// redirections other than descriptor duplication such as 2>&1 and
// /dev/null). Otherwise it returns nil.
// The caller must not modify the slice.
func (sc *Command) Words() []string { return sc.words }

// Dynamic returns, when it is not "", why the program some part of the
// command runs cannot be read from its text, as a phrase such as "cannot
// tell which program runs ($X builds the program name at run time)".
func (sc *Command) Dynamic() string { return sc.dynamic }

// simpleCommand is a command name and its arguments as deny and ask rules
// see them: quotes removed where the text is literal, source text where it
// is not.
type simpleCommand struct {
	name string
	args []string
}

// hasTextPrefix reports whether the command, written with single spaces
// between its words, starts with prefix. This is how a character prefix
// rule such as Bash(rm -rf*) sees a command. It looks at no more words than
// the prefix needs, since a command can have very many arguments.
func (s simpleCommand) hasTextPrefix(prefix string) bool {
	rest, ok := strings.CutPrefix(prefix, s.name)
	if !ok {
		return strings.HasPrefix(s.name, prefix)
	}
	for _, a := range s.args {
		if rest == "" {
			return true
		}
		if rest, ok = strings.CutPrefix(rest, " "); !ok {
			return false
		}
		if r, ok := strings.CutPrefix(rest, a); ok {
			rest = r
			continue
		}
		return strings.HasPrefix(a, rest)
	}
	return rest == ""
}

// Analyze parses a bash command line and finds the commands it runs, for
// Allows and Touches to match rules against. A command that does not
// parse keeps words nil, so no allow rule with a specifier covers it, and
// its commands come from a rough split that deny and ask rules can still
// catch.
// A NUL byte cannot be passed to a program, and shells drop it from code
// they read, so a command holding one is never allowed by a specifier and
// deny and ask rules see it with the NULs removed.
func Analyze(cmd string) *Command {
	sc := &Command{raw: strings.TrimSpace(cmd)}
	var c collector
	text := strings.ReplaceAll(sc.raw, "\x00", "")
	f, err := parseShell(text)
	switch {
	case err != nil:
		c.rough(text)
		// Bash runs the lines before a syntax error, and this parser may
		// reject what bash accepts: what runs cannot be told.
		sc.dynamic = "cannot tell which program runs (the command does not parse)"
	case text != sc.raw:
		c.file(f, 0)
		c.rough(sc.raw)
	default:
		sc.parsed = true
		sc.words = plainWords(f)
		c.file(f, 0)
	}
	sc.commands, sc.overflow = c.out, c.overflow
	if err == nil {
		sc.dynamic = checkPrograms(f)
	}
	if sc.dynamic == "" && c.undecodable != "" {
		sc.dynamic = "cannot tell which program runs (" + c.undecodable + " cannot be decoded)"
	}
	return sc
}

// parseShell parses src with the bash grammar, the shell the bash tool runs.
func parseShell(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

// plainWords returns the argument values of f when f is exactly one plain
// simple command: a single statement, not negated or backgrounded and with
// no terminating operator, that calls a program with words made only of
// unquoted, single-quoted or double-quoted literal text. There are no
// variable assignments, no expansions or substitutions of any kind, and no
// redirections except duplicating a descriptor (2>&1) and reading from or
// writing to /dev/null. Anything else yields nil.
func plainWords(f *syntax.File) []string {
	if len(f.Stmts) != 1 {
		return nil
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess || st.Disown || st.Semicolon.IsValid() {
		return nil
	}
	for _, r := range st.Redirs {
		if !harmlessRedirect(r) {
			return nil
		}
	}
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Assigns) != 0 || len(ce.Args) == 0 {
		return nil
	}
	words := make([]string, 0, len(ce.Args))
	for _, w := range ce.Args {
		v, ok := literal(w)
		if !ok {
			return nil
		}
		words = append(words, v)
	}
	return words
}

// harmlessRedirect accepts the redirections that cannot write a file or
// feed the command anything: 2>&1-style descriptor duplication and
// /dev/null as a source or sink.
func harmlessRedirect(r *syntax.Redirect) bool {
	if r.Hdoc != nil || (r.N != nil && !allDigits(r.N.Value)) {
		return false
	}
	v, ok := literal(r.Word)
	if !ok {
		return false
	}
	switch r.Op {
	case syntax.DplOut, syntax.DplIn:
		return v == "-" || allDigits(v)
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrIn:
		return v == "/dev/null"
	default:
		return false
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// literal returns the value of a word made only of literal text, with the
// quoting removed as bash would remove it. It reports false for anything
// that expands at run time, and for $'...' and $"..." quoting, which it
// does not try to interpret.
func literal(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeBare(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, inner := range p.Parts {
				lit, ok := inner.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescapeBare removes the backslashes of unquoted text: \x is x, and a
// backslash-newline joins lines.
func unescapeBare(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes that are special inside double
// quotes (before $ ` " \ and newline); any other backslash is literal.
func unescapeDouble(s string) string { return unescapeBefore(s, "$`\"\\\n") }

// unescapeBefore removes each backslash that stands before one of the
// characters in special (a backslash-newline joins lines); any other
// backslash is literal.
func unescapeBefore(s, special string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(special, s[i+1]) >= 0 {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// shells run their arguments, or their standard input, as shell code.
var shells = setOf("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish",
	"csh", "tcsh", "pwsh", "powershell", "cmd", "su", "script", "watch")

// codeTakers run some of their arguments as shell code, as a shell's -c
// does: trap's action, flock -c, sg's command, the callback of mapfile -C
// and compgen -C, and GNU parallel's inputs when it has no command.
var codeTakers = setOf("trap", "flock", "runuser", "sg", "mapfile", "readarray", "compgen", "parallel")

// wrappers run the command formed by some of their arguments: env VAR=1 rm,
// sudo -u x rm, xargs rm, timeout 5 rm.
var wrappers = setOf("env", "sudo", "doas", "command", "builtin", "exec", "nohup",
	"nice", "ionice", "timeout", "time", "stdbuf", "setsid", "xargs", "chroot",
	"unshare", "nsenter", "flock", "strace", "ltrace", "valgrind", "caffeinate",
	"chrt", "taskset", "runuser", "sg", "fakeroot", "proxychains", "torsocks",
	"busybox", "watch", "parallel", "unbuffer", "systemd-run", "run0")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// RunsOtherCommands reports whether a command with this name could run a
// command that is not its own first words. A prefix rule never covers
// such a command: Bash(env:*) or Bash(bash:*) would cover everything.
func RunsOtherCommands(name string) bool {
	base := baseName(name)
	return shells[base] || wrappers[base] || base == "eval" || base == "source" || base == "."
}

// baseName strips a directory (either separator) and a Windows .exe suffix,
// so /bin/rm and rm.exe are seen as rm.
func baseName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if len(name) > 4 && strings.EqualFold(name[len(name)-4:], ".exe") {
		name = name[:len(name)-4]
	}
	return name
}

// collector gathers every simple command of a script for deny and ask
// matching. It errs toward finding too many commands: a false match can
// only make a deny or ask rule stricter.
type collector struct {
	out      []simpleCommand
	work     int
	overflow bool
	// undecodable is the first $'...' string the expander could not
	// decode, or "".
	undecodable string
}

// spend charges n units of work and reports whether the budget still
// allows more.
func (c *collector) spend(n int) bool {
	c.work += n
	if c.work > maxShellWork {
		c.overflow = true
	}
	return !c.overflow
}

// file records the simple commands of a parsed script. When the script
// runs another shell or eval, every argument and here-document of the
// script may be code that shell executes (bash -c '...', echo '...' | sh,
// sh <<EOF), so each is parsed in turn, one level deeper, as it reads with
// every variable unset.
func (c *collector) file(f *syntax.File, depth int) {
	feedsShell := false
	var texts []string
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CallExpr:
			if len(x.Args) == 0 {
				return true
			}
			words := make([]string, len(x.Args))
			for i, w := range x.Args {
				words[i] = render(w)
				if i > 0 {
					v, _ := c.emptyEnvValue(w)
					texts = append(texts, v)
				}
			}
			if c.add(words, depth) {
				feedsShell = true
			}
			// Seen with every variable unset, r${X}m or $EMPTY rm is rm.
			if alt := c.emptyEnvWords(x.Args); len(alt) > 0 && !equalWords(alt, words) && c.add(alt, depth) {
				feedsShell = true
			}
		case *syntax.Redirect:
			if x.Hdoc != nil {
				texts = append(texts, render(x.Hdoc))
			}
			if x.Op == syntax.WordHdoc && x.Word != nil {
				texts = append(texts, render(x.Word))
			}
		}
		return true
	})
	if feedsShell {
		for _, t := range texts {
			c.script(t, depth+1)
		}
	}
}

// script records the commands of shell code found inside another command.
func (c *collector) script(src string, depth int) {
	if !c.spend(len(src)) {
		return
	}
	if depth > maxShellDepth {
		c.rough(src)
		return
	}
	f, err := parseShell(src)
	if err != nil {
		c.rough(src)
		return
	}
	c.file(f, depth)
}

// unquoteRough drops quoting characters from a roughly split word.
var unquoteRough = strings.NewReplacer(`'`, "", `"`, "", `\`, "")

// rough splits text that could not be parsed at the characters that
// separate or nest commands, and takes each piece's fields, without their
// quotes, as a command, as does every tail of them. It cannot be exact; it
// only has to give deny and ask rules a fair chance at text bash might
// still run, and erring toward more commands only makes them stricter.
func (c *collector) rough(src string) {
	if !c.spend(len(src)) {
		return
	}
	pieces := strings.FieldsFunc(src, func(r rune) bool {
		return strings.ContainsRune(";&|\n\r`(){}$<>", r)
	})
	for _, piece := range pieces {
		fields := strings.Fields(piece)
		words := fields[:0]
		for _, f := range fields {
			f = unquoteRough.Replace(f)
			if f != "" {
				words = append(words, f)
			}
		}
		// Any word may start a command that some wrapper, shell or eval in
		// the text runs, so every tail is a candidate.
		for i := range words {
			c.push(words[i], words[i+1:])
		}
	}
}

// push records one command under its written name and its base name.
func (c *collector) push(name string, args []string) {
	if !c.spend(1) {
		return
	}
	c.out = append(c.out, simpleCommand{name: name, args: args})
	if base := baseName(name); base != name {
		c.out = append(c.out, simpleCommand{name: base, args: args})
	}
}

// add records one simple command and, for a wrapper such as sudo or xargs,
// every tail of its arguments as a command of its own: which argument a
// wrapper runs depends on its options, so all candidates are kept. It
// reports whether any of them runs shell code from its arguments or input.
func (c *collector) add(words []string, depth int) bool {
	shell := c.one(words, depth)
	base := baseName(words[0])
	if base == "command" && len(words) > 1 && (words[1] == "-v" || words[1] == "-V") {
		return shell // command -v rm only asks where rm is
	}
	if wrappers[base] {
		for i := 1; i < len(words); i++ {
			if c.one(words[i:], depth) {
				shell = true
			}
		}
	}
	return shell
}

// one records words as a command, under its written name and its base
// name, and follows the commands it runs itself: eval's joined arguments
// and find's -exec clauses. It reports whether the command is a shell, eval
// or another command that runs code given as text.
func (c *collector) one(words []string, depth int) bool {
	name, args := words[0], words[1:]
	c.push(name, args)
	base := baseName(name)
	switch {
	case shells[base], codeTakers[base]:
		return true
	case base == "env":
		// env -S splits one word into a command line of its own.
		shell := false
		for _, a := range args {
			switch {
			case a == "-S" || a == "--split-string":
				shell = true
			case strings.HasPrefix(a, "--split-string="):
				c.script(strings.TrimPrefix(a, "--split-string="), depth+1)
			case strings.HasPrefix(a, "-S"):
				c.script(a[2:], depth+1)
			}
		}
		return shell
	case base == "eval":
		if c.spend(len(args)) {
			c.script(strings.Join(args, " "), depth+1)
		}
		return true
	case base == "find":
		shell := false
		if !c.spend(len(args)) {
			return false
		}
		for _, clause := range findExecClauses(args) {
			if c.add(clause, depth) {
				shell = true
			}
		}
		return shell
	}
	return false
}

// findExecClauses returns the commands of find's -exec, -execdir, -ok and
// -okdir actions, each ending at ";" or "+".
func findExecClauses(args []string) [][]string {
	var out [][]string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(args) && args[j] != ";" && args[j] != "+" {
			j++
		}
		if j > i+1 {
			out = append(out, args[i+1:j])
		}
		i = j
	}
	return out
}

// render gives a word's value when it is literal and its source text when
// it is not, so a deny rule can still see "rm -rf $HOME".
func render(w *syntax.Word) string {
	if v, ok := literal(w); ok {
		return v
	}
	return source(w)
}

// emptyEnvWords renders a command's words as bash would with every
// variable unset: parameter expansions become empty (or their ${x:-default}
// word), $'...' escapes are decoded, and unquoted words that end up empty
// disappear. Command substitutions and arithmetic keep their source text.
// It gives deny and ask rules a second look at commands whose name or
// arguments are assembled from expansions.
func (c *collector) emptyEnvWords(args []*syntax.Word) []string {
	var out []string
	for _, w := range args {
		v, quoted := c.emptyEnvValue(w)
		if v != "" || quoted {
			out = append(out, v)
		}
	}
	return out
}

// emptyEnvValue renders one word for emptyEnvWords and reports whether any
// part of it was quoted (a quoted empty word is still an argument). A
// $'...' string it cannot decode is kept as written and recorded in
// c.undecodable, since the rules can then no longer tell what it says.
func (c *collector) emptyEnvValue(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	quoted := false
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeBare(p.Value))
		case *syntax.SglQuoted:
			quoted = true
			if !p.Dollar {
				b.WriteString(p.Value)
			} else if v, ok := ansiC(p); ok {
				b.WriteString(v)
			} else {
				if c.undecodable == "" {
					c.undecodable = clip(source(p))
				}
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			quoted = true
			for _, inner := range p.Parts {
				switch q := inner.(type) {
				case *syntax.Lit:
					b.WriteString(unescapeDouble(q.Value))
				case *syntax.ParamExp:
					b.WriteString(c.paramDefault(q))
				default:
					b.WriteString(source(inner))
				}
			}
		case *syntax.ParamExp:
			b.WriteString(c.paramDefault(p))
		default:
			b.WriteString(source(part))
		}
	}
	return b.String(), quoted
}

// paramDefault is the value of a parameter expansion when the variable is
// unset: the default word of ${x-w}, ${x:-w}, ${x=w} and ${x:=w}, else "".
func (c *collector) paramDefault(p *syntax.ParamExp) string {
	if p.Exp == nil || p.Exp.Word == nil {
		return ""
	}
	switch p.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		v, _ := c.emptyEnvValue(p.Exp.Word)
		return v
	}
	return ""
}

// expandLiteral is the shell library's expander; a test swaps it for one
// that fails, which nothing else can make it do on demand.
var expandLiteral = expand.Literal

// ansiC decodes a $'...' string with the shell library's expander, which
// knows every escape bash does. A fresh Config is passed on purpose: a nil
// one makes the library share and modify a package-level Config. It
// reports false when the expander fails or panics: the text as written is
// not what bash would see, so nothing may be concluded from it.
func ansiC(q *syntax.SglQuoted) (v string, ok bool) {
	defer func() {
		if recover() != nil {
			v, ok = "", false
		}
	}()
	v, err := expandLiteral(&expand.Config{}, &syntax.Word{Parts: []syntax.WordPart{q}})
	return v, err == nil
}

// source prints a node back as shell text.
func source(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil {
		return ""
	}
	return b.String()
}
