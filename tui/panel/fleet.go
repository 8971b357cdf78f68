package panel

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"reasonix/actors/event"
	"reasonix/core/provider"
	"reasonix/core/text"
)

// Task states as the fleet panel shows them; a done task also has the
// status its task_done gave (event.TaskOK, TaskFailed...).
const (
	stateQueued  = "queued"
	stateRunning = "running"
	stateDone    = "done"
)

// Action is what a component asks the chat model to do on its behalf; the
// zero Action asks nothing.
type Action struct {
	// CancelTask is the id of a subagent task to cancel (the cancel_task
	// command), set once the user confirmed it.
	CancelTask string
	// Message is the agent to write to: the chat puts "@<agent> " in its
	// input (m on a row).
	Message string
}

// Fleet is the live fleet panel: one row per subagent task, in the order
// the tasks were first seen, folded from the task_queued, task_started and
// task_done events and from each task's own tool, text and usage events.
// Rows never move once placed, so the selection stays on its task while
// the fleet runs. A Fleet is not safe for concurrent use; it belongs to
// the chat model's update loop.
type Fleet struct {
	now   func() time.Time
	seq   int64
	tasks []*task
	index map[string]*task
	// idWidth is the id column: the widest id, within its bounds.
	idWidth int
	// counts partitions the tasks by bucket (see task.bucket), kept as
	// each task changes state so the header never counts rows.
	counts [bucketCount]int

	focused bool
	sel     int
	top     int
	// page is how many rows the last View showed, for pgup and pgdown.
	page int
	// detail shows the selected task's streamed text; back is how many
	// wrapped lines it is scrolled up from the newest.
	detail bool
	back   int
	// confirm is the task whose cancellation waits for y.
	confirm string
	// agents are every task the session started, in order, kept past
	// their fleet's fold (agents.go).
	agents     map[string]*agentLine
	agentOrder []string
}

// task is one row.
type task struct {
	id, fleet, prompt, profile, model string
	// worker is the worker host the task runs on ("" in this process)
	// and attempt its attempt there, from 1.
	worker  string
	attempt int
	writer  bool
	// background marks a task its parent does not wait for; name is its
	// name, when it has one.
	background                  bool
	name                        string
	state, status, err          string
	overBudget                  string
	queuedAt, startedAt, doneAt time.Time
	duration                    time.Duration
	tokens                      int
	cachePct                    float64
	hasCache                    bool
	// turns and cost are task_done's; budget and endpoint the latest
	// task_started or task_done gave.
	turns    int
	cost     float64
	budget   *event.Budget
	endpoint *provider.LimiterStats
	// open holds the task's tool calls started and not yet finished, in
	// start order; the last one is the row's current tool.
	open  []openCall
	lines ring
	// version grows with every change a row shows; the row cache is
	// valid while it matches.
	version uint64
	cache   rowCache
	// promptFit is the prompt cut to promptWidth cells, kept because
	// cutting wide text by grapheme is the costly part of a row.
	promptFit   string
	promptWidth int
}

// fitPrompt is the prompt cut to w cells.
func (t *task) fitPrompt(w int) string {
	if w != t.promptWidth || t.promptFit == "" {
		t.promptFit, t.promptWidth = fit(t.prompt, w), w
	}
	return t.promptFit
}

type openCall struct{ id, tool string }

// Buckets of the header counts: they partition the tasks.
const (
	bucketQueued = iota
	bucketRunning
	bucketOK
	// bucketFailed is every task that ended other than ok: failed,
	// cancelled, timed out or over budget.
	bucketFailed
	bucketCount
)

func (t *task) bucket() int {
	switch t.state {
	case stateQueued:
		return bucketQueued
	case stateDone:
		if t.status == event.TaskOK {
			return bucketOK
		}
		return bucketFailed
	default:
		return bucketRunning
	}
}

// NewFleet returns an empty fleet panel on the wall clock; SetClock
// replaces it.
func NewFleet() *Fleet {
	return &Fleet{now: time.Now, index: map[string]*task{}, page: 10, idWidth: minIDWidth}
}

