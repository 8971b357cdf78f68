package panel

import (
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"reasonix/actors/event"
)

// Column widths of a fleet row; the id column fits the longest id up to
// maxIDWidth and the prompt takes what is left.
const (
	stateWidth   = 11
	profileWidth = 10
	toolWidth    = 12
	tokensWidth  = 6
	cacheWidth   = 5
	timeWidth    = 6
	minIDWidth   = 4
	maxIDWidth   = 16
)

// rowCache is a task's last rendered row and what it was rendered for. A
// row is rendered again only when its task changed, the layout changed,
// the selection moved onto or off it, or its clock moved a second.
type rowCache struct {
	version  uint64
	width    int
	idWidth  int
	selected bool
	seconds  int64
	text     string
}

// View renders the panel in exactly height lines of at most width cells:
// a header with the counts, the column names, the rows around the
// selection and, while focused, a line of keys (or the cancel question).
// With the detail open it shows the selected task's latest text instead.
func (f *Fleet) View(width, height int) string {
	if height <= 0 {
		return ""
	}
	if width <= 0 {
		return joinLines(nil, height)
	}
	if f.detail && f.selected() != nil {
		return f.viewDetail(width, height)
	}
	lines := make([]string, 0, height)
	lines = append(lines, fit(styleHeader.Render(f.header()), width))
	footer := f.footer(false)
	body := height - 1
	if footer != "" && body > 1 {
		body--
	}
	idW := f.idWidth
	// The column names cost a row: they are shown when every task still
	// fits below them, or when the panel is tall enough to spare one.
	if body > 2 && (body > len(f.tasks) || body >= 8) {
		lines = append(lines, fit(styleFaint.Render(columnNames(idW)), width))
		body--
	}
	f.page = max(body, 1)
	f.scrollTo(body)
	now := f.now()
	for i := f.top; i < len(f.tasks) && i < f.top+body; i++ {
		lines = append(lines, f.row(f.tasks[i], width, idW, i == f.sel, now))
	}
	for len(lines) < height-1 && footer != "" {
		lines = append(lines, "")
	}
	if footer != "" && len(lines) < height {
		lines = append(lines, fit(footer, width))
	}
	return joinLines(lines, height)
}

// Height is how many lines View needs to show every task with its
// header, column names and, while focused or asking, the key line; at
// most limit. A caller sizing the panel to its content passes the result
// to View.
func (f *Fleet) Height(limit int) int {
	h := 1 + len(f.tasks)
	if len(f.tasks) > 0 {
		h++
	}
	if f.focused || f.confirm != "" {
		h++
	}
	return min(h, limit)
}

// scrollTo keeps the selection inside the body rows shown.
func (f *Fleet) scrollTo(body int) {
	if f.sel >= len(f.tasks) {
		f.sel = max(len(f.tasks)-1, 0)
	}
	if f.sel < f.top {
		f.top = f.sel
	}
	if body > 0 && f.sel >= f.top+body {
		f.top = f.sel - body + 1
	}
	f.top = min(max(f.top, 0), max(len(f.tasks)-body, 0))
}

func (f *Fleet) header() string {
	var b strings.Builder
	b.WriteString("Fleet  ")
	b.WriteString(strconv.Itoa(len(f.tasks)))
	b.WriteString(" tasks · ")
	b.WriteString(strconv.Itoa(f.counts[bucketRunning]))
	b.WriteString(" running · ")
	b.WriteString(strconv.Itoa(f.counts[bucketQueued]))
	b.WriteString(" queued · ")
	b.WriteString(strconv.Itoa(f.counts[bucketOK]))
	b.WriteString(" done · ")
	b.WriteString(strconv.Itoa(f.counts[bucketFailed]))
	b.WriteString(" failed")
	if len(f.tasks) > 0 {
		b.WriteString("  [")
		b.WriteString(strconv.Itoa(f.sel + 1))
		b.WriteByte('/')
		b.WriteString(strconv.Itoa(len(f.tasks)))
		b.WriteByte(']')
	}
	return b.String()
}

// footer is the key line while focused, or the cancel question.
func (f *Fleet) footer(detail bool) string {
	if f.confirm != "" {
		return styleWarn.Render("Cancel task " + f.confirm + "? y cancels it, any other key keeps it")
	}
	if !f.focused {
		return ""
	}
	cancel := ""
	if t := f.selected(); t != nil && t.state != stateDone {
		cancel = " · x cancel"
	}
	if detail {
		return styleFaint.Render("esc back · ↑/↓ pgup/pgdown scroll" + cancel)
	}
	return styleFaint.Render("↑/↓ select · enter detail · m message" + cancel + " · esc leave")
}

