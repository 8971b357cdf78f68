package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"reasonix/actors/event"
	"reasonix/core/session"
	"reasonix/tui/panel"
)

// modal is an overlay that owns the keyboard while it is open; the
// composer is hidden under it (see hideComposer).
type modal interface {
	view(m *model, width int) string
	// key handles a key; done closes the modal.
	key(m *model, k tea.KeyPressMsg) (cmd tea.Cmd, done bool)
}

// activeModal is the overlay on top: a pending approval comes before
// anything the user opened.
func (m *model) activeModal() modal {
	if len(m.approvals) > 0 {
		return approvalModal{}
	}
	if len(m.forms) > 0 {
		return m.forms[0]
	}
	return m.modal
}

// The answers of an approval, in the order the modal lists them.
var approvalAnswers = []struct {
	decision, key, label string
}{
	{event.ApproveOnce, "y", "Allow once"},
	{event.ApproveSession, "s", "Allow for this session"},
	{event.ApproveAlways, "a", "Always allow (saved)"},
	{event.ApproveDeny, "n", "Deny"},
}

// approvalChoice is where the cursor is in the approval modal: the answer
// and, for session and always, which suggested scope.
type approvalChoice struct {
	answer int
	scope  int
}

type approvalModal struct{}

// answers lists the answer indexes the request allows: once_only offers
// allow once or deny.
func answersFor(a *event.ApprovalRequested) []int {
	if a.OnceOnly {
		return []int{0, 3}
	}
	return []int{0, 1, 2, 3}
}

func (approvalModal) view(m *model, width int) string {
	a := m.approvals[0]
	var b strings.Builder
	who := "The agent"
	if a.Task != "" {
		who = "Task " + a.Task
	}
	fmt.Fprintf(&b, "%s wants to run %s\n", who, toolStyle.Render(a.Tool))
	if subj := panel.ToolSubject(a.Tool, a.Args); subj != "" && !panel.Delegation(a.Tool) {
		b.WriteString("  " + wrap(subj, width-2) + "\n")
	}
	if d := panel.ApprovalDetail(a, width, m.height-12); d != "" {
		b.WriteString(d + "\n")
	}
	if a.Reason != "" {
		b.WriteString(dimStyle.Render(wrap(a.Reason, width)) + "\n")
	}
	answers := answersFor(a)
	for i, idx := range answers {
		ans := approvalAnswers[idx]
		line := fmt.Sprintf("[%s] %s", ans.key, ans.label)
		if i == m.approval.answer {
			line = selectStyle.Render("› " + line)
		} else {
			line = "  " + line
		}
		b.WriteString(line + "\n")
	}
	if !a.OnceOnly && len(a.Suggestions) > 0 {
		b.WriteString(scopeLines(a.Suggestions, m.approval.scope, width))
	}
	if len(m.approvals) > 1 {
		b.WriteString(dimStyle.Render(fmt.Sprintf("%d more waiting", len(m.approvals)-1)) + "\n")
	}
	hint := "↑/↓ enter · y s a n"
	if len(a.Suggestions) > 1 && !a.OnceOnly {
		hint += " · tab scope"
	}
	return strings.TrimRight(b.String(), "\n") + "\n" + dimStyle.Render(hint)
}

// scopeLines lists the rules a session or always answer may grant, the
// chosen one marked: a Bash prefix rule is the scope worth noticing.
func scopeLines(suggestions []string, i, width int) string {
	var b strings.Builder
	b.WriteString(dimStyle.Render("scope of s and a:") + "\n")
	for j, s := range suggestions {
		mark := "○ "
		if j == i%len(suggestions) {
			mark = "● "
		}
		b.WriteString("  " + truncateWidth(mark+s, width-2) + "\n")
	}
	return b.String()
}

func (approvalModal) key(m *model, k tea.KeyPressMsg) (tea.Cmd, bool) {
	a := m.approvals[0]
	answers := answersFor(a)
	pick := -1
	switch k.String() {
	case "up", "k", "shift+tab":
		m.approval.answer = (m.approval.answer + len(answers) - 1) % len(answers)
	case "down", "j":
		m.approval.answer = (m.approval.answer + 1) % len(answers)
	case "tab", "right", "left":
		if n := len(a.Suggestions); n > 1 {
			d := 1
			if k.String() == "left" {
				d = n - 1
			}
			m.approval.scope = (m.approval.scope + d) % n
		}
	case "enter":
		pick = answers[m.approval.answer]
	case "esc":
		pick = 3
	default:
		for _, idx := range answers {
			if approvalAnswers[idx].key == k.String() {
				pick = idx
			}
		}
	}
	if pick < 0 {
		return nil, false
	}
	cmd := &event.ApproveCmd{ID: a.RequestID, Decision: approvalAnswers[pick].decision}
	if (pick == 1 || pick == 2) && len(a.Suggestions) > 0 {
		cmd.Rule = a.Suggestions[m.approval.scope%len(a.Suggestions)]
	}
	m.resolved(a.RequestID)
	if m.live != nil {
		if err := m.live.Session().Do(cmd); err != nil {
			m.notice("error", err.Error())
		}
	}
	label := strings.ToLower(approvalAnswers[pick].label)
	if cmd.Rule != "" {
		label += " " + cmd.Rule
	}
	m.notice("info", fmt.Sprintf("%s: %s", a.Tool, label))
	return nil, false
}

