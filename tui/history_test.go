package tui

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix/core/session"
	"reasonix/tui/panel"
)

// TestHistoryRecallAndSearch: ↑ walks back through the saved prompts and
// ↓ comes forward to what was being typed; ctrl+r finds a prompt by a word
// and enter puts it in the composer; what is submitted is saved for the
// next chat in the workspace, a repeat of the last one only once.
func TestHistoryRecallAndSearch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	for _, p := range []string{"fix the parser", "run the tests", "explain the lexer"} {
		if err := session.AppendPrompt(path, p); err != nil {
			t.Fatal(err)
		}
	}
	m := testModel(t, 80, 24)
	m.opts.PromptsFile = path
	items, err := session.LoadPrompts(path)
	if err != nil {
		t.Fatal(err)
	}
	m.hist = panel.NewHistory(items)

	m.composer.SetValue("half typed")
	press(m, "up")
	if got := m.composer.Value(); got != "explain the lexer" {
		t.Fatalf("↑ shows %q", got)
	}
	press(m, "up", "up", "up")
	if got := m.composer.Value(); got != "fix the parser" {
		t.Fatalf("↑ past the oldest shows %q", got)
	}
	press(m, "down", "down", "down")
	if got := m.composer.Value(); got != "half typed" {
		t.Fatalf("↓ back to the draft shows %q", got)
	}

	m.composer.Reset()
	press(m, "ctrl+r", "t", "e", "s", "t")
	if !strings.Contains(frame(m), "run the tests") || strings.Contains(frame(m), "explain the lexer") {
		t.Fatalf("ctrl+r 'test' shows:\n%s", frame(m))
	}
	press(m, "enter")
	if got := m.composer.Value(); got != "run the tests" {
		t.Fatalf("the search put %q in the composer", got)
	}

	if cmd := m.remember("run the tests"); cmd != nil {
		cmd()
	}
	if cmd := m.remember("a new prompt"); cmd != nil {
		cmd()
	}
	if cmd := m.remember("a new prompt"); cmd != nil {
		t.Error("a repeat of the last prompt is saved again")
	}
	got, err := session.LoadPrompts(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fix the parser", "run the tests", "explain the lexer", "run the tests", "a new prompt"}
	if !slices.Equal(got, want) {
		t.Fatalf("saved %q, want %q", got, want)
	}
}

// TestPromptHistoryIsTrimmed: the file keeps the newest MaxPrompts once
// it has grown to twice that.
func TestPromptHistoryIsTrimmed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p", "prompts.jsonl")
	for i := 0; i <= 2*session.MaxPrompts; i++ {
		if err := session.AppendPrompt(path, "prompt "+strings.Repeat("x", i%7)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := session.LoadPrompts(path)
	if err != nil || len(got) != session.MaxPrompts {
		t.Fatalf("%d prompts after trimming (%v), want %d", len(got), err, session.MaxPrompts)
	}
}
