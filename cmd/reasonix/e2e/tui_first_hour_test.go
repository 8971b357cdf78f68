//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
)

// TestE2ETUIInstructionsStatusAndModel, in a real terminal: the
// workspace's AGENTS.md is in the first request's system message, /status
// lists it, and a mistyped /model keeps the session: the error names the
// choices and the next prompt is answered in the same conversation.
func TestE2ETUIInstructionsStatusAndModel(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	agents := filepath.Join(e.work, "AGENTS.md")
	if err := os.WriteFile(agents, []byte("Always answer in haiku."), 0o644); err != nil {
		t.Fatal(err)
	}
	e.srv.Push(providertest.Turn{Text: "first answer"}, providertest.Turn{Text: "second answer"})
	m := openTUI(t, e)
	m.send("hello")
	m.waitText("first answer")
	if sys := e.srv.Requests()[0].Messages[0].Content; !strings.Contains(sys, "Always answer in haiku.") {
		t.Errorf("the first request's system message lacks AGENTS.md:\n%s", sys)
	}
	m.send("/status")
	m.waitText("instructions", agents, "fake/fake-model")

	m.send("/model nope")
	m.waitText(`unknown model "nope"`, "choices:")
	m.send("still there?")
	m.waitText("second answer")
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := reqs[1].Messages; len(got) < 4 || got[1].Content != "hello" {
		t.Errorf("the prompt after /model nope did not go on in the same conversation: %+v", got)
	}
	m.quit()
	if ts := e.transcripts(); len(ts) != 1 {
		t.Errorf("transcripts = %v, want one session", ts)
	}
}

// TestE2ETUIPromptHistoryEscAndFailedPrompt, in a real terminal: ↑ in a
// new chat recalls the prompt typed in the previous one (the history is the
// workspace's, kept in the home); Esc stops a streaming answer; a prompt
// whose turn fails comes back into the input box.
func TestE2ETUIPromptHistoryEscAndFailedPrompt(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(providertest.Turn{Text: "noted"})
	m := openTUI(t, e)
	m.send("remember the parser bug")
	m.waitText("noted")
	m.quit()

	// Each request is answered before the next one is asked for: the
	// streaming one stalls until Esc cancels it.
	e.srv.Push(
		providertest.Turn{Text: "remembered again"},
		providertest.Turn{Text: "a long answer that keeps streaming and streaming", ChunkBytes: 8, FaultAfterEvents: 3, Stall: true},
		providertest.Turn{Status: 400},
	)
	m = openTUI(t, e)
	m.keys("Up")
	m.waitFor("the previous chat's prompt in the input box", func(s string) bool {
		return strings.Contains(s, "› remember the parser bug")
	})
	m.keys("Enter")
	m.waitText("remembered again")
	if got := lastRequest(t, e).LastUser(); got != "remember the parser bug" {
		t.Errorf("the recalled prompt reached the model as %q", got)
	}

	m.send("tell me a story")
	m.waitFor("the answer streaming", func(s string) bool { return strings.Contains(s, "a long an") })
	m.keys("Escape")
	m.waitText("turn cancelled")

	m.send("this one fails")
	m.waitText("the prompt is back in the input box")
	m.waitFor("the failed prompt in the input box", func(s string) bool { return strings.Contains(s, "› this one fails") })
	m.keys("C-c") // clears the input box
	m.quit()
}
