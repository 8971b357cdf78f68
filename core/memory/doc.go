// Package memory keeps the facts an agent was asked to remember across
// sessions, and offers the memory, remember and forget tools over them.
//
// A memory is one Markdown file, <name>.md, with a short frontmatter (name,
// description, scope, updated) above the fact itself. Project memories live
// in <project>/.reasonix/memory/, user memories (shared by every project) in
// <home>/memory/. When both scopes hold the same name, the project's memory
// is the one in force and the user's is reported as hidden behind it.
//
// Nothing is ever deleted: forgetting a memory moves its file into the
// scope's archive/ folder under a timestamped name, where search, list and
// read no longer see it but a person still can. Every write replaces the
// file atomically, so a crash leaves the old memory or the new one.
//
// Search ranks the active memories with BM25 (SQLite FTS5 in memory, built
// per query: memories are few and small) and keeps only hits within a fixed
// fraction of the best score, so a match on common words alone does not
// bury the one that matters.
//
// remember and forget change what every later session is told, so they
// implement tool.FreshApproval: a person approves each call, and where
// nobody can (headless runs, subagents) the call is refused.
package memory