// SetClock sets the clock the elapsed column is measured against, so a
// test (or a replay) shows the same times every run.
func (f *Fleet) SetClock(now func() time.Time) { f.now = now }

// Len is the number of tasks.
func (f *Fleet) Len() int { return len(f.tasks) }

// Focus gives the panel the keyboard.
func (f *Fleet) Focus() { f.focused = true }

// Blur takes the keyboard away; an unanswered cancel question is dropped
// and the detail closes, since only a focused panel can close it.
func (f *Fleet) Blur() { f.focused, f.confirm, f.detail, f.back = false, "", false, 0 }

// Focused reports whether the panel has the keyboard.
func (f *Fleet) Focused() bool { return f.focused }

// Counts returns how many tasks are running, queued, ended ok and ended
// otherwise (failed, cancelled, timed out, over budget).
func (f *Fleet) Counts() (running, queued, done, failed int) {
	return f.counts[bucketRunning], f.counts[bucketQueued], f.counts[bucketOK], f.counts[bucketFailed]
}

// Apply folds one event in and reports whether the panel looks different.
// Only fleet events and events of a task (Meta.Task set) count; an event
// at or below the last seq applied is a duplicate from a replay and is
// skipped. A task is made on its first event of any kind, so a panel that
// starts mid-stream still shows it. It costs O(1) per event, plus the
// length of the text it carries.
func (f *Fleet) Apply(ev event.Event) (changed bool) {
	if ev == nil {
		return false
	}
	m := metaOf(ev)
	if m == nil || m.Task == "" {
		return false
	}
	if !f.fresh(m) {
		return false
	}
	f.noteAgent(m.Task, ev)
	switch e := ev.(type) {
	case *event.TaskQueued:
		t := f.task(m.Task)
		t.fleet, t.prompt, t.profile, t.writer, t.background, t.name = e.Fleet, clean(e.Prompt), clean(e.Profile), e.Writer, e.Background, clean(e.Name)
		t.promptFit = ""
		t.queuedAt = e.Time
		if t.state == "" {
			f.setState(t, stateQueued, "")
		}
		t.version++
		return true
	case *event.TaskStarted:
		t := f.task(m.Task)
		if t.state == stateDone {
			return false
		}
		t.fleet, t.model, t.startedAt = e.Fleet, clean(e.Model), e.Time
		t.budget, t.endpoint = e.Budget, e.Endpoint
		t.worker, t.attempt = clean(e.Worker), e.Attempt
		f.setState(t, stateRunning, "")
		t.version++
		return true
	case *event.TaskRequeued:
		// The attempt was lost with its worker: the task waits for its
		// next start, and the calls the lost attempt had open are gone.
		t := f.task(m.Task)
		if t.state == stateDone {
			return false
		}
		t.open, t.startedAt = nil, time.Time{}
		t.lines.line("[requeued] " + clean(e.Reason))
		f.setState(t, stateQueued, "")
		t.version++
		return true
	case *event.TaskDone:
		t := f.task(m.Task)
		f.taskDone(t, e)
		return true
	}
	t := f.index[m.Task]
	if t != nil && t.state == stateDone {
		// Nothing of a task follows its task_done; a stray event
		// does not bring it back.
		return false
	}
	fresh := t == nil || t.state != stateRunning
	t = f.running(m.Task, t, m.Time)
	switch e := ev.(type) {
	case *event.ToolStarted:
		// A call is open once, however often its start is repeated
		// without a seq; a task has a handful open at most.
		for i, c := range t.open {
			if c.id == e.CallID {
				t.open = append(t.open[:i], t.open[i+1:]...)
				break
			}
		}
		t.open = append(t.open, openCall{id: e.CallID, tool: clean(e.Tool)})
		t.lines.line("[" + clean(e.Tool) + "] " + clean(text.Prefix(e.Args, maxLineBytes)))
	case *event.ToolFinished:
		for i := len(t.open) - 1; i >= 0; i-- {
			if t.open[i].id == e.CallID {
				t.open = append(t.open[:i], t.open[i+1:]...)
				break
			}
		}
		if e.IsError {
			t.lines.line("[" + clean(e.Tool) + "] failed")
		}
	case *event.UsageReported:
		t.tokens = tokensOf(e.Total)
		if e.Total.PromptTokens > 0 {
			t.cachePct, t.hasCache = 100*float64(e.Total.CacheHitTokens)/float64(e.Total.PromptTokens), true
		}
	case *event.TextDelta:
		t.lines.write(e.Text)
		// The row does not show text: only a row just made or started,
		// or an open detail of this task, changes.
		if fresh {
			t.version++
		}
		return fresh || (f.detail && f.selected() == t)
	}
	t.version++
	return true
}

