package panel

import (
	"strconv"
	"strings"
	"time"
	"unicode"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Styles are built once: a style's Render is the costly part of a frame,
// so per-row work only concatenates what they produce.
var (
	styleHeader   = lipgloss.NewStyle().Bold(true)
	styleFaint    = lipgloss.NewStyle().Faint(true)
	styleSelected = lipgloss.NewStyle().Reverse(true)
	styleQueued   = lipgloss.NewStyle().Foreground(lipgloss.BrightBlack)
	styleRunning  = lipgloss.NewStyle().Foreground(lipgloss.Cyan)
	styleOK       = lipgloss.NewStyle().Foreground(lipgloss.Green)
	styleFailed   = lipgloss.NewStyle().Foreground(lipgloss.Red)
	styleWarn     = lipgloss.NewStyle().Foreground(lipgloss.Yellow)
)

// ellipsis marks text cut to fit the screen.
const ellipsis = "…"

// fit cuts s to at most w cells, the last of them an ellipsis when
// anything was cut. It measures graphemes, so wide characters and ANSI
// sequences are counted as the terminal shows them.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, ellipsis)
}

// pad cuts s to w cells and fills it with spaces to exactly w, for
// columns.
func pad(s string, w int) string {
	s = fit(s, w)
	if n := w - ansi.StringWidth(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// padLeft is pad aligned right, for numbers.
func padLeft(s string, w int) string {
	s = fit(s, w)
	if n := w - ansi.StringWidth(s); n > 0 {
		return strings.Repeat(" ", n) + s
	}
	return s
}

// clean makes text from a model or a tool safe to measure and print on
// one line: escape sequences go, tabs become spaces and other control
// characters are dropped. Text that needs none of it is returned as is.
func clean(s string) string {
	dirty := false
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			dirty = true
			break
		}
	}
	if !dirty {
		return s
	}
	s = ansi.Strip(s)
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
	var b strings.Builder
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

// formatTokens is a token count in at most six cells: 950, 12.3k, 4.1M.
func formatTokens(n int) string {
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
