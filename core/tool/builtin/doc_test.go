package builtin

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/core/tool"
)

// fileTools are the built-ins defined by the file tools in this package.
var fileTools = []string{"edit_file", "ls", "move_file", "multi_edit", "read_file", "write_file"}

func TestFileToolsRegistered(t *testing.T) {
	t.Parallel()
	registered := tool.Builtins()
	all, err := tool.NewBuiltins(tool.Env{Root: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range all {
		names = append(names, tl.Name())
	}
	for _, name := range fileTools {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if !slices.Contains(registered, name) {
				t.Errorf("%s not in tool.Builtins() %v", name, registered)
			}
			if !slices.Contains(names, name) {
				t.Errorf("%s not built by NewBuiltins(env, nil): %v", name, names)
			}
		})
	}
}

func TestFileToolSchemas(t *testing.T) {
	t.Parallel()
	tools, err := tool.NewBuiltins(tool.Env{Root: t.TempDir()}, fileTools)
	if err != nil {
		t.Fatal(err)
	}
	wantReadOnly := map[string]bool{"read_file": true, "ls": true}
	for _, tl := range tools {
		t.Run(tl.Name(), func(t *testing.T) {
			t.Parallel()
			if tl.Description() == "" {
				t.Error("empty description")
			}
			if got := tl.ReadOnly(); got != wantReadOnly[tl.Name()] {
				t.Errorf("ReadOnly() = %v, want %v", got, wantReadOnly[tl.Name()])
			}
			canon, err := tool.Canonical(tl.Schema())
			if err != nil {
				t.Fatalf("Canonical: %v", err)
			}
			var schema map[string]any
			if err := json.Unmarshal(canon, &schema); err != nil {
				t.Fatal(err)
			}
			checkObjectSchema(t, tl.Name(), schema)
		})
	}
}

// checkObjectSchema asserts the conventions every object in a built-in
// schema follows, descending into array items that are objects.
func checkObjectSchema(t *testing.T, where string, schema map[string]any) {
	t.Helper()
	if schema["type"] != "object" {
		t.Errorf("%s: type = %v, want object", where, schema["type"])
	}
	if schema["additionalProperties"] != false {
		t.Errorf("%s: additionalProperties = %v, want false", where, schema["additionalProperties"])
	}
	props, ok := schema["properties"].(map[string]any)
	if !ok || len(props) == 0 {
		t.Fatalf("%s: no properties", where)
	}
	if req, present := schema["required"]; !present {
		t.Errorf("%s: no required list", where)
	} else {
		list, ok := req.([]any)
		if !ok {
			t.Fatalf("%s: required is %T, want array", where, req)
		}
		for _, r := range list {
			name, _ := r.(string)
			if _, ok := props[name]; !ok {
				t.Errorf("%s: required %q is not a property", where, name)
			}
		}
	}
	for name, p := range props {
		prop, ok := p.(map[string]any)
		if !ok {
			t.Fatalf("%s.%s: property is %T", where, name, p)
		}
		if typ, _ := prop["type"].(string); typ == "" {
			t.Errorf("%s.%s: no type", where, name)
		}
		if desc, _ := prop["description"].(string); desc == "" {
			t.Errorf("%s.%s: no description", where, name)
		}
		if items, ok := prop["items"].(map[string]any); ok && items["type"] == "object" {
			checkObjectSchema(t, where+"."+name+"[]", items)
		}
	}
}

// TestShellAndSearchToolSchemas checks registration and the schema
// conventions of bash, glob and grep, and that schemas and descriptions
// carry the run's limits. glob and grep live in the search sub-package, so
// this also proves that importing builtin registers them.
func TestShellAndSearchToolSchemas(t *testing.T) {
	t.Parallel()
	env := tool.Env{Root: t.TempDir(), BashTimeout: 90 * time.Second, Limits: tool.Limits{GrepMatches: 42, ListEntries: 7}}
	tools, err := tool.NewBuiltins(env, []string{"bash", "glob", "grep"})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		readOnly bool
		required []string
		mentions []string // texts the description or schema must carry
	}{
		"bash": {false, []string{"command"}, []string{"default and maximum 90", "exit code: N"}},
		"glob": {true, []string{"pattern"}, []string{"at most 7"}},
		"grep": {true, []string{"pattern"}, []string{"At most 42", `"maximum":42`}},
	}
	for _, tl := range tools {
		t.Run(tl.Name(), func(t *testing.T) {
			t.Parallel()
			want := tests[tl.Name()]
			if tl.ReadOnly() != want.readOnly {
				t.Errorf("ReadOnly = %v", tl.ReadOnly())
			}
			canon, err := tool.Canonical(tl.Schema())
			if err != nil {
				t.Fatal(err)
			}
			var schema struct {
				Type       string                    `json:"type"`
				Properties map[string]map[string]any `json:"properties"`
				Required   []string                  `json:"required"`
				Additional *bool                     `json:"additionalProperties"`
			}
			if err := json.Unmarshal(canon, &schema); err != nil {
				t.Fatal(err)
			}
			if schema.Type != "object" || schema.Additional == nil || *schema.Additional {
				t.Errorf("schema %s: want an object closed to additional properties", canon)
			}
			if !slices.Equal(schema.Required, want.required) {
				t.Errorf("required = %v, want %v", schema.Required, want.required)
			}
			for name, p := range schema.Properties {
				if p["type"] == nil || p["description"] == "" || p["description"] == nil {
					t.Errorf("property %s lacks a type or description", name)
				}
			}
			for _, m := range want.mentions {
				if !strings.Contains(tl.Description()+string(canon), m) {
					t.Errorf("neither description nor schema mentions %q", m)
				}
			}
		})
	}
}
