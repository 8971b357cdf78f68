package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"reasonix/core/text"
	"reasonix/core/tool"
)

func init() {
	tool.RegisterBuiltin("memory", func(env tool.Env) tool.Tool { return &memoryTool{env: env} })
	tool.RegisterBuiltin("remember", func(env tool.Env) tool.Tool { return &remember{env: env} })
	tool.RegisterBuiltin("forget", func(env tool.Env) tool.Tool { return &forget{env: env} })
}

// historyHint closes every search answer: a memory is a note someone chose
// to keep, so for what was actually said or printed the transcripts are
// the source.
const historyHint = "Memories are short saved notes, not records of the conversation: " +
	"when the exact original wording or a tool's output matters, search past sessions with the history tool."

// excerptRunes is how much of a memory's body a search hit shows.
const excerptRunes = 600

// memoryTool is the read-only memory tool: search, list and read.
type memoryTool struct{ env tool.Env }

type memoryArgs struct {
	Operation string `json:"operation"`
	Query     string `json:"query"`
	Name      string `json:"name"`
	Scope     string `json:"scope"`
}

func (*memoryTool) Name() string { return "memory" }

func (*memoryTool) Description() string {
	return "Look up saved memories: durable facts about this project or the user (conventions, hosts, " +
		"preferences) saved earlier with remember. operation \"search\" ranks memories against query by " +
		"relevance (BM25) and returns the best with an excerpt; \"list\" names every memory with its " +
		"description; \"read\" returns one memory in full. scope \"project\" is this project's memories, " +
		"\"user\" the user's memories shared by every project, \"all\" (default) both, a project memory " +
		"taking precedence over a user memory of the same name. Check here before remember, to update a " +
		"memory rather than duplicate it. Forgotten (archived) memories are not shown. For the exact " +
		"wording of an earlier conversation or a tool's output, use history instead."
}

func (*memoryTool) Schema() json.RawMessage {
	return json.RawMessage(`{
		"type": "object",
		"properties": {
			"operation": {"type": "string", "enum": ["search", "list", "read"], "description": "search: rank memories against query; list: every memory's name and description; read: one memory in full."},
			"query": {"type": "string", "description": "Words to search for (operation search). Any word may match; rarer words weigh more."},
			"name": {"type": "string", "description": "The memory to read (operation read), e.g. \"db-host\"."},
			"scope": {"type": "string", "enum": ["project", "user", "all"], "description": "Whose memories: project, user, or all (default)."}
		},
		"required": ["operation"],
		"additionalProperties": false
	}`)
}

func (*memoryTool) ReadOnly() bool { return true }

func (t *memoryTool) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args memoryArgs
	if err := tool.DecodeArgs("memory", raw, &args); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	st := NewStore(t.env.Project, t.env.Home)
	scopes, err := lookScopes(st, args.Scope)
	if err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	switch op := strings.ToLower(strings.TrimSpace(args.Operation)); op {
	case "search":
		return t.search(ctx, st, args.Query, scopes)
	case "list":
		return t.list(st, scopes)
	case "read":
		return t.read(st, args.Name, scopes)
	case "":
		return "", required("memory", "operation", `"search", "list" or "read"`)
	default:
		return "", fmt.Errorf("memory: operation must be \"search\", \"list\" or \"read\", got %q", args.Operation)
	}
}

// lookScopes turns the memory tool's scope argument into the scopes to
// look in. "all" is every scope this run has; naming one it lacks is an
// error that says why.
func lookScopes(st *Store, arg string) ([]Scope, error) {
	if s := strings.ToLower(strings.TrimSpace(arg)); s == "" || s == "all" {
		avail := st.Available()
		if len(avail) == 0 {
			return nil, errors.New("this run has neither a project directory nor a reasonix home, so there are no memories")
		}
		return avail, nil
	}
	sc, err := ParseScope(arg, "")
	if err != nil {
		return nil, fmt.Errorf("scope must be %q, %q or \"all\", got %q", Project, User, arg)
	}
	if _, err := st.Dir(sc); err != nil {
		return nil, err
	}
	return []Scope{sc}, nil
}

