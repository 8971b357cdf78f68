package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"reasonix/core/provider"
)

// schemaTool is a tool with a fixed name, description and schema.
type schemaTool struct {
	name, desc string
	schema     string
}

func (f schemaTool) Name() string            { return f.name }
func (f schemaTool) Description() string     { return f.desc }
func (f schemaTool) Schema() json.RawMessage { return json.RawMessage(f.schema) }
func (f schemaTool) ReadOnly() bool          { return true }
func (f schemaTool) Execute(context.Context, json.RawMessage) (string, error) {
	return "", nil
}

// manyTools returns n tools whose names do not sort in creation order, so
// that a registry handing out its map order is caught: with n large, Go's
// randomised map iteration is practically never sorted by chance.
func manyTools(n int) []Tool {
	out := make([]Tool, n)
	for i := range n {
		name := fmt.Sprintf("tool_%02d", (i*7)%n) // unique while n is coprime to 7
		out[i] = schemaTool{
			name:   name,
			desc:   "Does " + name + ".",
			schema: fmt.Sprintf("{\n  \"type\": \"object\",\n  \"properties\": {\"n\": {\"type\": \"integer\", \"maximum\": %d}}\n}", i),
		}
	}
	return out
}

// wire is the bytes a request would carry for schemas: name, description
// and parameters exactly as the registry returns them. json.Marshal is not
// used, since it would compact the parameters and hide whitespace.
func wire(schemas []provider.ToolSchema) string {
	var b strings.Builder
	for _, s := range schemas {
		fmt.Fprintf(&b, "%s\x00%s\x00%s\n", s.Name, s.Description, s.Parameters)
	}
	return b.String()
}

func names(schemas []provider.ToolSchema) []string {
	out := make([]string, len(schemas))
	for i, s := range schemas {
		out[i] = s.Name
	}
	return out
}

func mustRegistry(t *testing.T, tools ...Tool) *Registry {
	t.Helper()
	r, err := NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSchemasSortedByName(t *testing.T) {
	t.Parallel()
	tools := manyTools(40)
	r := mustRegistry(t, tools...)
	for range 20 {
		got := names(r.Schemas())
		if len(got) != len(tools) || !slices.IsSorted(got) {
			t.Fatalf("Schemas() names not sorted: %q", got)
		}
	}
	if got := r.Names(); !slices.Equal(got, names(r.Schemas())) {
		t.Fatalf("Names() = %q, not the Schemas() order", got)
	}
	if got := names(r.Snapshot().Schemas()); !slices.IsSorted(got) {
		t.Fatalf("Snapshot().Schemas() names not sorted: %q", got)
	}
}

func TestSchemasCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema string
		want   string
	}{
		{
			name:   "keys sorted at every depth",
			schema: `{"type":"object","required":["b","a"],"properties":{"b":{"type":"string","description":"B"},"a":{"type":"integer"}}}`,
			want:   `{"properties":{"a":{"type":"integer"},"b":{"description":"B","type":"string"}},"required":["b","a"],"type":"object"}`,
		},
		{
			name:   "whitespace removed",
			schema: "{\n\t\"type\" : \"object\" ,\r\n  \"properties\" : { }\n}\n",
			want:   `{"properties":{},"type":"object"}`,
		},
		{
			name:   "numbers keep their text",
			schema: `{"type":"object","properties":{"x":{"type":"number","minimum":1.0,"maximum":1e3,"multipleOf":0.10,"default":12345678901234567890123}}}`,
			want:   `{"properties":{"x":{"default":12345678901234567890123,"maximum":1e3,"minimum":1.0,"multipleOf":0.10,"type":"number"}},"type":"object"}`,
		},
		{
			name:   "strings kept, html not escaped",
			schema: `{"type":"object","description":"a <b> & \"c\" \u00e9"}`,
			want:   `{"description":"a <b> & \"c\" é","type":"object"}`,
		},
		{
			name:   "empty schema is the empty object schema",
			schema: "  ",
			want:   `{"type":"object"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustRegistry(t, schemaTool{name: "t", schema: tc.schema})
			if got := string(r.Schemas()[0].Parameters); got != tc.want {
				t.Fatalf("parameters\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestSchemasRejectBadSchema(t *testing.T) {
	t.Parallel()
	for _, schema := range []string{`{"type":`, `["not","an","object"]`, `{"type":"object"} {}`} {
		if _, err := NewRegistry(schemaTool{name: "bad", schema: schema}); err == nil || !strings.Contains(err.Error(), `tool "bad"`) {
			t.Errorf("schema %s: err = %v, want one naming the tool", schema, err)
		}
	}
}

// TestSchemasByteStable checks what the prompt cache needs: the same tools
// give the same bytes on every call and whatever order they were added in,
// and equal schemas written differently give equal bytes.
func TestSchemasByteStable(t *testing.T) {
	t.Parallel()
	tools := manyTools(40)
	reversed := slices.Clone(tools)
	slices.Reverse(reversed)
	a, b := mustRegistry(t, tools...), mustRegistry(t, reversed...)
	first := wire(a.Schemas())
	for range 20 {
		if got := wire(a.Schemas()); got != first {
			t.Fatalf("Schemas() changed between calls:\n%s\n%s", first, got)
		}
	}
	if got := wire(b.Schemas()); got != first {
		t.Fatalf("insertion order changed Schemas():\n%s\n%s", first, got)
	}
	// A turn sends its snapshot's schemas, which must be the same bytes.
	if got := wire(b.Snapshot().Schemas()); got != first {
		t.Fatalf("Snapshot().Schemas() differs from Schemas():\n%s\n%s", first, got)
	}

	x := mustRegistry(t, schemaTool{name: "t", schema: `{"type":"object","properties":{"p":{"type":"string"}}}`})
	y := mustRegistry(t, schemaTool{name: "t", schema: "{ \"properties\": { \"p\": { \"type\": \"string\" } },\n \"type\": \"object\" }"})
	if px, py := x.Schemas()[0].Parameters, y.Schemas()[0].Parameters; !bytes.Equal(px, py) {
		t.Fatalf("equal schemas encode differently: %s vs %s", px, py)
	}
}

// TestReplaceKeepsOthers replaces one tool, as an MCP server does when its
// list changes, and checks that no other tool's bytes or position move.
func TestReplaceKeepsOthers(t *testing.T) {
	t.Parallel()
	tools := manyTools(40)
	r := mustRegistry(t, tools...)
	before := r.Schemas()
	const target = "tool_13"
	if err := r.Replace(schemaTool{name: target, desc: "Changed.", schema: `{"type":"object","properties":{"m":{"type":"boolean"}}}`}); err != nil {
		t.Fatal(err)
	}
	after := r.Schemas()
	if !slices.Equal(names(before), names(after)) {
		t.Fatalf("Replace changed the tool list: %q -> %q", names(before), names(after))
	}
	for i := range before {
		if before[i].Name == target {
			if after[i].Description != "Changed." || string(after[i].Parameters) != `{"properties":{"m":{"type":"boolean"}},"type":"object"}` {
				t.Errorf("replaced tool = %+v", after[i])
			}
			continue
		}
		if before[i].Description != after[i].Description || !bytes.Equal(before[i].Parameters, after[i].Parameters) {
			t.Errorf("%s changed: %s -> %s", before[i].Name, before[i].Parameters, after[i].Parameters)
		}
	}
	if err := r.Add(schemaTool{name: target, schema: `{}`}); err == nil {
		t.Error("Add of a registered name succeeded")
	}
}
