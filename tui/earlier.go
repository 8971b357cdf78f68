package tui

import (
	"fmt"
	"strings"

	"reasonix/core/provider"
	"reasonix/tui/panel"
)

// earlierTurns is how many of a resumed conversation's last turns are drawn
// into the scrollback when it opens.
const earlierTurns = 3

// drawEarlier prints the last turns of a continued or resumed conversation
// (the user's messages, the answers and a line per tool call) so the chat
// opens where it left off, under a line saying how much came before.
func (m *model) drawEarlier(history []provider.Message) {
	start, turns := len(history), 0
	for i := len(history) - 1; i >= 0 && turns < earlierTurns; i-- {
		if history[i].Role == provider.RoleUser {
			start, turns = i, turns+1
		}
	}
	if turns == 0 {
		return
	}
	users := 0
	for _, msg := range history {
		if msg.Role == provider.RoleUser {
			users++
		}
	}
	head := fmt.Sprintf("earlier in this session: %d turns; the last %d:", users, turns)
	if users == turns {
		head = "earlier in this session:"
	}
	m.linewise = true
	m.commit(dimStyle.Render(head))
	for _, msg := range history[start:] {
		switch msg.Role {
		case provider.RoleUser:
			m.commitAt(func(w int) string { return renderPrompt(msg.Content, w) })
		case provider.RoleAssistant:
			if t := strings.TrimSpace(msg.Content); t != "" {
				m.commitAt(func(w int) string { return panel.Markdown(t, w) })
			}
			for _, c := range msg.ToolCalls {
				m.commitAt(func(w int) string {
					return cardLine(dimStyle.Render("●"), c.Name, panel.ToolSubject(c.Name, c.Arguments), "", w)
				})
			}
		}
	}
	m.commit(dimStyle.Render("── continued ──"))
}