func columnNames(idW int) string {
	return "  " + pad("STATE", stateWidth) + " " + pad("TASK", idW) + " " + pad("PROFILE", profileWidth) + " " +
		pad("TOOL", toolWidth) + " " + padLeft("TOKENS", tokensWidth) + " " + padLeft("CACHE", cacheWidth) + " " +
		padLeft("TIME", timeWidth) + " PROMPT"
}

// elapsed is how long the task has been in its state that matters: its
// run (or its whole run once done), or its wait while queued. False when
// the events carried no times.
func (t *task) elapsed(now time.Time) (time.Duration, bool) {
	switch t.state {
	case stateQueued:
		if t.queuedAt.IsZero() {
			return 0, false
		}
		return now.Sub(t.queuedAt), true
	case stateDone:
		if t.duration > 0 {
			return t.duration, true
		}
		if !t.startedAt.IsZero() && !t.doneAt.IsZero() {
			return t.doneAt.Sub(t.startedAt), true
		}
		return 0, false
	default:
		if t.startedAt.IsZero() {
			return 0, false
		}
		return now.Sub(t.startedAt), true
	}
}

// row is t's line, from its cache when nothing it shows has changed.
func (f *Fleet) row(t *task, width, idW int, selected bool, now time.Time) string {
	d, ok := t.elapsed(now)
	secs := int64(-1)
	if ok {
		secs = int64(max(d, 0) / time.Second)
	}
	c := &t.cache
	if c.text != "" && c.version == t.version && c.width == width && c.idWidth == idW && c.selected == selected && c.seconds == secs {
		return c.text
	}
	*c = rowCache{version: t.version, width: width, idWidth: idW, selected: selected, seconds: secs,
		text: renderRow(t, width, idW, selected, d, ok)}
	return c.text
}

func renderRow(t *task, width, idW int, selected bool, d time.Duration, timed bool) string {
	tool := ""
	if n := len(t.open); n > 0 {
		tool = t.open[n-1].tool
		if n > 1 {
			tool += " +" + strconv.Itoa(n-1)
		}
	}
	tokens, cache, el := "", "", ""
	if t.tokens > 0 {
		tokens = FormatTokens(t.tokens)
	}
	if t.hasCache {
		cache = strconv.Itoa(int(t.cachePct+0.5)) + "%"
	}
	if timed {
		el = formatDuration(d)
	}
	marker := "  "
	if selected {
		marker = "> "
	}
	state := pad(stateLabel(t), stateWidth)
	profile := t.profile
	if t.background {
		profile = strings.TrimSpace("bg " + profile) // its parent goes on while it runs
	}
	rest := " " + pad(t.id, idW) + " " + pad(profile, profileWidth) + " " + pad(tool, toolWidth) + " " +
		padLeft(tokens, tokensWidth) + " " + padLeft(cache, cacheWidth) + " " + padLeft(el, timeWidth) + " "
	// Every column is padded to its width, so the fixed part's width is
	// known without measuring it.
	fixed := 2 + stateWidth + idW + profileWidth + toolWidth + tokensWidth + cacheWidth + timeWidth + 7
	if selected || width < fixed {
		line, n := fitCells(marker+state+rest+t.prompt, width)
		if selected {
			if n < width {
				line += spaces(width - n)
			}
			return styleSelected.Render(line)
		}
		return line
	}
	prompt := t.fitPrompt(width - fixed)
	if prompt != "" {
		prompt = styleFaint.Render(prompt)
	}
	return marker + stateStyle(t).Render(state) + rest + prompt
}

// stateLabel is the state column: the state, or how a done task ended.
func stateLabel(t *task) string {
	if t.state != stateDone {
		return t.state
	}
	switch t.status {
	case event.TaskTimedOut:
		return "timed out"
	case event.TaskOverBudget:
		return "over budget"
	case "":
		return stateDone
	}
	return t.status
}

func stateStyle(t *task) paint {
	switch t.bucket() {
	case bucketQueued:
		return styleQueued
	case bucketRunning:
		return styleRunning
	case bucketOK:
		return styleOK
	}
	if t.status == event.TaskCancelled || t.status == event.TaskOverBudget {
		return styleWarn
	}
	return styleFailed
}

