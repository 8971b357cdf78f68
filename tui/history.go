package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"reasonix/core/session"
)

// remember adds a submitted input to the history and saves it off the
// update loop.
func (m *model) remember(input string) tea.Cmd {
	if !m.hist.Add(input) || m.opts.PromptsFile == "" {
		return nil
	}
	path, log := m.opts.PromptsFile, m.logger
	return func() tea.Msg {
		if err := session.AppendPrompt(path, input); err != nil {
			log.Warn("prompt history", "err", err)
		}
		return nil
	}
}

// recall is ↑ (older) or ↓ (newer) on the composer's first or last line:
// the history entry replaces the composer's text. It reports whether the
// key was taken.
func (m *model) recall(up bool) bool {
	var text string
	var ok bool
	switch {
	case up && m.composer.Line() == 0:
		text, ok = m.hist.Older(m.composer.Value())
	case !up && m.composer.Line() == m.composer.LineCount()-1:
		text, ok = m.hist.Newer()
	}
	if !ok {
		return false
	}
	m.composer.SetValue(text)
	m.composer.MoveToEnd()
	m.layout()
	return true
}

// searchModal is Ctrl-R: the history filtered by what is typed, newest
// first; enter puts the pick into the composer.
type searchModal struct {
	query string
	sel   int
}

func (s *searchModal) view(m *model, width int) string {
	var b strings.Builder
	b.WriteString(headingStyle.Render("Search prompts") + " " + s.query + "▏\n")
	found := m.hist.Matches(s.query)
	if len(found) == 0 {
		b.WriteString(dimStyle.Render("no prompt holds that") + "\n")
	}
	s.sel = min(s.sel, max(len(found)-1, 0))
	start := max(0, s.sel-menuRows+1)
	for i := start; i < len(found) && i < start+menuRows; i++ {
		line := truncate(oneLine(found[i], width), width-2)
		if i == s.sel {
			b.WriteString(selectStyle.Render("› "+line) + "\n")
		} else {
			b.WriteString("  " + line + "\n")
		}
	}
	b.WriteString(dimStyle.Render("type to search · ↑/↓ (or ctrl+r) move · enter take · esc close"))
	return b.String()
}

func (s *searchModal) key(m *model, k tea.KeyPressMsg) (tea.Cmd, bool) {
	found := m.hist.Matches(s.query)
	switch k.String() {
	case "esc", "ctrl+c":
		return nil, true
	case "up", "ctrl+r", "ctrl+p":
		s.sel = min(s.sel+1, max(len(found)-1, 0))
	case "down", "ctrl+n":
		s.sel = max(s.sel-1, 0)
	case "enter":
		if len(found) > 0 {
			m.composer.SetValue(found[s.sel])
			m.composer.MoveToEnd()
			m.layout()
		}
		return nil, true
	case "backspace":
		if r := []rune(s.query); len(r) > 0 {
			s.query, s.sel = string(r[:len(r)-1]), 0
		}
	default:
		if t := k.Text; t != "" {
			s.query, s.sel = s.query+t, 0
		}
	}
	return nil, false
}
