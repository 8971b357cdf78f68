package panel

import (
	"strconv"
	"strings"
	"time"

	"reasonix/actors/event"
	"reasonix/core/goal"
)

// maxTodoShown bounds the todo lines of the goal panel; a longer list
// shows a window around the item in progress.
const maxTodoShown = 10

// Goal is the goal panel, shown while a goal is the session's active one:
// its status, turn, what it used of its budgets and its todo list. It
// folds goal_started, goal_progress, goal_ended and todo_updated (the
// whole list each time the todo tool sets it, and the list a goal starts
// or resumes with). A Goal is not safe for concurrent use.
type Goal struct {
	now    func() time.Time
	seq    int64
	active bool

	id, objective, strategy string
	// status is running while the goal works, else goal_ended's status.
	status   string
	resumed  bool
	research string

	maxTurns, maxTokens int
	maxTime             time.Duration

	turn, tokens int
	// elapsed is the goal's time as of the event at elapsedAt; while the
	// goal runs the panel counts on from there. elapsedKnown is false
	// after a resume until the first goal_progress, since goal_started
	// does not carry what was used before.
	elapsed      time.Duration
	elapsedAt    time.Time
	elapsedKnown bool

	report, summary, reason string
	todoCount, todoDone     int
	noProgress              int
	nudged                  bool

	// todo is the list the last todo_updated gave; todoKnown is false
	// while the goal holds a list no event showed yet.
	todo      []goal.Item
	todoKnown bool
}

// NewGoal returns a goal panel with no goal, on the wall clock.
func NewGoal() *Goal {
	return &Goal{now: time.Now}
}

// SetClock sets the clock a running goal's time is counted on against.
func (g *Goal) SetClock(now func() time.Time) { g.now = now }

// Active reports whether a goal is the session's active one: from its
// goal_started until it ends complete or stopped (cleared, replaced). A
// blocked or paused goal stays active, since the next prompt answers it;
// so does one that reached a limit or failed, which goal resume goes on
// with.
func (g *Goal) Active() bool { return g.active }

// Apply folds one event in and reports whether the panel looks different.
// Events of subagent tasks are not the goal's and are ignored; an event at
// or below the last seq applied is a duplicate and is skipped.
func (g *Goal) Apply(ev event.Event) (changed bool) {
	if ev == nil {
		return false
	}
	m := metaOf(ev)
	if m == nil || m.Task != "" {
		return false
	}
	if m.Seq != 0 {
		if m.Seq <= g.seq {
			return false
		}
		g.seq = m.Seq
	}
	switch e := ev.(type) {
	case *event.GoalStarted:
		g.started(e)
	case *event.GoalProgressed:
		if e.Goal != g.id {
			return false
		}
		g.turn, g.tokens = e.Turn, e.Tokens
		g.elapsed, g.elapsedAt, g.elapsedKnown = time.Duration(e.ElapsedMS)*time.Millisecond, e.Time, true
		g.report, g.summary = e.Report, clean(e.Summary)
		g.todoCount, g.todoDone, g.noProgress, g.nudged = e.Todo, e.TodoDone, e.NoProgress, e.Nudged
	case *event.GoalEnded:
		if e.Goal != g.id {
			return false
		}
		g.status, g.reason = e.Status, clean(e.Reason)
		if e.Summary != "" {
			g.summary = clean(e.Summary)
		}
		g.turn, g.tokens = e.Turns, e.Tokens
		g.elapsed, g.elapsedAt, g.elapsedKnown = time.Duration(e.ElapsedMS)*time.Millisecond, e.Time, true
		g.active = e.Status != goal.StatusComplete && e.Status != goal.StatusStopped
	case *event.TodoUpdated:
		if !g.active {
			return false
		}
		items := make([]goal.Item, len(e.Items))
		for i, it := range e.Items {
			it.Content = clean(it.Content)
			items[i] = it
		}
		g.todo, g.todoKnown = items, true
		g.todoCount, g.todoDone = len(items), len(goal.Completions(items))
	default:
		return false
	}
	return true
}

func (g *Goal) started(e *event.GoalStarted) {
	same := e.Goal == g.id
	g.active, g.id, g.status = true, e.Goal, goal.StatusRunning
	g.objective, g.strategy, g.resumed, g.research = clean(e.Objective), e.Strategy, e.Resumed, e.Research
	g.maxTurns, g.maxTokens, g.maxTime = e.MaxTurns, e.MaxTokens, time.Duration(e.MaxTimeMS)*time.Millisecond
	g.reason, g.nudged = "", false
	if e.Resumed && same {
		// The same goal goes on (an answer to blocked, goal resume): what
		// it used and its list carry over; its clock starts again now.
		g.elapsedAt = e.Time
		return
	}
	g.turn, g.tokens, g.report, g.summary = 0, 0, "", ""
	g.todoCount, g.todoDone, g.noProgress = 0, 0, 0
	g.todo = nil
	if e.Resumed {
		// A goal resumed from its record: its budgets used and list are
		// in the record, not on the event, until its first turn reports.
		g.elapsed, g.elapsedAt, g.elapsedKnown = 0, e.Time, false
		g.todoKnown = false
		return
	}
	g.elapsed, g.elapsedAt, g.elapsedKnown = 0, e.Time, true
	g.todoKnown = true
}

