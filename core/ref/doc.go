// Package ref resolves the @path references of a chat message into blocks
// the model can read, and completes a partial reference one directory
// level at a time for an autocomplete menu.
//
// A word that starts with @ is a reference only when the path after it
// exists on disk; anything else (an email address, an @mention, an
// @server:uri MCP resource, which the session resolves) stays literal.
// Relative paths resolve against the workspace root and may not climb out
// of it; absolute paths are taken as written, because a reference is a
// read the user asked for, not one the model chose. A path named directly
// is followed through symlinks like any read; a directory listing never
// descends into a symlinked directory, so a listing stays inside the tree
// it names and cannot loop.
//
// Expand reads files but keeps no state and starts no goroutines; every
// read is bounded by the caps in Options.
package ref
