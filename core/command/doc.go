// Package command holds the slash commands of a chat: the built-in ones a
// frontend handles itself, and custom commands, Markdown templates the
// user keeps in files.
//
// A custom command is a *.md file under a commands directory, the user's
// (<home>/commands) or the project's (<workspace>/.reasonix/commands);
// its path names it, with subdirectories as namespaces ("git/commit.md"
// is /git:commit). The file may open with a frontmatter of simple
// "key: value" lines; the rest is the body, a template whose $ARGUMENTS,
// $1…$N and $$ are filled in from what follows the command.
//
// Loading never fails as a whole: a file that cannot be used is skipped
// and reported as a Problem, so one bad file never hides the others. The
// package is pure apart from reading those files, and starts no
// goroutines.
package command
