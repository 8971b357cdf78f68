package tui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"reasonix/core/provider/providertest"
)

// TestTeatestChat drives the model as a program with teatest over a real
// session: a prompt typed and sent, a reasoning-and-Markdown answer, a
// posture switch with shift+tab, and the model the program ends with.
func TestTeatestChat(t *testing.T) {
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Reasoning: "short thought", Text: "Run the **linter** first."})
	o, _ := liveOpener(t, srv)
	sh := &shared{}
	m := newModel(o, sh)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(90, 30))
	screen := func(want string) func([]byte) bool {
		return func(b []byte) bool { return bytes.Contains([]byte(ansi.Strip(string(b))), []byte(want)) }
	}
	wait := teatest.WithDuration(30 * time.Second)
	teatest.WaitFor(t, tm.Output(), screen("· session "), wait)
	tm.Type("how do I check?")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	// The rendered form, printed at turn_done.
	teatest.WaitFor(t, tm.Output(), screen("Run the linter first."), wait)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	teatest.WaitFor(t, tm.Output(), screen("posture: auto"), wait)
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	fm, ok := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*model)
	if !ok {
		t.Fatal("the program did not end with the chat model")
	}
	sh.shutdown()
	fm.sub.Close()
	if err := fm.live.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	history := ansi.Strip(strings.Join(fm.chat.history, "\n"))
	for _, want := range []string{"› how do I check?", "✻ thought (2 words", "Run the linter first.", "· posture: auto"} {
		if !strings.Contains(history, want) {
			t.Errorf("the scrollback lacks %q:\n%s", want, history)
		}
	}
	if fm.status.posture != "auto" || fm.status.total.PromptTokens == 0 {
		t.Errorf("status at the end: %+v", fm.status)
	}
}