// running is the task of id, made running if this is its first sight or
// it was queued: an event of the task's own work means it started, at
// that event's time if task_started was missed.
func (f *Fleet) running(id string, t *task, at time.Time) *task {
	if t == nil {
		t = f.task(id)
	}
	if t.state != stateRunning {
		f.setState(t, stateRunning, "")
		if t.startedAt.IsZero() {
			t.startedAt = at
		}
	}
	return t
}

func (f *Fleet) taskDone(t *task, e *event.TaskDone) {
	if e.Fleet != "" {
		t.fleet = e.Fleet
	}
	t.doneAt = e.Time
	t.duration = time.Duration(e.DurationMS) * time.Millisecond
	t.err, t.overBudget = clean(e.Error), e.OverBudget
	t.turns, t.cost = e.Turns, e.Cost
	if e.Budget != nil {
		t.budget = e.Budget
	}
	if e.Endpoint != nil {
		t.endpoint = e.Endpoint
	}
	if n := tokensOf(e.Usage); n > 0 {
		t.tokens = n
	}
	switch {
	case e.CacheHitPct > 0:
		t.cachePct, t.hasCache = e.CacheHitPct, true
	case e.Usage.PromptTokens > 0:
		t.cachePct, t.hasCache = 100*float64(e.Usage.CacheHitTokens)/float64(e.Usage.PromptTokens), true
	}
	t.open = nil
	f.setState(t, stateDone, e.Status)
	if f.confirm == t.id {
		f.confirm = ""
	}
	t.version++
}

// Restore replaces the panel's tasks with a snapshot's, for a frontend
// that attaches late or fell behind (lagged): the rows are rebuilt in the
// snapshot's order, and events up to its Seq are then skipped as already
// folded. A snapshot carries no times, tokens or text, so those columns
// stay empty until the tasks' next events. Focus, the selected task (when
// it is still there) and the detail are kept.
func (f *Fleet) Restore(s event.Snapshot) {
	keep, _ := f.Selected()
	f.tasks, f.index, f.counts, f.idWidth = nil, map[string]*task{}, [bucketCount]int{}, minIDWidth
	f.sel, f.top, f.confirm = 0, 0, ""
	for _, ts := range s.Tasks {
		t := f.task(ts.ID)
		t.fleet, t.prompt, t.profile, t.model, t.writer = ts.Fleet, clean(ts.Prompt), clean(ts.Profile), clean(ts.Model), ts.Writer
		t.background, t.name = ts.Background, clean(ts.Name)
		t.worker, t.attempt = clean(ts.Worker), ts.Attempt
		t.err = clean(ts.Error)
		switch ts.State {
		case stateQueued, stateRunning:
			f.setState(t, ts.State, "")
		default:
			f.setState(t, stateDone, ts.Status)
		}
	}
	for i, t := range f.tasks {
		if t.id == keep {
			f.sel = i
		}
	}
	if f.selected() == nil {
		f.detail = false
	}
	f.seq = s.Seq
}

// task is the row of id, appended on first sight.
func (f *Fleet) task(id string) *task {
	if t, ok := f.index[id]; ok {
		return t
	}
	t := &task{id: clean(id)}
	f.idWidth = min(max(f.idWidth, cells(t.id)), maxIDWidth)
	f.index[id] = t
	f.tasks = append(f.tasks, t)
	return t
}

// setState moves t between buckets, keeping the counts exact however many
// times an event is repeated.
func (f *Fleet) setState(t *task, state, status string) {
	if t.state != "" {
		f.counts[t.bucket()]--
	}
	t.state, t.status = state, status
	f.counts[t.bucket()]++
}

