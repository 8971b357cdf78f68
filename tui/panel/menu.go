package panel

import (
	"strings"
)

// Item is one entry of the autocomplete menu.
type Item struct {
	// Label is what the menu shows and Detail the faint text beside it
	// (a command's description, a file's size).
	Label, Detail string
	// Value is what the composer inserts when the item is chosen.
	Value string
	// Dir marks a directory: it is shown with a trailing /, and choosing
	// it usually completes one level further.
	Dir bool
}

// Menu is the autocomplete menu above the composer: a list with one
// selected item, shown a fixed number of rows at a time.
type Menu struct {
	items []Item
	sel   int
	top   int
}

// NewMenu returns an empty menu.
func NewMenu() *Menu { return &Menu{} }

// SetItems replaces the items. The selection stays on the item with the
// same Value when there is one (the list narrowing as the user types),
// else it goes back to the first.
func (m *Menu) SetItems(items []Item) {
	var keep string
	if it, ok := m.Selected(); ok {
		keep = it.Value
	}
	m.items = items
	m.sel, m.top = 0, 0
	for i, it := range items {
		if keep != "" && it.Value == keep {
			m.sel = i
			break
		}
	}
}

// Move moves the selection by delta, wrapping around either end, so up on
// the first item reaches the last.
func (m *Menu) Move(delta int) {
	n := len(m.items)
	if n == 0 {
		return
	}
	m.sel = ((m.sel+delta)%n + n) % n
}

// Selected returns the selected item, false when the menu is empty.
func (m *Menu) Selected() (Item, bool) {
	if m.sel < 0 || m.sel >= len(m.items) {
		return Item{}, false
	}
	return m.items[m.sel], true
}

// Len is the number of items.
func (m *Menu) Len() int { return len(m.items) }

// View renders min(Len, rows) lines of at most width cells, scrolled so
// the selection is visible, the selected line marked with > and
// highlighted. Labels are aligned in a column as wide as the widest shown
// (up to half the width), details follow faint.
func (m *Menu) View(width, rows int) string {
	n := min(len(m.items), rows)
	if n <= 0 || width <= 0 {
		return ""
	}
	if m.sel < m.top {
		m.top = m.sel
	}
	if m.sel >= m.top+n {
		m.top = m.sel - n + 1
	}
	m.top = min(max(m.top, 0), len(m.items)-n)
	shown := m.items[m.top : m.top+n]
	// The label column fits every item, not only those shown, so it does
	// not shift as the selection scrolls.
	labelW := 0
	for _, it := range m.items {
		labelW = max(labelW, cells(menuLabel(it)))
	}
	labelW = min(labelW, max(width/2-2, 1))
	lines := make([]string, n)
	for i, it := range shown {
		selected := m.top+i == m.sel
		marker := "  "
		if selected {
			marker = "> "
		}
		label := menuLabel(it)
		detail := clean(it.Detail)
		if detail == "" {
			line := fit(marker+label, width)
			if selected {
				line = styleSelected.Render(padRight(line, width))
			}
			lines[i] = line
			continue
		}
		head := marker + pad(label, labelW) + "  "
		if selected {
			lines[i] = styleSelected.Render(padRight(fit(head+detail, width), width))
			continue
		}
		if cells(head) >= width {
			lines[i] = fit(head, width)
			continue
		}
		lines[i] = head + styleFaint.Render(fit(detail, width-cells(head)))
	}
	return strings.Join(lines, "\n")
}

func menuLabel(it Item) string {
	l := clean(it.Label)
	if it.Dir && !strings.HasSuffix(l, "/") {
		l += "/"
	}
	return l
}

// padRight fills s with spaces to w cells, for a highlight bar.
func padRight(s string, w int) string {
	if n := w - cells(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}
