package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/config"
	"reasonix/core/memory"
	"reasonix/core/provider/providertest"
)

const rememberDBHost = `{"name":"db-host","content":"The staging DB is at db.internal:5432; use the read-only user.","description":"Staging database host"}`

// TestE2EMemoryRememberAskedEvenInYolo: under --permission-mode yolo a
// remember call is still put to the user, once only; approved over the
// input stream it writes the memory file, and a later turn's memory search
// hands the fact back to the model.
func TestE2EMemoryRememberAskedEvenInYolo(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "rem", Name: "remember", Arguments: rememberDBHost}}},
		providertest.Turn{Text: "Saved."},
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "look", Name: "memory", Arguments: `{"operation":"search","query":"which staging database host?"}`}}},
		providertest.Turn{Text: "db.internal:5432"},
	)
	s := e.stream("--permission-mode", "yolo")
	s.send(`{"type":"prompt","text":"remember where the staging DB is"}`)
	ask := s.expect("approval_requested", nil)
	suggestions, _ := ask["suggestions"].([]any)
	if ask["tool"] != "remember" || ask["once_only"] != true || len(suggestions) != 0 {
		t.Fatalf("approval_requested = %v, want remember, once_only, no suggestions", ask)
	}
	if reason, _ := ask["reason"].(string); !strings.Contains(reason, `remember project/db-host: "The staging DB is at db.internal:5432`) {
		t.Fatalf("approval reason %q lacks the preview", reason)
	}
	// "always" is taken as this call only: nothing is saved as a rule.
	s.send(`{"type":"approve","id":` + quote(ask["request_id"].(string)) + `,"decision":"always"}`)
	if first := s.expect("turn_done", func(ev map[string]any) bool { return ev["task"] == nil }); first["status"] != "ok" {
		t.Fatalf("first turn_done = %v", first)
	}

	data, err := os.ReadFile(filepath.Join(e.work, ".reasonix", "memory", "db-host.md"))
	if err != nil {
		t.Fatalf("the approved memory was not written: %v", err)
	}
	m := memory.Parse(data)
	if m.Name != "db-host" || m.Scope != memory.Project || m.Description != "Staging database host" ||
		m.Body != "The staging DB is at db.internal:5432; use the read-only user." || m.Updated.IsZero() {
		t.Fatalf("memory file parsed as %+v:\n%s", m, data)
	}

	s.send(`{"type":"prompt","text":"where is the staging DB?"}`)
	if second := s.expect("turn_done", func(ev map[string]any) bool { return ev["task"] == nil }); second["text"] != "db.internal:5432" {
		t.Fatalf("second turn_done = %v", second)
	}
	if r := s.finish(); r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	asks := 0
	for _, ev := range s.seen {
		if ev["type"] == "approval_requested" {
			asks++
		}
	}
	if asks != 1 {
		t.Errorf("%d approval requests, want 1 (memory is read-only)", asks)
	}
	if _, err := os.Stat(config.ProjectConfigPath(e.work)); !os.IsNotExist(err) {
		t.Errorf("an \"always\" answer saved a rule to the project config (stat: %v)", err)
	}

	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	if saved := toolResults(reqs[1]); len(saved) != 1 || !strings.HasPrefix(saved[0].Content, "Saved project/db-host") {
		t.Fatalf("remember result = %+v", saved)
	}
	found := toolResults(reqs[3])
	if len(found) != 2 {
		t.Fatalf("tool results in the last request = %+v", found)
	}
	got := found[1].Content
	for _, want := range []string{"project/db-host — Staging database host", "The staging DB is at db.internal:5432; use the read-only user.", "history tool"} {
		if !strings.Contains(got, want) {
			t.Errorf("memory search result lacks %q:\n%s", want, got)
		}
	}
}

// TestE2EMemoryRememberRefusedHeadless: a plain `reasonix run` has nobody
// to approve a remember call, so even under yolo it is refused, the model
// is told why, and no memory is written.
func TestE2EMemoryRememberRefusedHeadless(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "rem", Name: "remember", Arguments: rememberDBHost}}},
		providertest.Turn{Text: "I could not save it."},
	)
	r := e.run("run", "--permission-mode", "yolo", "remember where the staging DB is")
	if r.code != 0 || r.stdout != "I could not save it.\n" {
		t.Fatalf("unexpected result:\n%s", r)
	}
	res := toolResults(e.srv.Requests()[1])
	if len(res) != 1 || !strings.HasPrefix(res[0].Content, "Blocked: remember needs a person to approve each call, and this headless run has nobody who can") {
		t.Fatalf("remember result = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(e.work, ".reasonix", "memory")); !os.IsNotExist(err) {
		t.Fatalf("a refused remember touched the memory directory (stat: %v)", err)
	}
}