func (f *Fleet) selected() *task {
	if f.sel < 0 || f.sel >= len(f.tasks) {
		return nil
	}
	return f.tasks[f.sel]
}

// Selected returns the id of the selected task, false when there is none.
func (f *Fleet) Selected() (string, bool) {
	if t := f.selected(); t != nil {
		return t.id, true
	}
	return "", false
}

// Key handles a key while the panel has focus. In the list: up, down, j,
// k, pgup, pgdown, home and end move the selection; enter opens the
// selected task's detail; x or c asks to cancel a queued or running task,
// and y confirms (any other key keeps it); esc drops the question, or
// blurs the panel. In the detail the moving keys scroll its text and esc
// goes back to the list. A key the panel does not use is not handled, so
// the caller can treat it as its own.
func (f *Fleet) Key(msg tea.KeyPressMsg) (handled bool, act Action) {
	if !f.focused {
		return false, Action{}
	}
	k := msg.String()
	if f.confirm != "" {
		id := f.confirm
		f.confirm = ""
		if k == "y" || k == "Y" {
			if t := f.index[id]; t != nil && t.state != stateDone {
				return true, Action{CancelTask: id}
			}
		}
		return true, Action{}
	}
	if f.detail {
		return f.detailKey(k)
	}
	switch k {
	case "up", "k":
		f.move(-1)
	case "down", "j":
		f.move(1)
	case "pgup":
		f.move(-max(1, f.page))
	case "pgdown":
		f.move(max(1, f.page))
	case "home":
		f.move(-len(f.tasks))
	case "end":
		f.move(len(f.tasks))
	case "enter":
		if f.selected() != nil {
			f.detail, f.back = true, 0
		}
	case "x", "c":
		f.askCancel()
	case "m":
		if t := f.selected(); t != nil {
			f.Blur()
			agent, _, _ := strings.Cut(t.id, "+") // a follow-up's agent
			return true, Action{Message: agent}
		}
	case "esc":
		f.Blur()
	default:
		return false, Action{}
	}
	return true, Action{}
}

func (f *Fleet) detailKey(k string) (bool, Action) {
	switch k {
	case "up", "k":
		f.back++
	case "down", "j":
		f.back = max(0, f.back-1)
	case "pgup":
		f.back += max(1, f.page)
	case "pgdown":
		f.back = max(0, f.back-max(1, f.page))
	case "home":
		f.back = maxRingLines * 64 // clamped to the text by View
	case "end":
		f.back = 0
	case "x", "c":
		f.askCancel()
	case "esc", "enter":
		f.detail, f.back = false, 0
	default:
		return false, Action{}
	}
	return true, Action{}
}

func (f *Fleet) askCancel() {
	if t := f.selected(); t != nil && t.state != stateDone {
		f.confirm = t.id
	}
}

// Confirming returns the task whose cancellation waits for y.
func (f *Fleet) Confirming() (string, bool) { return f.confirm, f.confirm != "" }

// DetailOpen reports whether the detail view is shown.
func (f *Fleet) DetailOpen() bool { return f.detail }

func (f *Fleet) move(delta int) {
	if len(f.tasks) == 0 {
		return
	}
	f.sel = min(max(f.sel+delta, 0), len(f.tasks)-1)
}

func tokensOf(u provider.Usage) int {
	if u.TotalTokens > 0 {
		return u.TotalTokens
	}
	return u.PromptTokens + u.CompletionTokens
}

// metaOf is the Meta of the events the panels fold, nil for the rest
// (a task's notice does not make a row).
func metaOf(ev event.Event) *event.Meta {
	switch ev.(type) {
	case *event.TaskQueued, *event.TaskStarted, *event.TaskRequeued, *event.TaskDone, *event.ToolStarted, *event.ToolFinished,
		*event.UsageReported, *event.TextDelta, *event.GoalStarted, *event.GoalProgressed, *event.GoalEnded,
		*event.TodoUpdated:
		m := event.MetaOf(ev)
		return &m
	}
	return nil
}
