package panel

import (
	"strings"
	"sync"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"
	"github.com/charmbracelet/x/ansi"
)

// markdown renderers by wrap width: building one parses a style sheet, so
// they are kept.
var (
	mdMu        sync.Mutex
	mdRenderers = map[int]*glamour.TermRenderer{}
)

// Markdown renders a finished answer for a terminal width wide. A fixed
// dark style is used rather than asking the terminal for its background,
// which would write a query behind Bubble Tea's back.
func Markdown(src string, width int) string {
	w := max(width-2, 20)
	mdMu.Lock()
	defer mdMu.Unlock()
	r, ok := mdRenderers[w]
	if !ok {
		var err error
		r, err = glamour.NewTermRenderer(glamour.WithStandardStyle(styles.DarkStyle), glamour.WithWordWrap(w))
		if err != nil {
			return ansi.Wrap(src, max(width, 10), "")
		}
		mdRenderers[w] = r
	}
	out, err := r.Render(src)
	if err != nil {
		return ansi.Wrap(src, max(width, 10), "")
	}
	return strings.Trim(out, "\n")
}
