package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"reasonix/core/command"
	"reasonix/core/ref"
)

// completeLimit bounds one @ listing.
const completeLimit = 200

// completion is the state of the autocomplete menu: it belongs to the
// composer (an input-owned overlay), so the composer stays visible.
type completion struct {
	open bool
	// kind is '/' or '@'; token is the text being completed, with its
	// sigil, and start where it begins in the composer's value.
	kind  byte
	token string
	start int
	// seq orders @ listings, which come back from commands: a stale one
	// is dropped.
	seq int
	// dismissed is the input esc closed the menu on; it stays closed
	// until the input changes.
	dismissed string
}

func (c *completion) close() { c.open = false; c.token = "" }

func (c *completion) dismiss(input string) {
	c.close()
	c.dismissed = input
}

// completionMsg is an @ listing.
type completionMsg struct {
	seq   int
	items []menuItem
}

// refreshCompletion recomputes the menu for the composer's value: slash
// commands at the start of the input, @ references at the end of it.
func (m *model) refreshCompletion() tea.Cmd {
	v := m.composer.Value()
	c := &m.complete
	if v == c.dismissed {
		return nil
	}
	c.dismissed = ""
	if strings.HasPrefix(v, "/") && !strings.ContainsAny(v, " \n") {
		c.open, c.kind, c.token, c.start = true, '/', v, 0
		m.menu.SetItems(m.slashItems(v[1:]))
		return nil
	}
	i := strings.LastIndexAny(v, " \n\t")
	word := v[i+1:]
	if !strings.HasPrefix(word, "@") {
		c.close()
		return nil
	}
	c.kind, c.token, c.start = '@', word, i+1
	c.seq++
	seq, root, partial := c.seq, m.opts.Cwd, word[1:]
	var resources []menuItem
	if !strings.Contains(partial, "/") {
		for _, r := range m.commands.resources {
			name := r.Ref.String()
			if strings.HasPrefix(name, partial) {
				resources = append(resources, menuItem{Label: "@" + name, Detail: r.Resource.Name, Value: "@" + name})
			}
		}
	}
	return func() tea.Msg {
		entries, err := ref.Complete(root, partial, completeLimit)
		items := make([]menuItem, 0, len(entries)+len(resources))
		if err == nil {
			for _, e := range entries {
				items = append(items, menuItem{Label: "@" + e.Name, Value: "@" + e.Name, Dir: e.Dir})
			}
		}
		return completionMsg{seq: seq, items: append(items, resources...)}
	}
}

func (m *model) completed(msg completionMsg) {
	c := &m.complete
	if msg.seq != c.seq || c.kind != '@' {
		return
	}
	m.menu.SetItems(msg.items)
	c.open = len(msg.items) > 0
}

// slashItems lists the commands whose names start with prefix: built-ins,
// custom commands, MCP prompts.
func (m *model) slashItems(prefix string) []menuItem {
	var items []menuItem
	add := func(name, detail string) {
		if strings.HasPrefix(name, prefix) {
			items = append(items, menuItem{Label: "/" + name, Detail: detail, Value: "/" + name})
		}
	}
	for _, b := range command.Builtins {
		add(b.Name, b.Description)
	}
	for _, c := range m.commands.custom {
		add(c.Name, c.Description)
	}
	for _, p := range m.commands.prompts {
		add(p.Command(), p.Prompt.Description)
	}
	for _, p := range m.status.profiles {
		add(p, "run a task as a subagent with this profile")
	}
	return items
}

// accept puts the highlighted entry into the composer. A directory keeps
// the menu open one level down; anything else closes it. ok is false when
// there was nothing to take, and the key goes on to the composer.
func (m *model) accept() (tea.Cmd, bool) {
	it, ok := m.menu.Selected()
	if !ok {
		return nil, false
	}
	c := &m.complete
	v := m.composer.Value()
	if c.start > len(v) {
		return nil, false
	}
	tail := " "
	if it.Dir {
		tail = ""
	}
	if it.Value == c.token && !it.Dir {
		// Already complete: enter sends it.
		c.close()
		return nil, false
	}
	m.composer.SetValue(v[:c.start] + it.Value + tail)
	m.composer.CursorEnd()
	if it.Dir {
		return m.refreshCompletion(), true
	}
	c.close()
	c.dismissed = m.composer.Value()
	return nil, true
}