func (t *memoryTool) search(ctx context.Context, st *Store, query string, scopes []Scope) (string, error) {
	if strings.TrimSpace(query) == "" {
		return "", required("memory", "query", "the words to search for")
	}
	hits, err := st.Search(ctx, query, scopes...)
	if errors.Is(err, ErrEmptyQuery) {
		return "", fmt.Errorf("memory: %w: use words from the fact you are looking for", err)
	}
	if err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	where := scopeWords(scopes)
	if len(hits) == 0 {
		return fmt.Sprintf("No %s memory matches %q. Try other or rarer words, or operation \"list\" to see every memory. "+
			"If the fact came up in an earlier session but was never saved, search past sessions with the history tool, "+
			"which also has the exact original wording and tool output.", where, query), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s for %q, best first:\n", count(len(hits), "memory", "memories"), query)
	for _, h := range hits {
		b.WriteString("\n" + heading(h.Entry) + "\n")
		excerpt := text.Clip(h.Body, excerptRunes)
		b.WriteString(excerpt + "\n")
		if excerpt != h.Body {
			fmt.Fprintf(&b, "[cut; read it whole with operation \"read\", name %q, scope %q]\n", h.Name, h.Scope)
		}
	}
	b.WriteString("\n" + historyHint)
	return b.String(), nil
}

func (t *memoryTool) list(st *Store, scopes []Scope) (string, error) {
	entries, err := st.List(scopes...)
	if err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	if len(entries) == 0 {
		return fmt.Sprintf("No %s memories are saved. Save one with remember.", scopeWords(scopes)), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s):\n", count(len(entries), "memory", "memories"), scopeWords(scopes))
	limit := t.env.Limits.WithDefaults().ListEntries
	for i, e := range entries {
		if i == limit {
			fmt.Fprintf(&b, "[%d more not shown; search to narrow them down]\n", len(entries)-limit)
			break
		}
		b.WriteString(heading(e) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func (t *memoryTool) read(st *Store, name string, scopes []Scope) (string, error) {
	if name = strings.TrimSpace(name); name == "" {
		return "", required("memory", "name", "the memory to read (operation \"list\" shows the names)")
	}
	if err := ValidateName(name); err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	var found []Memory
	for _, sc := range scopes {
		m, err := st.Read(sc, name)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("memory: %w", err)
		}
		found = append(found, m)
	}
	if len(found) == 0 {
		return "", fmt.Errorf("memory: no %s memory is named %q; operation \"list\" shows the names, \"search\" finds one by its content",
			scopeWords(scopes), name)
	}
	e := Entry{Memory: found[0]}
	if len(found) > 1 {
		e.Hides = found[1].Scope
	}
	body := found[0].Body
	limit := t.env.Limits.WithDefaults().ReadBytes
	var b strings.Builder
	b.WriteString(heading(e) + "\n\n")
	b.WriteString(text.Prefix(body, limit))
	if len(body) > limit {
		fmt.Fprintf(&b, "\n[cut at %d of %d bytes]", limit, len(body))
	}
	return b.String(), nil
}

// heading is one memory's line in a result: its reference, description,
// date and, when it hides a same-named memory of another scope, a note
// saying so.
func heading(e Entry) string {
	s := e.Ref()
	if e.Description != "" {
		s += " — " + e.Description
	}
	if !e.Updated.IsZero() {
		s += " (updated " + e.Updated.Format("2006-01-02") + ")"
	}
	if e.Hides != "" {
		s += fmt.Sprintf(" [a %s memory has the same name; this %s one takes precedence]", e.Hides, e.Scope)
	}
	return s
}

// scopeWords names the scopes in prose: "project", "user" or "project or
// user".
func scopeWords(scopes []Scope) string {
	names := make([]string, len(scopes))
	for i, sc := range scopes {
		names[i] = string(sc)
	}
	return strings.Join(names, " or ")
}

// count renders n with the singular or plural noun.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// shownPath is a memory file's path as results show it: relative to the
// project for project memories, absolute otherwise.
func shownPath(env tool.Env, path string) string {
	if env.Project != "" {
		if rel, err := filepath.Rel(env.Project, path); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return path
}

// otherScope is the scope that is not sc, for "did you mean" hints.
func otherScope(sc Scope) Scope {
	i := slices.Index(Scopes, sc)
	return Scopes[(i+1)%len(Scopes)]
}
