package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"reasonix/core/tool"
)

// toolName is the name the tool is registered under.
const toolName = "history"

func init() {
	tool.RegisterBuiltin(toolName, func(env tool.Env) tool.Tool { return &historyTool{env: env} })
}

// historyTool is the read-only built-in that searches saved sessions. It
// opens the index for each call and closes it before returning, so it
// holds nothing between calls and may serve concurrent ones.
type historyTool struct{ env tool.Env }

type toolArgs struct {
	Operation string `json:"operation"`
	Query     string `json:"query"`
	Scope     string `json:"scope"`
	Limit     int    `json:"limit"`
	Ref       string `json:"ref"`
	// Radius is a pointer because 0 (the hit alone) differs from unset.
	Radius *int `json:"radius"`
}

func (*historyTool) Name() string { return toolName }

func (*historyTool) Description() string {
	return fmt.Sprintf("Search what earlier sessions said and did: full-text (BM25) search over saved session "+
		"transcripts (messages, tool calls and tool results). Use it when the user refers to earlier work, or when "+
		"exact wording, a past decision, a command or a tool output from before matters. "+
		"operation=\"search\" (the default) takes a query of words, \"quoted phrases\" and prefix* words and returns "+
		"the best hits first (default %d, at most %d), each with a ref, role, session, time and a snippet with the "+
		"matched words in **bold**; hits scoring under %d%% of the best are left out. scope=\"project\" (the default) "+
		"searches this project's sessions, scope=\"global\" every project's sessions and the compaction archives, "+
		"where messages compacted out of a long session are kept. operation=\"around\" takes a ref from a hit and "+
		"returns the messages around it (radius %d on each side by default, at most %d; each cut to %d bytes). "+
		"Rare, specific terms (identifiers, file names, error text) find more than common words.",
		DefaultLimit, MaxLimit, int(FloorRatio*100), DefaultRadius, MaxRadius, MessageBytes)
}

func (*historyTool) Schema() json.RawMessage {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"operation": map[string]any{
				"type":        "string",
				"enum":        []string{"search", "around"},
				"description": "\"search\" (default) finds messages; \"around\" reads the messages around a hit's ref.",
			},
			"query": map[string]any{
				"type":        "string",
				"description": "For search: words to find, \"quoted phrases\" and prefix* words; any of them may match, messages matching more and rarer terms rank first.",
			},
			"scope": map[string]any{
				"type":        "string",
				"enum":        []string{"project", "global"},
				"description": "For search: \"project\" (default) searches this project's sessions; \"global\" every project's sessions and the compaction archives.",
			},
			"limit": map[string]any{
				"type":        "integer",
				"minimum":     1,
				"maximum":     MaxLimit,
				"description": fmt.Sprintf("For search: most hits to return. Default %d, maximum %d.", DefaultLimit, MaxLimit),
			},
			"ref": map[string]any{
				"type":        "string",
				"description": "For around: the ref of a search hit, exactly as shown, e.g. \"20261130-073000-1a2b3c4d#12\".",
			},
			"radius": map[string]any{
				"type":        "integer",
				"minimum":     0,
				"maximum":     MaxRadius,
				"description": fmt.Sprintf("For around: messages to show on each side of the hit. Default %d, maximum %d.", DefaultRadius, MaxRadius),
			},
		},
		"required":             []string{},
		"additionalProperties": false,
	}
	out, _ := json.Marshal(schema) // a fixed map of plain values cannot fail
	return out
}

func (*historyTool) ReadOnly() bool { return true }

func (t *historyTool) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args toolArgs
	if err := tool.DecodeArgs("history", raw, &args); err != nil {
		return "", err
	}
	if t.env.Home == "" {
		return "", errors.New("history: this run has no Reasonix home, so there are no saved sessions to search")
	}
	switch strings.ToLower(strings.TrimSpace(args.Operation)) {
	case "", "search":
		return t.search(ctx, args)
	case "around":
		return t.around(args)
	}
	return "", fmt.Errorf("history: operation must be \"search\" or \"around\", got %q", args.Operation)
}

func (t *historyTool) search(ctx context.Context, args toolArgs) (string, error) {
	if strings.TrimSpace(args.Query) == "" {
		return "", errors.New(`history: "query" is required for search`)
	}
	scope, err := ParseScope(args.Scope)
	if err != nil {
		return "", fmt.Errorf("history: %w", err)
	}
	if scope == ScopeProject && t.env.Sessions == "" {
		return "", errors.New(`history: this run has no project session directory; use scope="global"`)
	}
	if args.Limit < 0 {
		return "", fmt.Errorf("history: limit must be between 1 and %d, got %d", MaxLimit, args.Limit)
	}
	q := Query{Text: args.Query, Scope: scope, Sessions: t.env.Sessions, Limit: args.Limit}
	res, rep, err := SearchHome(ctx, t.env.Home, q)
	if errors.Is(err, ErrNoTerms) {
		return "", fmt.Errorf("history: %w; use words, identifiers or \"quoted phrases\"", err)
	}
	if err != nil {
		return "", fmt.Errorf("history: %w", err)
	}
	out := FormatSearch(q, res)
	if len(res.Hits) > 0 {
		out += "\n\nPass a ref to operation=\"around\" to read the messages around a hit."
	}
	if rep != nil {
		// The search that repaired the index says so, once: the next one
		// finds the new index whole.
		out = "Note: " + rep.Notice() + ".\n\n" + out
	}
	return out, nil
}

func (t *historyTool) around(args toolArgs) (string, error) {
	if strings.TrimSpace(args.Ref) == "" {
		return "", errors.New(`history: operation "around" needs "ref", the ref of a search hit such as "20261130-073000-1a2b3c4d#12"`)
	}
	ref, err := ParseRef(args.Ref)
	if err != nil {
		return "", fmt.Errorf("history: %w", err)
	}
	radius := DefaultRadius
	if args.Radius != nil {
		radius = *args.Radius
	}
	w, err := Around(t.env.Home, t.env.Sessions, ref, radius)
	if err != nil {
		return "", fmt.Errorf("history: %w", err)
	}
	return FormatWindow(w), nil
}
