package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"reasonix/core/text"
	"reasonix/tui/panel"
)

// The parts of the bottom region, top to bottom.
const (
	partFleet    = "fleet"
	partGoal     = "goal"
	partModal    = "modal"
	partMenu     = "menu"
	partComposer = "composer"
	partStatus   = "status"
)

// fleetRows is the fewest rows the fleet panel takes when it has more
// tasks than that; fleetLeaves the rows it leaves to the rest of the
// screen when it takes more.
const (
	fleetRows   = 10
	fleetLeaves = 12
)

// menuRows is the most rows the autocomplete menu takes.
const menuRows = 8

// bottomPart is one part of the bottom region as drawn.
type bottomPart struct {
	name string
	text string
}

// hideComposer says whether a modal overlay owns the keyboard: the
// composer is then not drawn, so no inactive input box sits under it.
// Input-owned overlays (autocomplete) keep it.
func (m *model) hideComposer() bool { return m.activeModal() != nil }

// bottomRows lays out the bottom region: panels, then either the modal or
// the menu and composer, then the status line.
func (m *model) bottomRows() []bottomPart {
	var parts []bottomPart
	if m.fleet.Len() > 0 {
		// As many task rows as the screen has room for, leaving the
		// composer, the status line and a few lines of the answer.
		rows := max(fleetRows, m.height-fleetLeaves)
		parts = append(parts, bottomPart{partFleet, m.fleet.View(m.width, min(m.fleet.Len()+2, rows))})
	}
	if m.goal.Active() {
		parts = append(parts, bottomPart{partGoal, m.goal.View(m.width)})
	}
	if md := m.activeModal(); md != nil {
		parts = append(parts, bottomPart{partModal, modalBorder.Width(m.width - 2).Render(md.view(m, m.width-4))})
	} else {
		if m.complete.open && m.menu.Len() > 0 {
			parts = append(parts, bottomPart{partMenu, m.menu.View(m.width, min(m.menu.Len(), menuRows))})
		}
		parts = append(parts, bottomPart{partComposer, m.composer.View()})
	}
	parts = append(parts, bottomPart{partStatus, m.statusLine()})
	return parts
}

// View draws the live region: what is still streaming and the bottom
// parts. Finished blocks are already in the terminal's scrollback.
func (m *model) View() tea.View {
	parts := m.bottomRows()
	bottom := 0
	for _, p := range parts {
		bottom += lipgloss.Height(p.text)
	}
	live := m.liveChat(max(m.height-bottom-1, 1))
	var b strings.Builder
	row := 0
	if live != "" {
		b.WriteString(live)
		b.WriteByte('\n')
		row += lipgloss.Height(live)
	}
	cursorRow := -1
	for i, p := range parts {
		if p.name == partComposer {
			cursorRow = row
		}
		b.WriteString(p.text)
		row += lipgloss.Height(p.text)
		if i < len(parts)-1 {
			b.WriteByte('\n')
		}
	}
	v := tea.NewView(b.String())
	// Inline, not the alternate screen: finished messages are printed into
	// the terminal's own scrollback, where they scroll, search and copy as
	// any output does. Mouse capture stays off for the same reason.
	v.AltScreen = false
	v.MouseMode = tea.MouseModeNone
	if cursorRow >= 0 && !m.fleet.Focused() {
		if c := m.composer.Cursor(); c != nil {
			c.Y += cursorRow
			v.Cursor = c
		}
	}
	return v
}

