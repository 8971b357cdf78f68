package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// TestResizeRedrawsTheScrollbackAtTheNewWidth: a new width, once it
// settles, draws every printed block again at that width, after erasing
// the terminal; a width that changes again first only waits, and a print
// on its way holds the redraw back until it has landed.
func TestResizeRedrawsTheScrollbackAtTheNewWidth(t *testing.T) {
	m := testModel(t, 100, 30)
	m.notice("info", strings.Repeat("word ", 40))
	m.Update(printedMsg{})
	if w := widest(m.chat.history[0]); w > 100 || w < 60 {
		t.Fatalf("the notice is %d wide at width 100", w)
	}
	m.Update(tea.WindowSizeMsg{Width: 50, Height: 30})
	first := m.resizeGen
	m.Update(tea.WindowSizeMsg{Width: 40, Height: 30})
	if cmd := m.settled(resizedMsg{gen: first}); cmd != nil {
		t.Error("a width that changed again redrew before it settled")
	}
	m.printing = true // a print on its way
	if cmd := m.settled(resizedMsg{gen: m.resizeGen}); cmd != nil || !m.redrawWanted {
		t.Fatal("the redraw did not wait for the print on its way")
	}
	_, cmd := m.Update(printedMsg{})
	if cmd == nil || m.redrawWanted || m.printedWidth != 40 {
		t.Fatalf("the print landed and nothing was redrawn (wanted %v, drawn at %d)", m.redrawWanted, m.printedWidth)
	}
	if w := widest(m.chat.history[0]); w > 40 {
		t.Errorf("the notice is %d wide after the redraw at width 40:\n%s", w, m.chat.history[0])
	}
	if m.Update(tea.WindowSizeMsg{Width: 40, Height: 20}); m.resizeGen != first+1 {
		t.Error("a height change alone counted as a new width")
	}
}

func widest(block string) int {
	w := 0
	for _, l := range strings.Split(ansi.Strip(block), "\n") {
		w = max(w, ansi.StringWidth(strings.TrimRight(l, " ")))
	}
	return w
}
