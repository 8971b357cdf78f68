// Package permission decides, for each tool call, whether it runs, is
// blocked, or waits for the user: Allow, Deny or Ask. It holds no state
// about the session beyond the Grants a user hands out, and apart from
// PersistRule and the resolver a caller may give it (Policy.Resolve) it
// does no I/O, so every decision is a function of the policy, the posture,
// the call and, with a resolver, where its paths really lead.
//
// A Policy is three rule lists and a fallback. Deny beats ask, ask beats
// allow, and when no rule matches a read-only tool is allowed while a
// writer gets the configured mode (ask by default). Bash and file
// mutations always count as writers. Explain returns the decision together
// with the rule responsible, so a blocked call can say which rule blocked
// it. A runtime Posture relaxes only Ask outcomes: auto allows writers no
// rule mentions, yolo waives ask rules too; a deny always holds.
//
// Rules are written Tool or Tool(specifier). Bash names the shell tool,
// Edit every built-in file mutation (write_file, edit_file, multi_edit,
// move_file) and Read every built-in reader (read_file, ls, glob, grep);
// any other name, such as mcp__server__tool, is one tool, compared exactly.
// Older spellings still load: lower-case names, tool=specifier, and the
// "cmd *" prefix form.
//
// The subject a specifier is compared with comes from the call's JSON
// arguments, decoded exactly as the tools decode them: command for Bash,
// path, file_path and (for move_file) destination for Edit and Read, and
// glob's pattern under its directory. A specifier whose subject the
// arguments do not expose never matches; the bare rule still does.
//
// Bash specifiers are "cmd:*" (the command starts with these words),
// "cmd*" (the text starts with these characters) and "cmd" (exactly this
// command). Commands are parsed with a bash parser (the analysis lives in
// package [reasonix/core/permission/shell]), never matched as text alone,
// and the two directions are deliberately asymmetric. An allow rule
// covers a command only when the whole command is one plain simple command
// (no operators, substitutions, expansions, assignments, redirections other
// than 2>&1 and /dev/null, and no wrapper such as sh -c, eval, env, sudo or
// xargs) whose words match; an exact rule also covers its identical text.
// A deny or ask rule applies when any simple command anywhere inside
// matches, including pipelines, substitutions, subshells, wrappers, find
// -exec and code passed to another shell, parsed recursively to a bounded
// depth. A command that does not parse is never allowed by a specifier;
// deny and ask rules still see its raw text and a rough split of it.
//
// Rules name programs, so they fail closed on a command that hides which
// program runs: a program name that is not a static word (built by an
// expansion or substitution, a glob, a brace expansion or a leading ~),
// anywhere, inside wrappers and nested shell code too; code for eval, sh
// -c, trap or a shell's standard input that is built at run time or comes
// from a pipe; a wrapper whose program xargs or find -exec fills in; an
// alias or hash -p; quoted text holding $( where bash may evaluate it as
// arithmetic or a prompt; a command that does not parse. No allow rule
// with a specifier covers such a command. If any Bash deny rule has a
// specifier the first one denies it, saying that it cannot tell which
// program runs and why; else the first Bash ask rule with a specifier asks.
// A command whose every program name is written out is judged by name as
// above. Bare rules match every command either way.
//
// Edit and Read specifiers are path globs in which "**" spans directories;
// a relative glob is taken from the workspace root, "~/" is the user's
// home, and a trailing "/" covers everything below. An allow must match
// every path a call touches (both ends of a move), a deny or ask any one.
// Given a resolver, each path is also held against the rules by its real
// location, symlinks followed the way the kernel follows them, and each
// glob is also spelled through the real path of the root and of its fixed
// leading directories; an allow must then hold for every reading and a
// deny for any, and a path whose real location cannot be found is
// matched by every deny and ask glob and by no allow glob. PathDenied
// answers the same question for a path guard that has already resolved a
// path, without I/O, and EditPaths lists the paths an Edit call writes.
//
// A panic while matching never lets a call through: Explain then answers
// Deny, or Ask under the ask posture so a person can still decide.
//
// Policy.Suggest proposes rules for "allow for the session" and "always
// allow" answers, Grants keeps the session ones, and PersistRule writes a
// permanent one into the project's config file.
package permission
