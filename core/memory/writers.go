package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"reasonix/core/text"
	"reasonix/core/tool"
)

// previewRunes bounds the content an approval request quotes: enough to
// judge the fact, short enough for one line of a prompt.
const previewRunes = 160

// remember saves or updates one memory. It needs a person's approval for
// every call (tool.FreshApproval).
type remember struct{ env tool.Env }

type rememberArgs struct {
	Name        string `json:"name"`
	Content     string `json:"content"`
	Description string `json:"description"`
	Scope       string `json:"scope"`
}

var _ tool.FreshApproval = (*remember)(nil)

func (*remember) Name() string { return "remember" }

func (*remember) Description() string {
	return "Save a durable fact for later sessions, or replace the memory of the same name. " +
		"Every call is shown to the user for approval at that moment (it is never approved in advance, " +
		"and is refused in headless runs and subagents), so save only what is worth keeping: stable facts, " +
		"conventions and preferences, not the progress of the current task. Use memory first to find an " +
		"existing memory to update. name is a short slug (lowercase letters, digits, '-' and '_'); content " +
		"is the fact, in Markdown; description is a one-line summary for lists (the existing one is kept " +
		"when omitted); scope is \"project\" (default: this project only) or \"user\" (every project)."
}

func (*remember) Schema() json.RawMessage {
	return json.RawMessage(`{
		"type": "object",
		"properties": {
			"name": {"type": "string", "description": "Slug naming the memory, e.g. \"db-host\": lowercase letters, digits, '-' and '_', at most 64."},
			"content": {"type": "string", "description": "The fact to remember, in Markdown. Replaces the memory's whole content."},
			"description": {"type": "string", "description": "One-line summary shown in lists. Default: the existing description, or the content's first line."},
			"scope": {"type": "string", "enum": ["project", "user"], "description": "project (default): this project only; user: every project."}
		},
		"required": ["name", "content"],
		"additionalProperties": false
	}`)
}

func (*remember) ReadOnly() bool { return false }

// Preview quotes the memory about to be saved, one line, so the person
// approving sees what later sessions will be told.
func (*remember) Preview(raw json.RawMessage) string {
	var args rememberArgs
	if err := tool.DecodeArgs("remember", raw, &args); err != nil {
		return "remember (arguments unreadable: " + text.OneLine(err.Error(), previewRunes) + ")"
	}
	sc, err := ParseScope(args.Scope, Project)
	if err != nil {
		sc = Scope(args.Scope)
	}
	return fmt.Sprintf("remember %s/%s: %q", sc, text.OneLine(args.Name, MaxNameLen+1), text.OneLine(args.Content, previewRunes))
}

func (t *remember) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args rememberArgs
	if err := tool.DecodeArgs("remember", raw, &args); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("remember: %w", err)
	}
	name := strings.TrimSpace(args.Name)
	if name == "" {
		return "", required("remember", "name", `a short slug such as "db-host"`)
	}
	if strings.TrimSpace(args.Content) == "" {
		return "", required("remember", "content", "the fact to remember")
	}
	sc, err := ParseScope(args.Scope, Project)
	if err != nil {
		return "", fmt.Errorf("remember: %w", err)
	}
	saved, err := NewStore(t.env.Project, t.env.Home).Save(sc, name, args.Description, args.Content)
	if err != nil {
		return "", fmt.Errorf("remember: %w", err)
	}
	ref, path := saved.Memory.Ref(), shownPath(t.env, saved.Path)
	switch {
	case saved.Unchanged:
		return fmt.Sprintf("%s already says exactly this; nothing changed (%s).", ref, path), nil
	case saved.Created:
		return fmt.Sprintf("Saved %s to %s. Later sessions can find it with memory.", ref, path), nil
	default:
		return fmt.Sprintf("Updated %s in %s; the previous content is replaced.", ref, path), nil
	}
}

// forget archives one memory. It needs a person's approval for every call
// (tool.FreshApproval).
type forget struct{ env tool.Env }

type forgetArgs struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
}

var _ tool.FreshApproval = (*forget)(nil)

func (*forget) Name() string { return "forget" }

func (*forget) Description() string {
	return "Retire a memory that is wrong or no longer true: its file moves to the scope's archive folder " +
		"and memory search, list and read stop showing it. Nothing is deleted. Every call is shown to the " +
		"user for approval (refused in headless runs and subagents). To correct a memory, call remember " +
		"with the same name instead."
}

func (*forget) Schema() json.RawMessage {
	return json.RawMessage(`{
		"type": "object",
		"properties": {
			"name": {"type": "string", "description": "The memory to forget, e.g. \"db-host\"."},
			"scope": {"type": "string", "enum": ["project", "user"], "description": "Whose memory: project (default) or user."}
		},
		"required": ["name"],
		"additionalProperties": false
	}`)
}

func (*forget) ReadOnly() bool { return false }

// Preview names the memory to be archived. It is built from the arguments
// alone: the gate calls it while deciding, where no file is read.
func (*forget) Preview(raw json.RawMessage) string {
	var args forgetArgs
	if err := tool.DecodeArgs("forget", raw, &args); err != nil {
		return "forget (arguments unreadable: " + text.OneLine(err.Error(), previewRunes) + ")"
	}
	sc, err := ParseScope(args.Scope, Project)
	if err != nil {
		sc = Scope(args.Scope)
	}
	return fmt.Sprintf("forget %s/%s (moved to the archive; no longer shown to later sessions)", sc, text.OneLine(args.Name, MaxNameLen+1))
}

func (t *forget) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args forgetArgs
	if err := tool.DecodeArgs("forget", raw, &args); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("forget: %w", err)
	}
	name := strings.TrimSpace(args.Name)
	if name == "" {
		return "", required("forget", "name", "the memory to forget (memory with operation \"list\" shows the names)")
	}
	sc, err := ParseScope(args.Scope, Project)
	if err != nil {
		return "", fmt.Errorf("forget: %w", err)
	}
	st := NewStore(t.env.Project, t.env.Home)
	dst, err := st.Archive(sc, name)
	if errors.Is(err, ErrNotFound) {
		other := otherScope(sc)
		if _, oerr := st.Read(other, name); oerr == nil {
			return "", fmt.Errorf("forget: no %s memory is named %q, but a %s memory is: call forget with scope %q", sc, name, other, other)
		}
		return "", fmt.Errorf("forget: no %s memory is named %q; memory with operation \"list\" shows the names", sc, name)
	}
	if err != nil {
		return "", fmt.Errorf("forget: %w", err)
	}
	return fmt.Sprintf("Forgot %s/%s: archived to %s. Memory search, list and read no longer show it.", sc, name, shownPath(t.env, dst)), nil
}
