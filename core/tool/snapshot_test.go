package tool

import (
	"context"
	"encoding/json"
	"testing"
)

type fakeTool struct{ name, schema string }

func (f fakeTool) Name() string            { return f.name }
func (f fakeTool) Description() string     { return "d " + f.name }
func (f fakeTool) Schema() json.RawMessage { return json.RawMessage(f.schema) }
func (f fakeTool) ReadOnly() bool          { return true }
func (f fakeTool) Execute(context.Context, json.RawMessage) (string, error) {
	return f.name, nil
}

func TestSnapshotIsImmutable(t *testing.T) {
	r, err := NewRegistry(fakeTool{"b", `{ "type": "object" }`}, fakeTool{"a", `{"type":"object"}`})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Snapshot()
	r.Remove("a")
	if err := r.Add(fakeTool{"c", `{}`}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("a"); !ok {
		t.Fatal("a tool removed from the registry vanished from an earlier snapshot")
	}
	if _, ok := s.Get("c"); ok {
		t.Fatal("a tool added later appeared in an earlier snapshot")
	}
	if got := s.Names(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("names = %v, want [a b]", got)
	}
	sc := s.Schemas()
	if len(sc) != 2 || sc[0].Name != "a" || string(sc[1].Parameters) != `{"type":"object"}` {
		t.Fatalf("schemas = %+v", sc)
	}
	if now := r.Snapshot().Names(); len(now) != 2 || now[0] != "b" || now[1] != "c" {
		t.Fatalf("new snapshot names = %v, want [b c]", now)
	}
}
