package skill

import (
	"fmt"
	"slices"
	"strings"
)

// FileName is the file that makes a directory a skill.
const FileName = "SKILL.md"

// Source says where a skill was defined. It decides precedence and is shown
// to users so they know which file to edit.
type Source string

// The sources, highest precedence first.
const (
	SourceProject Source = "project"
	SourceUser    Source = "user"
	SourcePath    Source = "path"
	SourceBuiltin Source = "built-in"
)

// Invocation says whether the model may discover and use a skill on its own
// (auto) or only a user's explicit request runs it (manual).
type Invocation string

// The invocation modes.
const (
	InvocationAuto   Invocation = "auto"
	InvocationManual Invocation = "manual"
)

// RunAsSubagent is the runAs value that marks a subagent profile.
const RunAsSubagent = "subagent"

// Skill is one parsed SKILL.md (or a built-in profile).
type Skill struct {
	// Name identifies the skill; it defaults to the directory name.
	Name string
	// Description is one line saying what the skill is for.
	Description string
	// RunAs is the runAs value as written; "subagent" makes a profile.
	RunAs string
	// Model is a model reference (provider, model or provider/model);
	// empty leaves the choice to configuration.
	Model string
	// Effort is the reasoning effort passed to the model.
	Effort string
	// Invocation is auto unless the frontmatter says manual.
	Invocation Invocation
	// Tools, when not empty, limits the tools a subagent run may use.
	Tools []string
	// Body is the Markdown after the frontmatter, surrounding blank space
	// removed.
	Body string
	// Extra holds the frontmatter keys the package does not recognise,
	// kept so nothing written by another tool is lost.
	Extra map[string]string
	// Source and Path say where the skill was found; Path is the SKILL.md
	// file and is empty for built-ins.
	Source Source
	Path   string
}

// IsProfile reports whether the skill is a subagent profile.
func (s Skill) IsProfile() bool {
	return strings.EqualFold(strings.TrimSpace(s.RunAs), RunAsSubagent)
}

// Profile is a skill that runs as an isolated subagent.
type Profile struct {
	Skill
}

// genericPrompt is the system prompt of a profile whose body is empty: the
// caller still needs a self-contained final answer.
const genericPrompt = `You are a subagent carrying out one task for a caller in the user's repository. Use the tools you have, stay within the task, and do not ask questions: make reasonable assumptions and state them.

Your final message is the only thing the caller sees, so make it a complete, self-contained answer. Refer to code as path:line.`

// SystemPrompt is the child session's whole system prompt: the body, or a
// short generic subagent prompt when the body is empty.
func (p Profile) SystemPrompt() string {
	if p.Body == "" {
		return genericPrompt
	}
	return p.Body
}

// Allows reports whether the profile may use the named tool: every tool
// when the profile lists none, else only the listed ones.
func (p Profile) Allows(tool string) bool {
	return len(p.Tools) == 0 || slices.Contains(p.Tools, tool)
}

// Warning reports a skill file or root that was skipped.
type Warning struct {
	// Path is the file or directory concerned.
	Path string
	// Err says what was wrong.
	Err error
}

// String renders the warning for a terminal.
func (w Warning) String() string {
	return fmt.Sprintf("skill %s: %v", w.Path, w.Err)
}
