package panel

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"reasonix/actors/event"
	"reasonix/core/goal"
)

func TestGoalFold(t *testing.T) {
	t.Parallel()
	const id = "g1"
	start := &event.GoalStarted{Meta: mt(1, "", 0), Goal: id, Objective: "ship it", Strategy: goal.StrategySimple, MaxTurns: 10}
	progress := func(seq int64, turn int) *event.GoalProgressed {
		return &event.GoalProgressed{Meta: mt(seq, "", float64(turn*10)), Goal: id, Turn: turn, Tokens: turn * 1000, ElapsedMS: int64(turn) * 10_000, Todo: 3, TodoDone: 1}
	}
	ended := func(seq int64, status string) *event.GoalEnded {
		return &event.GoalEnded{Meta: mt(seq, "", 99), Goal: id, Status: status, Reason: "needs the API key", Turns: 4, Tokens: 4000, ElapsedMS: 40_000}
	}
	cases := []struct {
		name       string
		events     []event.Event
		active     bool
		status     string
		turn       int
		showsInTop string
	}{
		{"no goal", nil, false, "", 0, ""},
		{"started", []event.Event{start}, true, "running", 0, "Goal · running · simple · turn 0/10"},
		{"progress", []event.Event{start, progress(2, 3)}, true, "running", 3, "turn 3/10 · 3.0k tokens"},
		{"duplicate progress is skipped", []event.Event{start, progress(3, 3), progress(2, 2)}, true, "running", 3, "turn 3/10"},
		{"progress of another goal", []event.Event{start, &event.GoalProgressed{Meta: mt(2, "", 1), Goal: "other", Turn: 9}}, true, "running", 0, "turn 0/10"},
		{"blocked stays active", []event.Event{start, ended(2, goal.StatusBlocked)}, true, "blocked", 4, "Goal · blocked · simple"},
		{"limit stays active", []event.Event{start, ended(2, goal.StatusLimit)}, true, "limit", 4, "Limit: needs the API key"},
		{"complete ends it", []event.Event{start, ended(2, goal.StatusComplete)}, false, "complete", 4, ""},
		{"stopped ends it", []event.Event{start, ended(2, goal.StatusStopped)}, false, "stopped", 4, ""},
		{"answer to blocked goes on", []event.Event{start, progress(2, 2), ended(3, goal.StatusBlocked),
			&event.GoalStarted{Meta: mt(4, "", 50), Goal: id, Strategy: goal.StrategySimple, Resumed: true, MaxTurns: 10}}, true, "running", 4, "turn 4/10"},
		{"reported blocked, still running", []event.Event{start, &event.GoalProgressed{Meta: mt(2, "", 1), Goal: id, Turn: 1, Report: "blocked"}},
			true, "running", 1, "Goal · running (reported blocked) · simple"},
		{"research notes", []event.Event{&event.GoalStarted{Meta: mt(1, "", 0), Goal: id, Strategy: goal.StrategyResearch, Research: "/w/.reasonix/autoresearch/20260304-100000-x"}},
			true, "running", 0, "Notes: /w/.reasonix/autoresearch/20260304-100000-x"},
		{"a subagent's events are not the goal's", []event.Event{&event.GoalStarted{Meta: mt(1, "f1.1", 0), Goal: id}}, false, "", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewGoal()
			g.SetClock(clockAt(100))
			for _, ev := range tc.events {
				g.Apply(ev)
			}
			if g.Active() != tc.active || g.status != tc.status || g.turn != tc.turn {
				t.Errorf("active=%v status=%q turn=%d, want %v %q %d", g.Active(), g.status, g.turn, tc.active, tc.status, tc.turn)
			}
			out := ansi.Strip(g.View(100))
			if tc.active && !strings.Contains(out, tc.showsInTop) {
				t.Errorf("view lacks %q:\n%s", tc.showsInTop, out)
			}
			if !tc.active && out != "" {
				t.Errorf("an inactive goal shows:\n%s", out)
			}
		})
	}
}

func TestGoalTodoFromEvents(t *testing.T) {
	t.Parallel()
	g := NewGoal()
	g.SetClock(clockAt(5))
	two := []goal.Item{{Content: "one", Status: goal.TodoInProgress}, {Content: "two", Status: goal.TodoPending}}
	steps := []struct {
		ev      event.Event
		changed bool
		want    int
	}{
		// no goal yet: a list is not shown
		{&event.TodoUpdated{Meta: mt(1, "", 0), Items: two}, false, 0},
		{&event.GoalStarted{Meta: mt(2, "", 0), Goal: "g1", Objective: "x"}, true, 0},
		{&event.TodoUpdated{Meta: mt(3, "", 1), Items: two}, true, 2},
		// a subagent's list is not the goal's
		{&event.TodoUpdated{Meta: mt(4, "f1.1", 1), Items: two[:1]}, false, 2},
		// a duplicate (replayed) event is skipped
		{&event.TodoUpdated{Meta: mt(3, "", 1), Items: two[:1]}, false, 2},
		{&event.TodoUpdated{Meta: mt(5, "", 1), Items: []goal.Item{}}, true, 0},
	}
	for i, s := range steps {
		if got := g.Apply(s.ev); got != s.changed {
			t.Errorf("step %d: changed=%v, want %v", i, got, s.changed)
		}
		if len(g.todo) != s.want {
			t.Errorf("step %d: %d items, want %d", i, len(g.todo), s.want)
		}
	}
}

func TestGoalResumedFromRecord(t *testing.T) {
	t.Parallel()
	g := NewGoal()
	g.SetClock(clockAt(5))
	g.Apply(&event.GoalStarted{Meta: mt(1, "", 0), Goal: "g9", Objective: "x", Resumed: true, MaxTimeMS: 60_000})
	out := ansi.Strip(g.View(80))
	if !strings.Contains(out, "?/1m00s") {
		t.Errorf("time used before the resume is not known yet, the view should say so:\n%s", out)
	}
	g.Apply(&event.GoalProgressed{Meta: mt(2, "", 5), Goal: "g9", Turn: 8, ElapsedMS: 30_000, Todo: 4, TodoDone: 3})
	out = ansi.Strip(g.View(80))
	for _, want := range []string{"turn 8", "30s/1m00s", "Todo 3/4 done"} {
		if !strings.Contains(out, want) {
			t.Errorf("view lacks %q:\n%s", want, out)
		}
	}
}

func TestGoalLongTodoWindow(t *testing.T) {
	t.Parallel()
	g := NewGoal()
	g.Apply(&event.GoalStarted{Meta: mt(1, "", 0), Goal: "g1", Objective: "x"})
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := range 30 {
		if i > 0 {
			b.WriteByte(',')
		}
		st := "pending"
		switch {
		case i < 20:
			st = "completed"
		case i == 20:
			st = "in_progress"
		}
		b.WriteString(`{"content":"item ` + itoa(int64(i)) + `","status":"` + st + `"}`)
	}
	b.WriteString(`]}`)
	g.Apply(todoUpdated(mt(2, "", 0), b.String()))
	out := ansi.Strip(g.View(60))
	for _, want := range []string{"[~] item 20", "… 17 above", "… 5 more", "Todo 20/30 done"} {
		if !strings.Contains(out, want) {
			t.Errorf("view lacks %q:\n%s", want, out)
		}
	}
	for i, l := range strings.Split(g.View(20), "\n") {
		if ansi.StringWidth(l) > 20 {
			t.Errorf("line %d wider than 20: %q", i, ansi.Strip(l))
		}
	}
}