// liveChat is the answer and reasoning being streamed and the running tool
// calls, as plain text and cut to the last rows that fit: Markdown waits
// until a block is whole, so a token never re-renders what came before.
func (m *model) liveChat(rows int) string {
	c := &m.chat
	var lines []string
	if c.reasoning.Len() > 0 {
		if c.showReasoning {
			lines = append(lines, strings.Split(reasonStyle.Render(wrap("✻ "+c.reasoning.String(), m.width-2)), "\n")...)
		} else {
			lines = append(lines, reasonStyle.Render("✻ thinking… (ctrl+o shows reasoning)"))
		}
	}
	if c.answer.Len() > 0 {
		// Only the tail can be seen: wrapping just that keeps a frame's
		// cost flat however long the answer grows.
		tail := text.Suffix(c.answer.String(), rows*m.width*4)
		lines = append(lines, strings.Split(wrap(strings.TrimLeft(tail, "\n"), m.width-1), "\n")...)
	}
	now := m.now()
	for _, t := range c.tools {
		lines = append(lines, renderToolRunning(t, now, m.width))
	}
	if m.opening {
		lines = append(lines, dimStyle.Render("opening session…"))
	}
	if m.retry != "" {
		lines = append(lines, warnStyle.Render("↻ "+m.retry))
	}
	if len(lines) > rows {
		lines = lines[len(lines)-rows:]
	}
	return strings.Join(lines, "\n")
}

// statusLine is model, posture, usage and what is running.
func (m *model) statusLine() string {
	s := m.status
	parts := []string{s.model, "posture " + s.posture}
	if s.plan {
		parts = append(parts, "plan mode")
	}
	if s.total.PromptTokens > 0 || s.total.CompletionTokens > 0 {
		u := fmt.Sprintf("↑%s ↓%s", panel.FormatTokens(s.total.PromptTokens), panel.FormatTokens(s.total.CompletionTokens))
		if hit := cacheHitPct(s.total.CacheHitTokens, s.total.CacheMissTokens, s.total.PromptTokens); hit >= 0 {
			u += fmt.Sprintf(" cache %d%%", hit)
		}
		parts = append(parts, u)
	}
	switch {
	case s.running && s.queued > 0:
		parts = append(parts, fmt.Sprintf("running, %d queued", s.queued))
	case s.running:
		parts = append(parts, "running")
	case m.opening:
		parts = append(parts, "opening")
	default:
		parts = append(parts, "idle")
	}
	if n := len(m.approvals); n > 0 {
		parts = append(parts, fmt.Sprintf("%d approval(s)", n))
	}
	if m.goal.Active() {
		parts = append(parts, "goal active")
	}
	if n := m.fleet.Len(); n > 0 {
		if c, ok := m.fleet.(interface {
			Counts() (running, queued, done, failed int)
		}); ok {
			running, queued, done, failed := c.Counts()
			f := fmt.Sprintf("fleet %d running", running)
			if queued > 0 {
				f += fmt.Sprintf(", %d queued", queued)
			}
			f += fmt.Sprintf(", %d/%d done", done+failed, n)
			if failed > 0 {
				f += fmt.Sprintf(" (%d failed)", failed)
			}
			parts = append(parts, f)
		} else {
			parts = append(parts, fmt.Sprintf("%d task(s)", n))
		}
	}
	line := strings.Join(nonEmpty(parts), " · ")
	hint := "shift+tab posture · ctrl+o reasoning · ctrl+r search"
	if m.fleet.Len() > 0 {
		hint += " · ctrl+f fleet"
	}
	if m.quitArmed {
		hint = "press Ctrl-C again to quit"
	}
	if room := m.width - lipgloss.Width(line) - 3; room >= lipgloss.Width(hint) {
		line += strings.Repeat(" ", room-lipgloss.Width(hint)+3) + hint
	} else if m.quitArmed {
		line = hint
	}
	return statusStyle.Render(ansi.Truncate(line, m.width, "…"))
}

// cacheHitPct is the share of prompt tokens served from the provider's
// cache, or -1 when the provider says nothing of it.
func cacheHitPct(hit, miss, prompt int) int {
	switch {
	case hit+miss > 0:
		return hit * 100 / (hit + miss)
	case hit > 0 && prompt > 0:
		return hit * 100 / prompt
	}
	return -1
}

func nonEmpty(ss []string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
