package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"reasonix/actors/event"
	"reasonix/core/mcp"
	"reasonix/tui/panel"
)

// formModal is an MCP elicitation form (panel.Form) over the composer; it
// sends the user's answer to the session.
type formModal struct{ *panel.Form }

func newForm(e *event.ElicitationRequested) *formModal { return &formModal{panel.NewForm(e)} }

func (f *formModal) view(_ *model, width int) string { return f.View(width) }

func (f *formModal) key(m *model, k tea.KeyPressMsg) (tea.Cmd, bool) {
	action, done := f.Key(k)
	if !done {
		return nil, false
	}
	var content map[string]any
	if action == mcp.ElicitAccept {
		content, _ = f.Content()
	}
	req := f.Request()
	m.notice("info", fmt.Sprintf("mcp %s: %s", req.Server, action))
	if m.live != nil {
		if err := m.live.Session().Do(&event.ElicitationCmd{ID: req.RequestID, Action: action, Content: content}); err != nil {
			m.notice("error", err.Error())
		}
	}
	m.forms = m.forms[1:]
	return nil, true
}
