package panel

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Styles are reduced once to the sequences they put around a line
// (paint): a Render per cell would be most of a frame's cost.
var (
	styleHeader   = paintOf(lipgloss.NewStyle().Bold(true))
	styleFaint    = paintOf(lipgloss.NewStyle().Faint(true))
	styleSelected = paintOf(lipgloss.NewStyle().Reverse(true))
	styleQueued   = paintOf(lipgloss.NewStyle().Foreground(lipgloss.BrightBlack))
	styleRunning  = paintOf(lipgloss.NewStyle().Foreground(lipgloss.Cyan))
	styleOK       = paintOf(lipgloss.NewStyle().Foreground(lipgloss.Green))
	styleFailed   = paintOf(lipgloss.NewStyle().Foreground(lipgloss.Red))
	styleWarn     = paintOf(lipgloss.NewStyle().Foreground(lipgloss.Yellow))
)

// paint is a text-only lipgloss style (attributes and colours; no
// padding, margins, borders or width) as the sequence it opens a line with
// and the one it closes it with.
type paint struct{ pre, post string }

func paintOf(s lipgloss.Style) paint {
	const mark = "X"
	r := s.Render(mark)
	i := strings.Index(r, mark)
	return paint{pre: r[:i], post: r[i+len(mark):]}
}

// Render paints one line of text; the empty string stays empty.
func (p paint) Render(s string) string {
	if s == "" {
		return ""
	}
	return p.pre + s + p.post
}

// ellipsis marks text cut to fit the screen.
const ellipsis = "…"

// fit cuts s to at most w cells, the last of them an ellipsis when
// anything was cut. It measures graphemes, so wide characters and ANSI
// sequences are counted as the terminal shows them.
func fit(s string, w int) string {
	s, _ = fitCells(s, w)
	return s
}

// fitCells is fit that also returns the cells the result takes.
func fitCells(s string, w int) (string, int) {
	if w <= 0 {
		return "", 0
	}
	n, plain := measure(s)
	if n <= w {
		return s, n
	}
	if plain {
		return s[:w-1] + ellipsis, w
	}
	s = ansi.Truncate(s, w, ellipsis)
	return s, cells(s)
}

// cells is how many terminal cells s takes.
func cells(s string) int {
	n, _ := measure(s)
	return n
}

// measure is cells with a fast path: printable ASCII is one cell a byte
// (plain is true then), anything else is measured by grapheme.
func measure(s string) (n int, plain bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return ansi.StringWidth(s), false
		}
	}
	return len(s), true
}

// pad cuts s to w cells and fills it with spaces to exactly w, for
// columns.
func pad(s string, w int) string {
	s, n := fitCells(s, w)
	if n < w {
		return s + spaces(w-n)
	}
	return s
}

// spaces is n blanks, without allocating for column-sized n.
func spaces(n int) string {
	const blanks = "                                                                "
	if n <= len(blanks) {
		return blanks[:n]
	}
	return strings.Repeat(" ", n)
}

// padLeft is pad aligned right, for numbers.
func padLeft(s string, w int) string {
	s, n := fitCells(s, w)
	if n < w {
		return spaces(w-n) + s
	}
	return s
}

// clean makes text from a model or a tool safe to measure and print on
// one line: invalid UTF-8 becomes U+FFFD (a stray byte could swallow the
// escape sequence after it), escape sequences go, tabs become spaces and
// other control characters are dropped. Text that needs none of it is
// returned as is.
func clean(s string) string {
	dirty := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				dirty = true
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (r >= 0x80 && r < 0xa0) {
			dirty = true
			break
		}
		i += size
	}
	if !dirty {
		return s
	}
	s = ansi.Strip(strings.ToValidUTF8(s, "\uFFFD"))
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString("    ")
		case r == '\n' || r == '\r':
			b.WriteByte(' ')
		case unicode.IsControl(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// joinLines joins exactly n lines, padding with empty ones, so a panel of
// fixed height never shifts what is below it.
func joinLines(lines []string, n int) string {
	if n <= 0 {
		return ""
	}
	size := n
	for _, l := range lines[:min(len(lines), n)] {
		size += len(l)
	}
	var b strings.Builder
	b.Grow(size)
	for i := range n {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i < len(lines) {
			b.WriteString(lines[i])
		}
	}
	return b.String()
}

// formatDuration is a short, fixed-precision duration for a column:
// 9s, 4m05s, 2h03m.
func formatDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return itoa(s) + "s"
	case s < 3600:
		return itoa(s/60) + "m" + two(s%60) + "s"
	default:
		return itoa(s/3600) + "h" + two(s/60%60) + "m"
	}
}

// FormatTokens is a token count in at most six cells: 950, 12.3k, 4.1M.
func FormatTokens(n int) string {
	switch {
	case n < 1000:
		return itoa(int64(n))
	case n < 1_000_000:
		return decimal(int64(n), 1000) + "k"
	default:
		return decimal(int64(n), 1_000_000) + "M"
	}
}

// decimal is n/unit with one decimal below 100 units, none above.
func decimal(n, unit int64) string {
	if n/unit >= 100 {
		return itoa(n / unit)
	}
	tenths := n * 10 / unit
	return itoa(tenths/10) + "." + itoa(tenths%10)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func two(n int64) string {
	if n < 10 {
		return "0" + itoa(n)
	}
	return itoa(n)
}
