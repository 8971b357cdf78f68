package memory

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/tool"
)

// tools builds the three memory tools for env, by name.
func tools(t *testing.T, env tool.Env) map[string]tool.Tool {
	t.Helper()
	list, err := tool.NewBuiltins(env, []string{"memory", "remember", "forget"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]tool.Tool{}
	for _, tl := range list {
		out[tl.Name()] = tl
	}
	return out
}

func testEnv(t *testing.T) tool.Env {
	t.Helper()
	return tool.Env{Root: t.TempDir(), Project: t.TempDir(), Home: t.TempDir()}
}

func exec(t *testing.T, tl tool.Tool, args string) string {
	t.Helper()
	out, err := tl.Execute(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: %v", tl.Name(), args, err)
	}
	return out
}

func execErr(t *testing.T, tl tool.Tool, args string) string {
	t.Helper()
	out, err := tl.Execute(context.Background(), json.RawMessage(args))
	if err == nil {
		t.Fatalf("%s %s succeeded: %s", tl.Name(), args, out)
	}
	return err.Error()
}

func TestToolsContract(t *testing.T) {
	t.Parallel()
	ts := tools(t, testEnv(t))
	for name, wantReadOnly := range map[string]bool{"memory": true, "remember": false, "forget": false} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tl := ts[name]
			if tl.ReadOnly() != wantReadOnly {
				t.Errorf("ReadOnly() = %v", tl.ReadOnly())
			}
			// Only the writers need a person for every call.
			if _, fresh := tl.(tool.FreshApproval); fresh == wantReadOnly {
				t.Errorf("FreshApproval implemented = %v, want %v", fresh, !wantReadOnly)
			}
			if tl.Description() == "" {
				t.Error("no description")
			}
			canon, err := tool.Canonical(tl.Schema())
			if err != nil {
				t.Fatal(err)
			}
			var schema struct {
				Type       string `json:"type"`
				Additional *bool  `json:"additionalProperties"`
				Required   []string
				Properties map[string]struct {
					Type        string `json:"type"`
					Description string `json:"description"`
				}
			}
			if err := json.Unmarshal(canon, &schema); err != nil {
				t.Fatal(err)
			}
			if schema.Type != "object" || schema.Additional == nil || *schema.Additional || len(schema.Required) == 0 {
				t.Errorf("schema = %s", canon)
			}
			for _, r := range schema.Required {
				if _, ok := schema.Properties[r]; !ok {
					t.Errorf("required %q is not a property", r)
				}
			}
			for p, prop := range schema.Properties {
				if prop.Type == "" || prop.Description == "" {
					t.Errorf("property %s lacks a type or description", p)
				}
			}
		})
	}
}

