package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"reasonix/actors/event"
	"reasonix/core/text"
	"reasonix/tui/panel"
)

// Styles of the chat. Colours are the terminal's 16 so they follow its
// theme.
var (
	dimStyle     = lipgloss.NewStyle().Foreground(lipgloss.BrightBlack)
	reasonStyle  = lipgloss.NewStyle().Foreground(lipgloss.BrightBlack).Italic(true)
	toolStyle    = lipgloss.NewStyle().Foreground(lipgloss.Cyan).Bold(true)
	errStyle     = lipgloss.NewStyle().Foreground(lipgloss.Red)
	warnStyle    = lipgloss.NewStyle().Foreground(lipgloss.Yellow)
	okStyle      = lipgloss.NewStyle().Foreground(lipgloss.Green)
	userStyle    = lipgloss.NewStyle().Foreground(lipgloss.Blue).Bold(true)
	statusStyle  = lipgloss.NewStyle().Foreground(lipgloss.BrightBlack)
	modalBorder  = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Yellow).Padding(0, 1)
	selectStyle  = lipgloss.NewStyle().Reverse(true)
	headingStyle = lipgloss.NewStyle().Bold(true)
)

// wrap breaks plain text to width, wide characters counted as two.
func wrap(s string, width int) string {
	return ansi.Wrap(s, max(width, 10), "")
}

// renderPrompt is the user's message as the scrollback shows it.
func renderPrompt(s string, width int) string {
	return userStyle.Render("›") + " " + wrap(s, width-2)
}

// renderReasoning is a finished stretch of reasoning: dimmed in full, or
// one line saying it was there when reasoning is hidden.
func renderReasoning(s string, show bool, width int) string {
	if !show {
		return reasonStyle.Render(fmt.Sprintf("✻ thought (%d words; ctrl+o shows reasoning)", len(strings.Fields(s))))
	}
	return reasonStyle.Render("✻ " + wrap(s, width-2))
}

// renderPlan is a plan a planner wrote or a plan-mode session proposes.
func renderPlan(title, plan string, width int) string {
	return headingStyle.Render("▣ "+title) + "\n" + panel.Markdown(plan, width)
}

// renderNotice is one line of news: info dimmed, warnings and errors in
// their colours.
func renderNotice(level, msg string, width int) string {
	switch level {
	case "error":
		return errStyle.Render(wrap("✗ "+msg, width))
	case "warn", "warning":
		return warnStyle.Render(wrap("! "+msg, width))
	}
	return dimStyle.Render(wrap("· "+msg, width))
}

// renderToolRunning is the live card of a call not yet finished.
func renderToolRunning(t *toolCard, now time.Time, width int) string {
	state := "running"
	if t.waiting {
		state = "waiting for approval"
	} else if !t.started.IsZero() && now.After(t.started) {
		state = "running " + duration(now.Sub(t.started))
	}
	return cardLine("◌", t.tool, panel.ToolSubject(t.tool, t.args), dimStyle.Render(state), width)
}

// renderToolDone is the card of a finished call.
func renderToolDone(e *event.ToolFinished, args string, width int) string {
	mark := okStyle.Render("●")
	if e.IsError {
		mark = errStyle.Render("●")
	}
	line := cardLine(mark, e.Tool, panel.ToolSubject(e.Tool, args), dimStyle.Render(duration(time.Duration(e.DurationMS)*time.Millisecond)), width)
	if e.IsError {
		line += "\n  " + errStyle.Render(ansi.Truncate(oneLine(e.Output, 400), max(width-4, 10), "…"))
		return line
	}
	if e.Tool == "bash" {
		line += outputHead(e.Output, width)
	}
	return line
}

// outputHeadLines is how much of a command's output its card shows.
const outputHeadLines = 4

// outputHead is the first lines of a command's output under its card,
// dimmed, with a count of the rest and the key that prints it whole.
func outputHead(out string, width int) string {
	out = strings.TrimRight(out, "\n")
	if strings.TrimSpace(out) == "" {
		return ""
	}
	lines := strings.Split(out, "\n")
	var b strings.Builder
	for _, l := range lines[:min(len(lines), outputHeadLines)] {
		b.WriteString("\n  " + dimStyle.Render("│ "+ansi.Truncate(l, max(width-6, 10), "…")))
	}
	if rest := len(lines) - outputHeadLines; rest > 0 {
		b.WriteString("\n  " + dimStyle.Render(fmt.Sprintf("│ … %d more lines (ctrl+e prints the whole output)", rest)))
	}
	return b.String()
}

// cardLine is "● tool  subject  detail", the subject cut to fit.
func cardLine(mark, tool, subject, detail string, width int) string {
	head := mark + " " + toolStyle.Render(tool)
	room := width - lipgloss.Width(head) - lipgloss.Width(detail) - 4
	if subject != "" && room > 4 {
		head += "  " + ansi.Truncate(subject, room, "…")
	}
	return head + "  " + detail
}

// duration shows a tool's time in the precision a person reads.
func duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// oneLine flattens s to one line of at most n runes.
func oneLine(s string, n int) string { return text.OneLine(s, n) }

// truncateWidth cuts s to w terminal columns, wide characters counted as
// two.
func truncateWidth(s string, w int) string { return ansi.Truncate(s, max(w, 1), "…") }
