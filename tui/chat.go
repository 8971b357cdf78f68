package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"reasonix/actors/event"
	"reasonix/tui/panel"
)

// chat is the conversation as the screen holds it: finished blocks go to
// the scrollback (history remembers them), the answer and reasoning being
// streamed and the tool calls still running stay in the live region.
type chat struct {
	// history is the blocks printed, as printed; redraw draws each again
	// at a width; trimmed says older ones were let go (maxHistory).
	history []string
	redraw  []func(width int) string
	trimmed bool

	// answer is the main session's answer since the last block boundary
	// (a tool call, the turn's end); it is shown as plain text while it
	// streams and rendered as Markdown once it is whole.
	answer strings.Builder
	// reasoning is the reasoning streamed before it.
	reasoning     strings.Builder
	showReasoning bool

	tools []*toolCard
}

// toolCard is one tool call of the main session.
type toolCard struct {
	callID, tool, args string
	started            time.Time
	waiting            bool
}

// apply folds one event into the model.
func (m *model) apply(ev event.Event) tea.Cmd {
	if l, ok := ev.(*event.Lagged); ok {
		return m.takeSnapshot(l.Dropped)
	}
	// The panels see every event: they pick their tasks' and goals' own.
	m.fleet.Apply(ev)
	m.goal.Apply(ev)
	if d, ok := ev.(*event.TaskDone); ok {
		// A fleet whose last task ended folds to one line in the
		// scrollback; the next one gets a panel of its own.
		if line, folded := m.fleet.FoldDone(d.Fleet); folded {
			m.commit(headingStyle.Render("▣ ") + line)
		}
	}
	if meta := metaOf(ev); meta.Task != "" {
		m.applyTask(ev)
		return nil
	}
	if m.applyStream(ev) || m.applyTurn(ev) || m.applyProgress(ev) {
		return nil
	}
	return m.applyMCP(ev)
}

// applyTask folds an event of a task (not the main session) into the
// model: only its approvals reach the chat's queue.
func (m *model) applyTask(ev event.Event) {
	if a, ok := ev.(*event.ApprovalRequested); ok {
		m.approvals = append(m.approvals, a)
	}
	if r, ok := ev.(*event.ApprovalResolved); ok {
		m.resolved(r.RequestID)
	}
}

// applyStream folds the main session's streamed answer, reasoning and tool
// calls into the live region; it reports whether ev was one of them.
func (m *model) applyStream(ev event.Event) bool {
	c := &m.chat
	switch ev.(type) {
	case *event.TextDelta, *event.ReasoningDelta, *event.ToolStarted:
		m.retry = "" // the answer has begun
	}
	switch e := ev.(type) {
	case *event.TextDelta:
		if e.Role == event.RolePlanner {
			return true
		}
		if c.reasoning.Len() > 0 {
			c.flushReasoning(m)
		}
		c.answer.WriteString(e.Text)
	case *event.ReasoningDelta:
		if e.Role == event.RolePlanner {
			return true
		}
		c.reasoning.WriteString(e.Text)
	case *event.ToolWaiting:
		c.flushText(m)
		if t := c.card(e.CallID); t != nil {
			t.waiting = true
		} else {
			c.tools = append(c.tools, &toolCard{callID: e.CallID, tool: e.Tool, args: e.Args, started: e.Time, waiting: true})
		}
	case *event.ToolStarted:
		c.flushText(m)
		if t := c.card(e.CallID); t != nil {
			t.waiting, t.started = false, e.Time
		} else {
			c.tools = append(c.tools, &toolCard{callID: e.CallID, tool: e.Tool, args: e.Args, started: e.Time})
		}
	case *event.ToolFinished:
		args := ""
		if t := c.card(e.CallID); t != nil {
			args = t.args
		}
		c.tools = slices.DeleteFunc(c.tools, func(t *toolCard) bool { return t.callID == e.CallID })
		m.commitAt(func(w int) string { return renderToolDone(e, args, w) })
		if e.Tool == "bash" && e.Task == "" {
			m.lastOutput, m.lastOutputOf = e.Output, "output of the last command:"
		}
		if e.Tool == "exit_plan_mode" && !e.IsError {
			m.status.plan = false // the plan is approved: the agent carries it out
		}
	default:
		return false
	}
	return true
}

// applyTurn folds the session's and its turns' state (the status line, the
// prompt queue, approvals) into the model; it reports whether ev was such
// an event.
func (m *model) applyTurn(ev event.Event) bool {
	switch e := ev.(type) {
	case *event.SessionStarted:
		m.notice("info", fmt.Sprintf("session %s · %s · %s", e.Session, e.Model, e.Cwd))
	case *event.UsageReported:
		m.status.total = e.Total
	case *event.TurnStarted:
		m.started(e.Prompt)
		m.status.running = true
		m.status.queued = max(m.status.queued-1, 0)
	case *event.PromptQueued:
		m.status.queued = max(m.status.queued, e.Position)
		m.notice("info", fmt.Sprintf("queued (#%d): %s", e.Position, oneLine(e.Prompt, 60)))
	case *event.PromptRejected:
		m.notice("warn", "prompt not taken: "+e.Reason)
	case *event.BackgroundResult:
		m.notice("info", oneLine(e.Text, 160))
	case *event.TurnDone:
		m.chat.flushAll(m)
		m.status.running = false
		switch e.Status {
		case event.StatusOK:
		case event.StatusCancelled:
			m.notice("warn", "turn cancelled")
		default:
			if e.Error == "" || e.Error != m.shownError {
				m.notice("error", turnEnded(e))
			}
			if m.turnShown != "" && m.composer.Value() == "" {
				m.restore(m.turnShown)
				m.notice("info", "the prompt is back in the input box")
			}
		}
		m.turnShown, m.shownError, m.retry = "", "", ""
	case *event.PostureChanged:
		m.status.posture = e.Posture
		m.notice("info", "posture: "+e.Posture)
	case *event.EffortChanged:
		m.status.effort = e.Effort
		m.notice("info", "reasoning effort: "+e.Effort+" from the next request")
	case *event.ApprovalRequested:
		m.chat.flushText(m)
		m.approvals = append(m.approvals, e)
	case *event.ApprovalResolved:
		m.resolved(e.RequestID)
		if e.Decision == event.ApproveDeny && e.Reason != "" {
			m.notice("warn", "denied: "+e.Reason)
		}
	default:
		return false
	}
	return true
}

