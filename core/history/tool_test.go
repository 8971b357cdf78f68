package history

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"reasonix/core/compact"
	"reasonix/core/tool"
)

func historyFor(t *testing.T, env tool.Env) tool.Tool {
	t.Helper()
	tools, err := tool.NewBuiltins(env, []string{"history"})
	if err != nil {
		t.Fatal(err)
	}
	return tools[0]
}

func TestToolRegistered(t *testing.T) {
	t.Parallel()
	if !slices.Contains(tool.Builtins(), "history") {
		t.Fatalf("history not in tool.Builtins() %v", tool.Builtins())
	}
	tl := historyFor(t, tool.Env{})
	if tl.Name() != "history" || !tl.ReadOnly() || tl.Description() == "" {
		t.Errorf("name %q, read-only %v", tl.Name(), tl.ReadOnly())
	}
	canon, err := tool.Canonical(tl.Schema())
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Type       string                    `json:"type"`
		Props      map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
		Additional *bool                     `json:"additionalProperties"`
	}
	if err := json.Unmarshal(canon, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || schema.Additional == nil || *schema.Additional || schema.Required == nil {
		t.Errorf("schema = %s", canon)
	}
	for _, p := range []string{"operation", "query", "scope", "limit", "ref", "radius"} {
		prop, ok := schema.Props[p]
		if !ok || prop["type"] == "" || prop["description"] == "" {
			t.Errorf("property %s = %v", p, prop)
		}
	}
	if len(schema.Props) != 6 {
		t.Errorf("%d properties, want 6", len(schema.Props))
	}
}

func TestToolSearchThenAround(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	h.transcript(h.sessions, "s", day,
		user("rename the flux capacitor"), assistant("renamed it"), user("thanks"))
	h.archive(day, compact.ArchiveRecord{Session: "old", Time: day, Message: user("the flux capacitor overheated")})
	tl := historyFor(t, tool.Env{Home: h.home, Sessions: h.sessions})
	ctx := context.Background()

	out, err := tl.Execute(ctx, json.RawMessage(`{"query":"flux capacitor"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "1 hit for \"flux capacitor\" in this project's sessions") ||
		!strings.Contains(out, "[1] ref=s#1 role=user session=s project=") ||
		!strings.Contains(out, "started=2026-03-02T09:30Z") ||
		!strings.Contains(out, "**flux** **capacitor**") || !strings.Contains(out, `operation="around"`) {
		t.Errorf("project search:\n%s", out)
	}

	out, err = tl.Execute(ctx, json.RawMessage(`{"operation":"search","query":"overheated","scope":"global","limit":3}`))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`ref=(archive/\S+)`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "source=archive archived=2026-03-02T09:30Z") || !strings.Contains(out, "session=old") {
		t.Fatalf("global search:\n%s", out)
	}
	out, err = tl.Execute(ctx, json.RawMessage(`{"operation":"around","ref":"`+m[1]+`"}`))
	if err != nil || !strings.Contains(out, "the flux capacitor overheated") {
		t.Errorf("around %s = %q, %v", m[1], out, err)
	}
	out, err = tl.Execute(ctx, json.RawMessage(`{"operation":"around","ref":"s#2","radius":0}`))
	if err != nil || !strings.Contains(out, "messages 2-2 of 3") || strings.Contains(out, "thanks") {
		t.Errorf("around s#2 radius 0 = %q, %v", out, err)
	}
	// Some models wrap the arguments in a string.
	if out, err := tl.Execute(ctx, json.RawMessage(`"{\"query\":\"renamed\"}"`)); err != nil || !strings.Contains(out, "ref=s#2") {
		t.Errorf("string-wrapped arguments: %q, %v", out, err)
	}
}

func TestToolErrors(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	h.transcript(h.sessions, "s", day, user("hello"))
	env := tool.Env{Home: h.home, Sessions: h.sessions}
	tests := []struct {
		name string
		env  tool.Env
		args string
		want string
	}{
		{"no home", tool.Env{Sessions: h.sessions}, `{"query":"x"}`, "no Reasonix home"},
		{"no query", env, `{}`, `"query" is required`},
		{"blank query", env, `{"query":"  "}`, `"query" is required`},
		{"nothing searchable", env, `{"query":"*** ()"}`, "no words to search for"},
		{"bad operation", env, `{"operation":"list","query":"x"}`, `operation must be "search" or "around"`},
		{"bad scope", env, `{"query":"x","scope":"everywhere"}`, `scope must be "project" or "global"`},
		{"limit type", env, `{"query":"x","limit":"ten"}`, `"limit" must be an integer, got string`},
		{"negative limit", env, `{"query":"x","limit":-1}`, "limit must be between 1 and 50"},
		{"no project dir", tool.Env{Home: h.home}, `{"query":"x"}`, `use scope="global"`},
		{"around without ref", env, `{"operation":"around"}`, `needs "ref"`},
		{"bad ref", env, `{"operation":"around","ref":"../../etc/passwd#1"}`, "does not name a session"},
		{"radius type", env, `{"operation":"around","ref":"s#1","radius":"3"}`, `"radius" must be an integer`},
		{"negative radius", env, `{"operation":"around","ref":"s#1","radius":-2}`, "radius must be between 0 and 10"},
		{"not an object", env, `[1]`, "arguments must be a JSON object"},
		{"bad JSON", env, `{"query":`, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := historyFor(t, tt.env).Execute(context.Background(), json.RawMessage(tt.args))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "history: ") {
				t.Errorf("Execute(%s) = %q, %v; want an error containing %q", tt.args, out, err, tt.want)
			}
		})
	}
}
