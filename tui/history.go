package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"reasonix/core/session"
)

// history is the workspace's prompt history for ↑/↓ and Ctrl-R: what was
// typed in this chat and earlier ones (Options.PromptsFile), oldest first.
type history struct {
	items []string
	// pos is the entry ↑/↓ shows, len(items) when not browsing; draft is
	// what the composer held when browsing began.
	pos   int
	draft string
}

func newHistory(items []string) history { return history{items: items, pos: len(items)} }

// add records a submitted input and ends browsing; it reports whether it
// is new (not the same as the last one), so worth saving.
func (h *history) add(text string) bool {
	h.pos = len(h.items)
	if n := len(h.items); n > 0 && h.items[n-1] == text {
		return false
	}
	h.items = append(h.items, text)
	h.pos = len(h.items)
	return true
}

// older and newer step through the history; ok is false at either end.
func (h *history) older(current string) (string, bool) {
	if h.pos == 0 {
		return "", false
	}
	if h.pos == len(h.items) {
		h.draft = current
	}
	h.pos--
	return h.items[h.pos], true
}

func (h *history) newer() (string, bool) {
	if h.pos >= len(h.items) {
		return "", false
	}
	h.pos++
	if h.pos == len(h.items) {
		return h.draft, true
	}
	return h.items[h.pos], true
}

// matches are the distinct entries holding query (any case), newest first.
func (h *history) matches(query string) []string {
	q := strings.ToLower(query)
	seen := map[string]bool{}
	var out []string
	for i := len(h.items) - 1; i >= 0; i-- {
		it := h.items[i]
		if seen[it] || !strings.Contains(strings.ToLower(it), q) {
			continue
		}
		seen[it] = true
		out = append(out, it)
	}
	return out
}

// remember adds a submitted input to the history and saves it off the
// update loop.
func (m *model) remember(input string) tea.Cmd {
	if !m.hist.add(input) || m.opts.PromptsFile == "" {
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
		text, ok = m.hist.older(m.composer.Value())
	case !up && m.composer.Line() == m.composer.LineCount()-1:
		text, ok = m.hist.newer()
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
	found := m.hist.matches(s.query)
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
	found := m.hist.matches(s.query)
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
