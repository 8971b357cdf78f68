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
