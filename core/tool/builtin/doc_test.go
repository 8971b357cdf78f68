package builtin

import (
	"encoding/json"
	"slices"
	"testing"

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