// viewDetail is the selected task's header, prompt, outcome and latest
// text, the text wrapped to the width and scrolled back by f.back lines.
func (f *Fleet) viewDetail(width, height int) string {
	t := f.selected()
	lines := make([]string, 0, height)
	lines = append(lines, fit(styleHeader.Render(detailHeader(t, f.now())), width))
	if height > 2 && t.prompt != "" {
		lines = append(lines, fit(styleFaint.Render(t.prompt), width))
	}
	if s := detailInfo(t); s != "" && height > 4 {
		lines = append(lines, fit(styleFaint.Render(s), width))
	}
	if s := detailStatus(t); s != "" && height > 3 {
		lines = append(lines, fit(s, width))
	}
	footer := f.footer(true)
	body := height - len(lines)
	if footer != "" && body > 1 {
		body--
	}
	f.page = max(body, 1)
	text := wrapTail(t.lines.tail(maxRingLines+1), width, body+f.back)
	f.back = min(f.back, max(len(text)-body, 0))
	end := len(text) - f.back
	start := max(end-body, 0)
	lines = append(lines, text[start:end]...)
	for len(lines) < height-1 && footer != "" {
		lines = append(lines, "")
	}
	if footer != "" && len(lines) < height {
		lines = append(lines, fit(footer, width))
	}
	return joinLines(lines, height)
}

func detailHeader(t *task, now time.Time) string {
	parts := []string{t.id, stateLabel(t)}
	if t.profile != "" {
		parts = append(parts, t.profile)
	}
	if t.tokens > 0 {
		parts = append(parts, FormatTokens(t.tokens)+" tokens")
	}
	if t.hasCache {
		parts = append(parts, strconv.Itoa(int(t.cachePct+0.5))+"% cache")
	}
	if d, ok := t.elapsed(now); ok {
		parts = append(parts, formatDuration(d))
	}
	return strings.Join(parts, " · ")
}

// detailInfo is the task's model, turns, cost, ceilings and endpoint,
// what the row has no room for.
func detailInfo(t *task) string {
	var parts []string
	if t.model != "" {
		parts = append(parts, t.model)
	}
	if t.worker != "" {
		parts = append(parts, "on "+t.worker)
	}
	if t.attempt > 1 {
		parts = append(parts, "attempt "+strconv.Itoa(t.attempt))
	}
	if t.writer {
		parts = append(parts, "writer")
	}
	if t.background {
		parts = append(parts, "background")
	}
	if t.name != "" {
		parts = append(parts, "name "+t.name)
	}
	if t.turns > 0 {
		parts = append(parts, strconv.Itoa(t.turns)+" turns")
	}
	if t.cost > 0 {
		parts = append(parts, "cost "+strconv.FormatFloat(t.cost, 'f', 4, 64))
	}
	if b := t.budget; b != nil && !b.IsZero() {
		var caps []string
		if b.Tokens > 0 {
			caps = append(caps, FormatTokens(b.Tokens)+" tokens")
		}
		if b.Turns > 0 {
			caps = append(caps, strconv.Itoa(b.Turns)+" turns")
		}
		if b.Seconds > 0 {
			caps = append(caps, formatDuration(time.Duration(b.Seconds)*time.Second))
		}
		if b.Cost > 0 {
			caps = append(caps, "cost "+strconv.FormatFloat(b.Cost, 'f', -1, 64))
		}
		parts = append(parts, "budget "+strings.Join(caps, ", "))
	}
	if e := t.endpoint; e != nil {
		s := "endpoint window " + strconv.Itoa(e.Window) + "/" + strconv.Itoa(e.Max) + ", " +
			strconv.Itoa(e.InFlight) + " in flight, " + strconv.Itoa(e.Waiting) + " waiting"
		if e.Throttled > 0 {
			s += ", " + strconv.FormatInt(e.Throttled, 10) + " throttled"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}

// detailStatus says what the task is doing or how it ended, beyond its
// state.
func detailStatus(t *task) string {
	switch {
	case t.state == stateDone && t.status == event.TaskOverBudget && t.overBudget != "":
		return styleWarn.Render("stopped at its " + t.overBudget + " ceiling; the answer is partial")
	case t.state == stateDone && t.err != "":
		return styleFailed.Render("error: " + t.err)
	case len(t.open) > 0:
		return styleRunning.Render("running " + t.open[len(t.open)-1].tool)
	}
	return ""
}

// wrapTail wraps lines to width and returns at least the last n wrapped
// lines (all of them when there are fewer), oldest first. It wraps from
// the newest line back and stops once it has n.
func wrapTail(lines []string, width, n int) []string {
	var rev []string
	for i := len(lines) - 1; i >= 0 && len(rev) < n; i-- {
		l := clean(lines[i])
		if cells(l) <= width {
			rev = append(rev, l)
			continue
		}
		parts := strings.Split(ansi.Wrap(l, width, ""), "\n")
		for j := len(parts) - 1; j >= 0; j-- {
			rev = append(rev, fit(parts[j], width))
		}
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}
