// Package gitignore decides which paths of a workspace git would ignore, so
// the search and listing tools show the model the same files a developer sees.
//
// Patterns follow gitignore(5): comments, blank lines, trailing-space
// trimming, "!" negation, "/" anchoring, trailing "/" for directories only,
// "*", "?", bracket classes, "**" in leading, middle and trailing position,
// and backslash escapes, matched with the same algorithm as git's wildmatch.
// A .gitignore file governs its own directory and everything below it, a
// deeper file overrides a shallower one, and .git/info/exclude sits beneath
// them all. When the workspace root lies inside a repository, the .gitignore
// files between the repository top and the root apply too. Directories
// named .git are always ignored.
//
// Two deliberate differences from git: rules apply whether or not a
// repository is present, and matching is case-sensitive on every platform
// (core.ignoreCase and core.excludesFile are not consulted).
//
// Rules load lazily, one directory at a time, as a walk descends; a Matcher
// and the Dir values it hands out are safe for concurrent use.
package gitignore
