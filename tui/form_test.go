package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"reasonix/actors/event"
)

// TestElicitationForm: an MCP server's request is drawn as a form from its
// schema: required fields first and marked, enum choices cycled with the
// arrows, a boolean toggled with space; enter with a required field empty
// says so and sends nothing, and the answer carries each value in its type.
func TestElicitationForm(t *testing.T) {
	m := testModel(t, 100, 30)
	schema := `{"type":"object","properties":{
		"age":{"type":"integer","title":"Age"},
		"name":{"type":"string","title":"Full name","description":"as on the passport"},
		"color":{"type":"string","enum":["red","green","blue"],"default":"green"},
		"subscribe":{"type":"boolean","default":false}},
		"required":["name","color"]}`
	feed(m, &event.ElicitationRequested{Meta: meta(1), RequestID: "e1", Server: "everything", Message: "Tell us about you", Schema: json.RawMessage(schema)})
	got := frame(m)
	for _, want := range []string{"MCP server everything asks:", "Tell us about you", "› Full name*:", "as on the passport", "color*: ‹ green ›", "subscribe: [ ]"} {
		if !strings.Contains(got, want) {
			t.Errorf("the form lacks %q:\n%s", want, got)
		}
	}
	f := m.forms[0]
	press(m, "enter")
	if len(m.forms) != 1 || !strings.Contains(frame(m), "Full name is required") {
		t.Fatalf("enter with a required field empty: forms %d\n%s", len(m.forms), frame(m))
	}
	press(m, "A", "d", "a", "tab")
	press(m, "right", "tab", "4", "2", "tab", "space")
	content, errText := f.Content()
	if errText != "" {
		t.Fatal(errText)
	}
	want := map[string]any{"name": "Ada", "color": "blue", "age": int64(42), "subscribe": true}
	for k, v := range want {
		if content[k] != v {
			t.Errorf("%s = %#v, want %#v (all %v)", k, content[k], v, content)
		}
	}
	press(m, "esc")
	if len(m.forms) != 0 || !strings.Contains(frame(m), "mcp everything: decline") {
		t.Errorf("esc did not decline the form:\n%s", frame(m))
	}
}

// TestElicitationFormChoices: a titled single choice (oneOf) shows its
// titles and sends its values; a multiple choice (an array of enum or
// anyOf) starts from its default and space toggles the focused option.
func TestElicitationFormChoices(t *testing.T) {
	m := testModel(t, 160, 30)
	schema := `{"type":"object","properties":{
		"hero":{"type":"string","oneOf":[{"const":"hero-1","title":"Superman"},{"const":"hero-2","title":"Green Lantern"}],"default":"hero-1"},
		"fish":{"type":"array","items":{"anyOf":[{"const":"fish-1","title":"Tuna"},{"const":"fish-2","title":"Salmon"}]},"default":["fish-1"]}},
		"required":["hero"]}`
	feed(m, &event.ElicitationRequested{Meta: meta(1), RequestID: "e2", Server: "everything", Message: "Pick", Schema: json.RawMessage(schema)})
	if got := frame(m); !strings.Contains(got, "‹ Superman ›") || !strings.Contains(got, "[x] Tuna") || !strings.Contains(got, "[ ] Salmon") {
		t.Fatalf("the choices are not drawn:\n%s", got)
	}
	f := m.forms[0]
	press(m, "right", "tab", "right", "space")
	content, errText := f.Content()
	if errText != "" {
		t.Fatal(errText)
	}
	fish, _ := content["fish"].([]any)
	if content["hero"] != "hero-2" || len(fish) != 2 || fish[0] != "fish-1" || fish[1] != "fish-2" {
		t.Errorf("content %#v", content)
	}
}
