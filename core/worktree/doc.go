// Package worktree gives each writer subagent its own git worktree and
// brings its work back: Snapshot commits the parent's working tree as it is
// (without touching the real index, HEAD or any branch), Add checks that
// snapshot out on a new branch in a new worktree, Commit records what the
// writer left there, and Merge three-way merges it into the parent's working
// tree, writing nothing when anything conflicts.
//
// The agent inside a worktree is untrusted and may rewrite any file there,
// the `.git` pointer file included. So every git command about a worktree
// names its admin directory (learned from the main repository's own records,
// never from that pointer) and its work tree explicitly; no command runs
// hooks (core.hooksPath=/dev/null, and plumbing rather than porcelain
// commit or merge); commits carry a fixed identity; and Merge writes regular
// files only, each with atomicfile.Write, never through or as a symlink,
// never into a `.git` component, and only over a file that still holds what
// the merge was computed against.
//
// git 2.39 lacks `merge-tree --merge-base`, so Merge gets the same effect by
// giving both sides of the merge a commit whose only parent is the base.
//
// Content is taken from, and written back to, the object store unconverted:
// core.autocrlf is forced off, and a file whose working-tree bytes differ
// from what git records for it (a text/eol or filter attribute) cannot be
// verified before it is overwritten, so Merge reports it as a conflict.
// Worktrees belong outside Root or in a directory Root ignores, or
// snapshots of Root would record them as embedded repositories.
package worktree
