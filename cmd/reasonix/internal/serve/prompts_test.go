package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"reasonix/core/prompt"
	"reasonix/core/provider/providertest"
	"reasonix/core/session"
)

// TestPromptsAttachmentsAndTitles: a prompt sent to the server joins the
// workspace's prompt history (the chat's file), which GET /api/prompts
// returns; a saved session's messages show what the user typed, its
// @reference blocks taken off as attachments, and its title is the words
// typed, without plan mode's note or a block.
func TestPromptsAttachmentsAndTitles(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	h.fake.Push(providertest.Turn{Text: "seen"})
	if err := session.AppendPrompt(session.PromptsPath(h.home, h.cwd), "from the chat"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.cwd, "notes.txt"), []byte("the notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := h.newSession()
	s := h.stream(id, "?since=0")
	defer s.close()
	const typed = "read @notes.txt please"
	h.prompt(id, typed)
	s.until("turn_done")

	var got struct{ Prompts []string }
	decode(t, h.req("GET", "/api/prompts", nil), http.StatusOK, &got)
	if !slices.Equal(got.Prompts, []string{"from the chat", typed}) {
		t.Errorf("prompts = %q", got.Prompts)
	}
	if reqs := h.fake.Requests(); len(reqs) != 1 || reqs[0].LastUser() == typed {
		t.Fatalf("the model did not get the expanded prompt: %+v", reqs)
	}

	var msgs struct {
		Messages []struct {
			Role, Text  string
			Attachments []string
		}
	}
	decode(t, h.req("GET", "/api/sessions/"+id+"/messages", nil), http.StatusOK, &msgs)
	if m := msgs.Messages[0]; m.Role != "user" || m.Text != typed || !slices.Equal(m.Attachments, []string{"notes.txt"}) {
		t.Errorf("the user's message = %+v", m)
	}

	// A transcript whose first turn was planned is titled by what was typed.
	dir := t.TempDir()
	path := filepath.Join(dir, "t.jsonl")
	line := `{"type":"message","message":{"role":"user","content":` + jsonString(prompt.PlanModeNote+`<file path="a.go">`+"\nx\n</file>\n\n"+"plan the refactor") + `}}` + "\n"
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	if title := firstPrompt(path); title != "plan the refactor" {
		t.Errorf("title = %q", title)
	}
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