// listModal is a list to pick from (/resume) or to read (/mcp).
type listModal struct {
	title string
	rows  []string
	// values are what picking a row does; nil for a list only to read.
	values []string
	sel    int
	pick   func(m *model, value string) tea.Cmd
	empty  string
}

func (l *listModal) view(_ *model, width int) string {
	var b strings.Builder
	b.WriteString(headingStyle.Render(l.title) + "\n")
	if len(l.rows) == 0 {
		b.WriteString(dimStyle.Render(l.empty) + "\n")
	}
	start := max(0, l.sel-menuRows+1)
	for i := start; i < len(l.rows) && i < start+menuRows; i++ {
		line := truncate(l.rows[i], width-2)
		if l.values != nil && i == l.sel {
			b.WriteString(selectStyle.Render("› "+line) + "\n")
		} else {
			b.WriteString("  " + line + "\n")
		}
	}
	hint := "esc close"
	if l.values != nil {
		hint = "↑/↓ enter · esc close"
	}
	b.WriteString(dimStyle.Render(hint))
	return b.String()
}

func (l *listModal) key(m *model, k tea.KeyPressMsg) (tea.Cmd, bool) {
	switch k.String() {
	case "esc", "q":
		return nil, true
	case "up", "k":
		l.sel = max(l.sel-1, 0)
	case "down", "j":
		l.sel = min(l.sel+1, max(len(l.rows)-1, 0))
	case "enter":
		if l.values == nil || len(l.values) == 0 {
			return nil, true
		}
		return l.pick(m, l.values[l.sel]), true
	}
	return nil, false
}

// confirmModal asks a yes/no question.
type confirmModal struct {
	question string
	yes      func(m *model) tea.Cmd
}

func (c *confirmModal) view(_ *model, width int) string {
	return wrap(c.question, width) + "\n" + dimStyle.Render("[y] yes · [n] no")
}

func (c *confirmModal) key(m *model, k tea.KeyPressMsg) (tea.Cmd, bool) {
	switch k.String() {
	case "y", "enter":
		return c.yes(m), true
	case "n", "esc":
		return nil, true
	}
	return nil, false
}

// mcpServersMsg carries the MCP servers of the session's snapshot for
// the /mcp modal.
type mcpServersMsg struct {
	gen     int
	servers []event.MCPServerState
}

// listMCP takes the session's snapshot in a command (it waits on the
// session's view) and answers with its MCP servers.
func (m *model) listMCP() tea.Cmd {
	live, gen := m.live, m.gen
	return func() tea.Msg {
		var servers []event.MCPServerState
		if live != nil {
			servers = live.Snapshot().MCP
		}
		return mcpServersMsg{gen: gen, servers: servers}
	}
}

// mcpModal lists the MCP servers.
func mcpModal(servers []event.MCPServerState) modal {
	l := &listModal{title: "MCP servers", empty: "no MCP servers configured"}
	for _, s := range servers {
		row := fmt.Sprintf("%-16s %-10s %d tools · %d prompts · %d resources", s.Server, s.State, s.Tools, s.Prompts, s.Resources)
		if s.Error != "" {
			row += " · " + oneLine(s.Error, 80)
		}
		l.rows = append(l.rows, row)
	}
	return l
}

// sessionsMsg answers a /resume listing.
type sessionsMsg struct {
	list []session.Summary
	err  error
}

func (m *model) sessionsListed(msg sessionsMsg) tea.Cmd {
	if msg.err != nil {
		m.notice("error", "list sessions: "+msg.err.Error())
		return nil
	}
	l := &listModal{title: "Resume a session", empty: "no saved sessions in this workspace", values: []string{}}
	for _, s := range msg.list {
		l.rows = append(l.rows, fmt.Sprintf("%s  %s  %d turns  %s", s.ID, s.Started.Format("2006-01-02 15:04"), s.Turns, s.LastPrompt))
		l.values = append(l.values, s.ID)
	}
	l.pick = func(m *model, id string) tea.Cmd { return m.switchSession(OpenRequest{Resume: id}) }
	m.modal = l
	return nil
}

func truncate(s string, w int) string {
	if w < 2 {
		return s
	}
	return truncateWidth(s, w)
}
