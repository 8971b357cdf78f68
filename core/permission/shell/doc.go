// Package shell reads a bash command line the way the permission rules
// need it read: which programs it runs, with which words, and whether that
// can be told from the text at all. Analyze parses the line with the bash
// grammar of mvdan.cc/sh and records every simple command anywhere in it,
// inside pipelines, substitutions, subshells and function bodies, behind
// wrappers such as env, sudo, timeout, xargs and find -exec, and in code
// handed to eval, sh -c, trap or a shell's standard input, parsed again to
// a bounded depth and within a bounded amount of work. A line that does not
// parse is split roughly instead, so deny and ask rules still see it.
//
// A Command answers the questions of package permission's Bash rules:
// Allows says whether an allow rule covers the whole line, which only a
// single plain simple command can be; Touches says whether a deny or ask
// rule matches any command inside it. Dynamic says why the programs cannot
// be told, when some program name, or some code given to eval or another
// shell, is built at run time (an expansion, a substitution, a glob, a
// brace expansion, a leading ~, a wrapper whose program xargs or find
// fills in, an alias, text bash may evaluate as arithmetic or a prompt, a
// line that does not parse); the policy then fails closed. Words returns
// the words of a plain simple command, for suggesting a prefix rule, and
// RunsOtherCommands reports the programs such a rule must never cover.
//
// It is a package of its own because it is a self-contained analysis of
// shell syntax, about half of the permission code, that knows nothing of
// rule syntax, tools, paths or grants: package permission hands it a
// command and a specifier and gets back a yes or no. Of the product code,
// only this package depends on the bash parser.
package shell