// View renders the panel in as many lines as it needs (at most
// maxTodoShown todo lines plus five), each at most width cells: the
// status line with the turn and budgets, the objective, the last report
// or the reason it waits, and the todo list. It is empty without an
// active goal.
func (g *Goal) View(width int) string {
	if !g.active || width <= 0 {
		return ""
	}
	lines := []string{fit(styleHeader.Render(g.statusLine()), width)}
	lines = append(lines, fit("Objective: "+oneLine(g.objective), width))
	if g.research != "" {
		lines = append(lines, fit(styleFaint.Render("Notes: "+clean(g.research)), width))
	}
	switch {
	case g.status != goal.StatusRunning && g.reason != "":
		lines = append(lines, fit(styleWarn.Render(reasonLabel(g.status)+oneLine(g.reason)), width))
	case g.summary != "":
		lines = append(lines, fit(styleFaint.Render("Last: "+oneLine(g.summary)), width))
	}
	if g.nudged || g.noProgress > 0 {
		s := "No progress for " + strconv.Itoa(g.noProgress) + " round"
		if g.noProgress != 1 {
			s += "s"
		}
		if g.nudged {
			s += "; the next turn reassesses"
		}
		lines = append(lines, fit(styleWarn.Render(s), width))
	}
	lines = append(lines, g.todoLines(width)...)
	return strings.Join(lines, "\n")
}

func (g *Goal) statusLine() string {
	parts := []string{"Goal", g.status}
	if g.status == goal.StatusRunning && g.report == goal.StatusBlocked {
		// The model said blocked, not yet often enough to stop the goal.
		parts[1] += " (reported blocked)"
	}
	if g.strategy != "" {
		parts = append(parts, g.strategy)
	}
	turn := "turn " + strconv.Itoa(g.turn)
	if g.maxTurns > 0 {
		turn += "/" + strconv.Itoa(g.maxTurns)
	}
	parts = append(parts, turn)
	tokens := FormatTokens(g.tokens)
	if g.maxTokens > 0 {
		tokens += "/" + FormatTokens(g.maxTokens)
	}
	parts = append(parts, tokens+" tokens")
	if g.elapsedKnown {
		el := g.elapsed
		if g.status == goal.StatusRunning && !g.elapsedAt.IsZero() {
			el += max(g.now().Sub(g.elapsedAt), 0)
		}
		t := formatDuration(el)
		if g.maxTime > 0 {
			t += "/" + formatDuration(g.maxTime)
		}
		parts = append(parts, t)
	} else if g.maxTime > 0 {
		parts = append(parts, "?/"+formatDuration(g.maxTime))
	}
	return strings.Join(parts, " · ")
}

// reasonLabel introduces why a goal is not running: a blocked or paused
// goal waits for the user's next prompt.
func reasonLabel(status string) string {
	switch status {
	case goal.StatusBlocked, goal.StatusPaused:
		return "Waiting for you: "
	case goal.StatusLimit:
		return "Limit: "
	case goal.StatusFailed:
		return "Failed: "
	}
	return "Reason: "
}

// todoLines is the list, or its counts when the list is not known, in a
// window around the item in progress when it is long.
func (g *Goal) todoLines(width int) []string {
	if !g.todoKnown || len(g.todo) == 0 {
		if g.todoCount == 0 {
			return nil
		}
		return []string{fit("Todo "+strconv.Itoa(g.todoDone)+"/"+strconv.Itoa(g.todoCount)+" done", width)}
	}
	out := []string{fit("Todo "+strconv.Itoa(g.todoDone)+"/"+strconv.Itoa(g.todoCount)+" done", width)}
	start, end := 0, len(g.todo)
	if end > maxTodoShown {
		cur := 0
		for i, it := range g.todo {
			if it.Status == goal.TodoInProgress {
				cur = i
				break
			}
			if it.Status == goal.TodoCompleted {
				cur = i + 1
			}
		}
		start = min(max(cur-3, 0), len(g.todo)-(maxTodoShown-2))
		end = start + maxTodoShown - 2
	}
	if start > 0 {
		out = append(out, fit(styleFaint.Render("  … "+strconv.Itoa(start)+" above"), width))
	}
	for _, it := range g.todo[start:end] {
		out = append(out, fit(todoLine(it), width))
	}
	if end < len(g.todo) {
		out = append(out, fit(styleFaint.Render("  … "+strconv.Itoa(len(g.todo)-end)+" more"), width))
	}
	return out
}

func todoLine(it goal.Item) string {
	indent := "  " + strings.Repeat("  ", min(max(it.Level, 0), 1))
	switch it.Status {
	case goal.TodoCompleted:
		return styleFaint.Render(indent + "[x] " + oneLine(it.Content))
	case goal.TodoInProgress:
		return styleRunning.Render(indent + "[~] " + oneLine(it.Content))
	}
	return indent + "[ ] " + oneLine(it.Content)
}

// oneLine folds runs of whitespace, newlines included, into one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