func TestRememberSearchReadForget(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	ts := tools(t, env)
	mem, rem, fgt := ts["memory"], ts["remember"], ts["forget"]

	out := exec(t, rem, `{"name":"db-host","content":"The staging DB is at db.internal:5432.","description":"Staging database"}`)
	if out != "Saved project/db-host to .reasonix/memory/db-host.md. Later sessions can find it with memory." {
		t.Fatalf("remember = %q", out)
	}
	if _, err := os.Stat(filepath.Join(env.Project, ".reasonix", "memory", "db-host.md")); err != nil {
		t.Fatal(err)
	}
	exec(t, rem, `{"name":"db-host","content":"user-wide: laptop postgres","scope":"user"}`)
	if out := exec(t, rem, `{"name":"db-host","content":"The staging DB is at db.internal:5432."}`); !strings.Contains(out, "nothing changed") {
		t.Fatalf("same remember = %q", out)
	}

	out = exec(t, mem, `{"operation":"search","query":"where is the staging database?"}`)
	for _, want := range []string{
		"1 memory for \"where is the staging database?\"",
		"project/db-host — Staging database (updated ",
		"a user memory has the same name; this project one takes precedence",
		"The staging DB is at db.internal:5432.",
		"history tool",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("search result lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "laptop") {
		t.Errorf("search showed the hidden user memory:\n%s", out)
	}

	out = exec(t, mem, `{"operation":"list"}`)
	if !strings.HasPrefix(out, "1 memory (project or user):\nproject/db-host") {
		t.Errorf("list = %q", out)
	}
	out = exec(t, mem, `{"operation":"read","name":"db-host","scope":"user"}`)
	if !strings.HasSuffix(out, "\n\nuser-wide: laptop postgres") || !strings.HasPrefix(out, "user/db-host — user-wide: laptop postgres") {
		t.Errorf("read user = %q", out)
	}

	out = exec(t, fgt, `{"name":"db-host"}`)
	if !strings.HasPrefix(out, "Forgot project/db-host: archived to .reasonix/memory/archive/db-host-") {
		t.Fatalf("forget = %q", out)
	}
	// The user memory is in force again; once it goes too, nothing is left
	// and the answer points at history.
	if out := exec(t, mem, `{"operation":"read","name":"db-host"}`); !strings.HasPrefix(out, "user/db-host") {
		t.Fatalf("read after forget = %q", out)
	}
	exec(t, fgt, `{"name":"db-host","scope":"user"}`)
	out = exec(t, mem, `{"operation":"search","query":"staging database"}`)
	if !strings.HasPrefix(out, "No project or user memory matches") || !strings.Contains(out, "history tool") {
		t.Fatalf("search after forget = %q", out)
	}
	if out := exec(t, mem, `{"operation":"list","scope":"project"}`); out != "No project memories are saved. Save one with remember." {
		t.Fatalf("list after forget = %q", out)
	}
}

func TestToolErrors(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	ts := tools(t, env)
	exec(t, ts["remember"], `{"name":"only-user","content":"x","scope":"user"}`)
	noDirs := tools(t, tool.Env{Root: t.TempDir()})
	tests := []struct {
		name string
		tl   tool.Tool
		args string
		want string
	}{
		{"no operation", ts["memory"], `{}`, `memory: "operation" is required`},
		{"bad operation", ts["memory"], `{"operation":"delete"}`, `operation must be "search", "list" or "read", got "delete"`},
		{"search without query", ts["memory"], `{"operation":"search"}`, `"query" is required`},
		{"search punctuation", ts["memory"], `{"operation":"search","query":"??"}`, "no words to search for"},
		{"bad scope", ts["memory"], `{"operation":"list","scope":"team"}`, `scope must be "project", "user" or "all", got "team"`},
		{"read missing", ts["memory"], `{"operation":"read","name":"nope"}`, `no project or user memory is named "nope"`},
		{"read bad name", ts["memory"], `{"operation":"read","name":"Nope!"}`, `(for example "nope")`},
		{"wrong type", ts["memory"], `{"operation":3}`, `memory: "operation" must be a string, got number`},
		{"not an object", ts["memory"], `[1]`, "arguments must be a JSON object"},
		{"remember no name", ts["remember"], `{"content":"x"}`, `remember: "name" is required`},
		{"remember no content", ts["remember"], `{"name":"x"}`, `remember: "content" is required`},
		{"remember scope all", ts["remember"], `{"name":"x","content":"y","scope":"all"}`, `scope must be "project" or "user", got "all"`},
		{"remember bad name", ts["remember"], `{"name":"My Fact","content":"y"}`, `(for example "my-fact")`},
		{"forget missing", ts["forget"], `{"name":"nope"}`, `no project memory is named "nope"`},
		{"forget wrong scope", ts["forget"], `{"name":"only-user"}`, `but a user memory is: call forget with scope "user"`},
		{"no project", noDirs["remember"], `{"name":"x","content":"y"}`, "project memory needs a project directory"},
		{"no dirs", noDirs["memory"], `{"operation":"list"}`, "neither a project directory nor a reasonix home"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := execErr(t, tt.tl, tt.args); !strings.Contains(got, tt.want) {
				t.Fatalf("error %q lacks %q", got, tt.want)
			}
		})
	}
	// A double-encoded call still works.
	if out := exec(t, ts["memory"], `"{\"operation\":\"list\",\"scope\":\"user\"}"`); !strings.Contains(out, "user/only-user") {
		t.Fatalf("double-encoded list = %q", out)
	}
}

func TestPreview(t *testing.T) {
	t.Parallel()
	ts := tools(t, testEnv(t))
	rem := ts["remember"].(tool.FreshApproval)
	fgt := ts["forget"].(tool.FreshApproval)
	long := strings.Repeat("word ", 100)
	tests := []struct {
		name string
		fa   tool.FreshApproval
		args string
		want string
	}{
		{"remember", rem, `{"name":"db-host","content":"The staging DB\nis db.internal"}`, `remember project/db-host: "The staging DB is db.internal"`},
		{"remember user", rem, `{"name":"editor","content":"vim","scope":"user"}`, `remember user/editor: "vim"`},
		{"remember long", rem, `{"name":"x","content":"` + long + `"}`, `remember project/x: "` + strings.Repeat("word ", 31) + `word…"`},
		{"remember unreadable", rem, `{"name":1}`, `remember (arguments unreadable: remember: "name" must be a string, got number)`},
		{"forget", fgt, `{"name":"db-host","scope":"user"}`, "forget user/db-host (moved to the archive; no longer shown to later sessions)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.fa.Preview(json.RawMessage(tt.args)); got != tt.want {
				t.Fatalf("Preview = %q\nwant      %q", got, tt.want)
			}
		})
	}
}