// applyProgress folds notices, errors, compactions, plans and goals into
// the scrollback; it reports whether ev was one of them.
func (m *model) applyProgress(ev event.Event) bool {
	switch e := ev.(type) {
	case *event.Notice:
		m.notice(e.Level, e.Message)
	case *event.ErrorOccurred:
		m.retry = ""
		msg := e.Message
		if e.Detail != "" && e.Task == "" {
			m.lastOutput, m.lastOutputOf = e.Detail, "the endpoint's reply:"
			msg += " (ctrl+e shows the reply)"
		}
		if e.Task == "" {
			m.shownError = e.Message
		}
		m.notice("error", msg)
	case *event.Retrying:
		if e.Task == "" {
			m.retry = fmt.Sprintf("%s — retrying in %s, attempt %d of %d", e.Reason, duration(time.Duration(e.DelayMS)*time.Millisecond), e.Attempt, e.MaxAttempts)
		}
	case *event.CompactionStarted:
		m.notice("info", fmt.Sprintf("compacting: folding %d older messages (%s tokens)", e.Messages, panel.FormatTokens(e.Tokens)))
	case *event.Compacted:
		m.notice("info", fmt.Sprintf("compacted (%s, %s): %s → %s tokens of %s", e.Tier, e.Trigger,
			panel.FormatTokens(e.TokensBefore), panel.FormatTokens(e.TokensAfter), panel.FormatTokens(e.Window)))
	case *event.PlanReady:
		m.chat.flushAll(m)
		m.commitAt(func(w int) string { return renderPlan(fmt.Sprintf("Plan (round %d)", e.Round), e.Plan, w) })
	case *event.PlanProposed:
		m.chat.flushAll(m)
		m.commitAt(func(w int) string { return renderPlan("Proposed plan", e.Plan, w) })
	case *event.PlanStep:
		m.notice("info", fmt.Sprintf("step %s done %s", e.Step, e.Summary))
	case *event.GoalStarted:
		m.notice("info", "goal: "+oneLine(e.Objective, 80))
	case *event.GoalEnded:
		msg := "goal " + e.Status
		if e.Reason != "" {
			msg += ": " + e.Reason
		}
		m.notice("info", msg)
	default:
		return false
	}
	return true
}

// applyMCP folds the MCP servers' events into the model, returning the
// command that refreshes what the model knows of them, if any.
func (m *model) applyMCP(ev event.Event) tea.Cmd {
	switch e := ev.(type) {
	case *event.MCPServerUpdated:
		if e.State == event.MCPFailed {
			m.notice("warn", fmt.Sprintf("mcp %s failed: %s", e.Server, e.Error))
		}
		return m.queryMCP()
	case *event.ElicitationRequested:
		// Drawn as a form over the composer, after any approval.
		m.forms = append(m.forms, newForm(e))
	}
	return nil
}

// resolved drops an approval from the queue once it is answered.
func (m *model) resolved(id string) {
	before := len(m.approvals)
	m.approvals = slices.DeleteFunc(m.approvals, func(a *event.ApprovalRequested) bool { return a.RequestID == id })
	if len(m.approvals) != before {
		m.approval = approvalChoice{}
	}
}

func (c *chat) card(callID string) *toolCard {
	for _, t := range c.tools {
		if t.callID == callID {
			return t
		}
	}
	return nil
}

// flushReasoning commits the reasoning streamed so far.
func (c *chat) flushReasoning(m *model) {
	text := strings.TrimSpace(c.reasoning.String())
	c.reasoning.Reset()
	if text != "" {
		show := c.showReasoning // as shown now, whatever ctrl+o does later
		m.commitAt(func(w int) string { return renderReasoning(text, show, w) })
	}
}

// flushText commits the answer streamed so far, rendered as Markdown now
// that it is whole.
func (c *chat) flushText(m *model) {
	c.flushReasoning(m)
	text := strings.TrimSpace(c.answer.String())
	c.answer.Reset()
	if text != "" {
		m.commitAt(func(w int) string { return panel.Markdown(text, w) })
	}
}

// flushAll ends every block, at a turn's end: tool calls still open lost
// their results.
func (c *chat) flushAll(m *model) {
	c.flushText(m)
	c.tools = nil
}

// metaOf is the Meta an event carries.
func metaOf(ev event.Event) event.Meta { return event.MetaOf(ev) }

// turnEnded is the notice of a turn that did not end ok: its status and
// its error, the status once when the error already names it
// ("incomplete: …").
func turnEnded(e *event.TurnDone) string {
	switch {
	case strings.HasPrefix(e.Error, e.Status+":"):
		return "turn ended: " + e.Error
	case e.Error != "":
		return "turn ended: " + e.Status + ": " + e.Error
	}
	return "turn ended: " + e.Status
}
