// Package skill finds and parses skills: Markdown instructions stored as
// <root>/<name>/SKILL.md, each with an optional frontmatter of simple
// "key: value" lines.
//
// A skill whose frontmatter says "runAs: subagent" is a subagent profile:
// its body is the whole system prompt of an isolated child session. Two
// built-in profiles, explore and review, exist without any file; a project
// or user skill of the same name replaces them.
//
// Load reads the roots in precedence order (project, user, configured
// paths, built-ins), so a name defined in a higher root hides the same name
// below it. A malformed file never fails the load: it is skipped and
// reported as a Warning. Resolve picks a profile's model and reasoning
// effort from the call, the profile and the [agent] configuration; it is
// pure.
//
// The package reads files but keeps no state beyond the Store it returns
// and starts no goroutines.
package skill
