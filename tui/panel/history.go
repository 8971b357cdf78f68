package panel

import "strings"

// History is a prompt history for ↑/↓ and Ctrl-R: what was typed in this
// chat and earlier ones, oldest first. The zero value is empty.
type History struct {
	items []string
	// pos is the entry ↑/↓ shows, len(items) when not browsing; draft is
	// what the composer held when browsing began.
	pos   int
	draft string
}

// NewHistory is a history of items, oldest first, not browsing.
func NewHistory(items []string) History { return History{items: items, pos: len(items)} }

// Add records a submitted input and ends browsing; it reports whether it
// is new (not the same as the last one), so worth saving.
func (h *History) Add(text string) bool {
	h.pos = len(h.items)
	if n := len(h.items); n > 0 && h.items[n-1] == text {
		return false
	}
	h.items = append(h.items, text)
	h.pos = len(h.items)
	return true
}

// Older and Newer step through the history; ok is false at either end.
func (h *History) Older(current string) (string, bool) {
	if h.pos == 0 {
		return "", false
	}
	if h.pos == len(h.items) {
		h.draft = current
	}
	h.pos--
	return h.items[h.pos], true
}

func (h *History) Newer() (string, bool) {
	if h.pos >= len(h.items) {
		return "", false
	}
	h.pos++
	if h.pos == len(h.items) {
		return h.draft, true
	}
	return h.items[h.pos], true
}

// Matches are the distinct entries holding query (any case), newest first.
func (h *History) Matches(query string) []string {
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
