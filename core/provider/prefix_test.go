package provider

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPrefixOf(t *testing.T) {
	tools := []ToolSchema{{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object"}`)}}
	sys := strings.Repeat("You are a careful engineer. ", 200)
	base := Request{Model: "m", Tools: tools, Messages: []Message{{Role: RoleSystem, Content: sys}, {Role: RoleUser, Content: "task 1"}}}
	key, tokens := PrefixOf(base)
	if tokens < len(sys)/4 || tokens > (len(sys)+200)/4 {
		t.Errorf("prefix of a %d-byte system prompt is %d tokens", len(sys), tokens)
	}
	other := base
	other.Messages = []Message{base.Messages[0], {Role: RoleUser, Content: "task 2, a different conversation"}}
	if k, _ := PrefixOf(other); k != key {
		t.Errorf("requests that differ after the system prompt have keys %s and %s", key, k)
	}
	for name, r := range map[string]Request{
		"another system prompt": {Model: "m", Tools: tools, Messages: []Message{{Role: RoleSystem, Content: sys + "!"}}},
		"another model":         {Model: "n", Tools: tools, Messages: base.Messages},
		"no tools":              {Model: "m", Messages: base.Messages},
	} {
		if k, _ := PrefixOf(r); k == key {
			t.Errorf("%s: same prefix key", name)
		}
	}

	var m PrefixMemo
	if k, n := m.Of(base); k != key || n != tokens {
		t.Errorf("memo: %s %d, want %s %d", k, n, key, tokens)
	}
	if k, _ := m.Of(other); k != key {
		t.Errorf("memo: same prefix, key %s, want %s", k, key)
	}
	changed := Request{Model: "m", Tools: tools, Messages: []Message{{Role: RoleSystem, Content: "short"}}}
	if k, _ := m.Of(changed); k == key {
		t.Error("memo kept the old key for a new system prompt")
	}
	copied := append([]ToolSchema(nil), tools...)
	copied[0].Description = "Read a file, differently."
	if k, _ := m.Of(Request{Model: "m", Tools: copied, Messages: changed.Messages}); k == key {
		t.Error("memo kept the old key for another tools slice")
	}
}

func TestPrefixWarm(t *testing.T) {
	ep := "http://warm.test/" + t.Name()
	if PrefixWarm(ep, "k") {
		t.Fatal("a prefix never answered is warm")
	}
	NoteAnswered(ep, "k")
	if !PrefixWarm(ep, "k") || PrefixWarm(ep, "other") || PrefixWarm(ep+"/x", "k") {
		t.Fatal("warm is per endpoint and key")
	}
}
