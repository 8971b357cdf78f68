package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// resizeSettle is how long the width stays put before the scrollback is
// drawn again: dragging a window's edge resizes it many times a second,
// and each redraw prints the whole conversation.
const resizeSettle = 120 * time.Millisecond

// resizedMsg says the width changed; gen is the change it was sent for.
type resizedMsg struct{ gen int }

// resized answers a new terminal size. A new width is a reason to draw
// everything again: the terminal rewrapped what it held, and may have
// pushed rows of the live region into its scrollback, where the renderer
// cannot reach to erase them (see tea.EraseAll).
func (m *model) resized() tea.Cmd {
	if m.printedWidth == 0 {
		m.printedWidth = m.width
		return nil
	}
	if m.width == m.printedWidth {
		return nil
	}
	m.resizeGen++
	gen := m.resizeGen
	return tea.Tick(resizeSettle, func(time.Time) tea.Msg { return resizedMsg{gen: gen} })
}

// settled redraws once the width has stopped changing.
func (m *model) settled(msg resizedMsg) tea.Cmd {
	if msg.gen != m.resizeGen || m.width == m.printedWidth {
		return nil
	}
	if m.printing {
		m.redrawWanted = true
		return nil
	}
	return m.redrawAll()
}

// redrawAll erases the screen and the scrollback and prints the
// conversation again, each block drawn at the current width; the live
// region follows below it. What no longer fits in memory (maxHistory) is
// named, not printed.
func (m *model) redrawAll() tea.Cmd {
	m.redrawWanted = false
	m.printedWidth = m.width
	m.outbox = nil // every block waiting is in history
	blocks := make([]string, 0, len(m.chat.history)+1)
	if m.chat.trimmed {
		blocks = append(blocks, dimStyle.Render("· earlier output is in the session's transcript"))
	}
	for i, render := range m.chat.redraw {
		m.chat.history[i] = strings.TrimRight(render(m.width), "\n")
		blocks = append(blocks, m.chat.history[i])
	}
	m.printing = true
	cmds := []tea.Cmd{tea.EraseAll}
	if len(blocks) > 0 {
		cmds = append(cmds, tea.Println(strings.Join(blocks, "\n")))
	}
	return tea.Sequence(append(cmds, func() tea.Msg { return printedMsg{} })...)
}
