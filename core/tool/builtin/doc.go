// Package builtin holds the tools every run can offer without plugins: file
// reading, writing and editing, directory listing and the shell. The search
// tools, glob and grep, live in the sub-package search, which this package
// blank-imports, so importing builtin still brings every built-in.
//
// Each tool registers a factory with tool.RegisterBuiltin from init, so a
// binary gains them with a blank import and the parent package never imports
// this one. A factory captures the run's tool.Env; tools keep no other state,
// so one instance may serve concurrent calls.
//
// Paths from the model go through env.Guard when one is set, otherwise they
// resolve against env.Root (the sub-package toolpath does this for every
// built-in, search included). A path the guard refuses, named outright,
// fails with the guard's reason. Tools that walk directories (ls, glob,
// grep) ask the guard about every entry, leave out what it will not let be
// read and end with a line counting what they left out, never naming it.
// move_file moves a directory only when the guard allows every entry below
// it to move, so moving an ancestor cannot carry a protected file out from
// under its rule.
//
// Results are plain, deterministic text (sorted, no timestamps, paths
// relative to the workspace root) because they become part of the cached
// prompt prefix. Failures are returned as errors whose text is written for
// the model to read and correct its next call; they never end the session.
package builtin

import (
	// glob and grep register themselves from their package's init.
	_ "reasonix/core/tool/builtin/search"
)
