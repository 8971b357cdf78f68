package tui

import (
	"sync/atomic"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// countingModel counts the updates of the model it wraps.
type countingModel struct {
	m       *model
	updates atomic.Int64
	// sized is set by the window size, the last message of start-up.
	sized atomic.Bool
}

func (c *countingModel) Init() tea.Cmd { return nil }
func (c *countingModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	c.updates.Add(1)
	if _, ok := msg.(tea.WindowSizeMsg); ok {
		c.sized.Store(true)
	}
	_, cmd := c.m.Update(msg)
	return c, cmd
}
func (c *countingModel) View() tea.View { return c.m.View() }

// TestIdleSchedulesNothing: once a turn is over, nothing the model does
// schedules more work. Typing and the messages an idle terminal sends
// return no command at all (no cursor blink, no spinner, no redraw
// timer), so an idle chat wakes only for input or session events.
func TestIdleSchedulesNothing(t *testing.T) {
	m := testModel(t, 80, 24)
	feed(m, streamedTurn()...)
	m.Update(printedMsg{})
	idle := []tea.Msg{
		tea.WindowSizeMsg{Width: 80, Height: 24},
		tea.FocusMsg{}, tea.BlurMsg{},
		printedMsg{},
		tea.KeyPressMsg{Code: 'h', Text: "h"},
		tea.KeyPressMsg{Code: tea.KeyBackspace},
		tea.KeyPressMsg{Code: tea.KeyLeft},
	}
	before := m.cmdCount
	for range 100 {
		for _, msg := range idle {
			if _, cmd := m.Update(msg); cmd != nil {
				t.Fatalf("%T scheduled a command on an idle chat", msg)
			}
		}
	}
	if m.cmdCount != before {
		t.Errorf("%d commands over %d idle messages", m.cmdCount-before, 100*len(idle))
	}
	if m.composer.Focus() != nil {
		t.Error("focusing the composer starts a blink timer")
	}
}
