// Package search holds the built-in tools that search the workspace tree:
// glob, which finds files by path pattern, and grep, which searches file
// contents with a regular expression.
//
// Both register with tool.RegisterBuiltin from init, like the other
// built-ins; core/tool/builtin blank-imports this package, so a binary that
// imports builtin gets them too. They share a walk of the tree that applies
// the workspace's .gitignore files, asks env.Guard about every entry and
// counts what it refuses without naming it, and one glob compiler (grep's
// include filter is a glob). Results are deterministic: grep searches in
// parallel but keeps the first matches in path order however its workers
// interleave.
//
// It is a package of its own because grep, with its parallel walker and
// literal-prefiltered line matcher, is the largest tool and is built on
// glob's walk and glob compiler, while neither needs anything of the
// file-editing tools or the shell; paths are resolved and shown through
// core/tool/builtin/toolpath, as the other built-ins do.
package search
