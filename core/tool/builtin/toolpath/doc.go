// Package toolpath turns the path arguments the model gives the built-in
// tools into filesystem paths, and filesystem paths back into the text the
// tools show.
//
// A path goes through env.Guard when one is set (ResolveRead and
// ResolveWrite ask its read and write policies) and otherwise resolves
// against env.Root; results name paths relative to the root with forward
// slashes, so they read the same from any checkout and keep the prompt
// cache warm.
//
// It is a package of its own because both core/tool/builtin and its
// sub-package core/tool/builtin/search resolve and display paths the same
// way, and the search tools cannot import the package that links them in.
package toolpath
