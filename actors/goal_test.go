package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/core/goal"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// goalScript answers a goal's turns: at each turn's user message it makes
// the calls turn(n) returns (n counts the goal turns from 1), and after the
// tool results it answers with text, calling answered (when set) first.
type goalScript struct {
	mu       sync.Mutex
	turn     func(n int) []providertest.ToolCall
	answered func()
}

func (s *goalScript) respond(r providertest.Request) providertest.Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := r.Messages[len(r.Messages)-1]
	if last.Role != "user" {
		if s.answered != nil {
			s.answered()
		}
		return providertest.Turn{Text: "turn done"}
	}
	n := 0
	for _, m := range r.Messages {
		if m.Role == "user" && strings.HasPrefix(m.Content, "[Active goal") {
			n++
		}
	}
	if !strings.HasPrefix(last.Content, "[Active goal") {
		return providertest.Turn{Text: "plain answer"}
	}
	return providertest.Turn{ToolCalls: s.turn(n)}
}

func goalCall(status, summary, reason string) providertest.ToolCall {
	return call(goal.ToolGoal, fmt.Sprintf(`{"status":%q,"summary":%q,"reason":%q}`, status, summary, reason))
}

// newGoalHarness is a harness whose session has goals, journalled in dir.
func newGoalHarness(t *testing.T, spec GoalSpec, s *goalScript, tools ...tool.Tool) *harness {
	t.Helper()
	srv := providertest.Start(t, providertest.WithResponder(s.respond))
	p := fakeProvider(t, srv)
	reg, err := tool.NewRegistry(tools...)
	must(t, err)
	sys := kernel.NewSystem(nil)
	bus := event.NewBus()
	h := &harness{t: t, srv: srv, sys: sys, bus: bus, sub: bus.Subscribe(), id: "s1", reg: reg}
	h.sess, err = StartSession(sys, SessionSpec{Agent: agent.AgentSpec{
		Session: h.id, Provider: p, Model: "fake-model", Tools: reg, System: "sys", ToolTimeout: 10 * time.Second, Bus: bus,
	}, Goal: &spec})
	must(t, err)
	t.Cleanup(h.close)
	return h
}

func goalEnd(t *testing.T, evs []event.Event) *event.GoalEnded {
	t.Helper()
	ends := eventsOf[*event.GoalEnded](evs)
	if len(ends) != 1 {
		t.Fatalf("%d goal_ended events", len(ends))
	}
	return ends[0]
}

// TestGoalRunsUntilComplete: the controller keeps issuing turns, each with
// the goal block in the user message and never in the system message,
// until the model reports complete; the record is journalled complete.
func TestGoalRunsUntilComplete(t *testing.T) {
	dir := t.TempDir()
	s := &goalScript{turn: func(n int) []providertest.ToolCall {
		if n == 5 {
			return []providertest.ToolCall{goalCall("complete", "all five done", "")}
		}
		return []providertest.ToolCall{goalCall("in_progress", fmt.Sprintf("step %d", n), "")}
	}}
	h := newGoalHarness(t, GoalSpec{Dir: dir}, s)
	done, evs := h.turn("/goal --simple write five steps")
	if done.Status != event.StatusOK || done.Text != "turn done" {
		t.Fatalf("turn %+v", done)
	}
	end := goalEnd(t, evs)
	if end.Status != goal.StatusComplete || end.Turns != 5 || len(eventsOf[*event.GoalProgressed](evs)) != 4 {
		t.Fatalf("end %+v, progress %d", end, len(eventsOf[*event.GoalProgressed](evs)))
	}
	rec, err := goal.Load(dir, end.Goal)
	must(t, err)
	if rec.Status != goal.StatusComplete || rec.Turns != 5 || rec.Summary != "all five done" {
		t.Fatalf("record %+v", rec)
	}
	reqs := h.srv.Requests()
	for _, r := range reqs {
		for _, m := range r.Messages {
			if m.Role == "system" && strings.Contains(m.Content, "Active goal") {
				t.Fatal("the goal block reached a system message")
			}
		}
	}
	if last := reqs[len(reqs)-1]; !strings.Contains(last.LastUser(), "write five steps") || !strings.Contains(last.LastUser(), goal.Continue) {
		t.Fatalf("last user message %q", last.LastUser())
	}
	// After the goal the session takes ordinary turns as they are.
	if done, _ := h.turn("hello"); done.Status != event.StatusOK || done.Text != "plain answer" {
		t.Fatalf("ordinary turn %+v", done)
	}
}

// TestGoalBlockedThreeTimes: the same blocker worded with different case,
// spacing and punctuation ends the goal at its third report.
func TestGoalBlockedThreeTimes(t *testing.T) {
	reasons := []string{"Need the API key.", "need the  API key", "NEED THE API KEY!!"}
	s := &goalScript{turn: func(n int) []providertest.ToolCall {
		return []providertest.ToolCall{goalCall("blocked", "waiting", reasons[(n-1)%3])}
	}}
	h := newGoalHarness(t, GoalSpec{}, s)
	done, evs := h.turn("/goal deploy it")
	if done.Status != event.StatusBlocked || !strings.Contains(done.Error, "blocked 3 times") {
		t.Fatalf("turn %+v", done)
	}
	if end := goalEnd(t, evs); end.Status != goal.StatusBlocked || end.Turns != 3 {
		t.Fatalf("end %+v", end)
	}
}

// TestGoalTurnLimit: the turn budget ends the goal with a summary.
func TestGoalTurnLimit(t *testing.T) {
	s := &goalScript{turn: func(n int) []providertest.ToolCall {
		return []providertest.ToolCall{goalCall("in_progress", fmt.Sprintf("did %d", n), "")}
	}}
	h := newGoalHarness(t, GoalSpec{Limits: goal.Limits{MaxTurns: 4}}, s)
	done, evs := h.turn("/goal never ends")
	if done.Status != event.StatusLimit || !strings.Contains(done.Error, "turn limit") || !strings.Contains(done.Error, "did 4") {
		t.Fatalf("turn %+v", done)
	}
	if end := goalEnd(t, evs); end.Status != goal.StatusLimit || end.Turns != 4 {
		t.Fatalf("end %+v", end)
	}
}

// TestGoalLease: a round that only repeats an earlier call makes no
// progress; the eighth such round brings one reassessment nudge, the
// sixteenth pauses the goal.
func TestGoalLease(t *testing.T) {
	look := &funcTool{name: "look", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return "same", nil }}
	s := &goalScript{turn: func(n int) []providertest.ToolCall {
		return []providertest.ToolCall{call("look", `{"at":"x"}`), goalCall("in_progress", "looking", "")}
	}}
	h := newGoalHarness(t, GoalSpec{}, s, look)
	done, evs := h.turn("/goal --simple look around")
	if done.Status != event.StatusBlocked || !strings.Contains(done.Error, "no progress") {
		t.Fatalf("turn %+v", done)
	}
	end := goalEnd(t, evs)
	if end.Status != goal.StatusPaused || end.Turns != 1+goal.PauseAfter {
		t.Fatalf("end %+v", end)
	}
	nudges := 0
	for _, r := range h.srv.Requests() {
		if r.Messages[len(r.Messages)-1].Role == "user" && strings.Contains(r.LastUser(), goal.Reassess) {
			nudges++
		}
	}
	if nudges != 1 {
		t.Fatalf("%d nudges", nudges)
	}
}

// TestGoalClear: /goal clear drops a goal waiting for the user.
func TestGoalClear(t *testing.T) {
	s := &goalScript{turn: func(n int) []providertest.ToolCall {
		return []providertest.ToolCall{goalCall("in_progress", "x", "")}
	}}
	h := newGoalHarness(t, GoalSpec{Limits: goal.Limits{MaxTurns: 1}}, s)
	if done, _ := h.turn("/goal one turn"); done.Status != event.StatusLimit {
		t.Fatalf("turn %+v", done)
	}
	done, evs := h.turn("/goal clear")
	if done.Status != event.StatusOK || !strings.Contains(done.Text, "cleared") || goalEnd(t, evs).Status != goal.StatusStopped {
		t.Fatalf("clear %+v", done)
	}
	if done, _ := h.turn("/goal resume"); done.Status != event.StatusFailed {
		t.Fatalf("resume after clear %+v", done)
	}
}

// TestGoalRepairsACrash: a panic while handling the child's answer ends
// the goal turn failed, once, and the session goes on.
func TestGoalRepairsACrash(t *testing.T) {
	fired := InjectPanic(t, "goal", "*agent.TurnFinished", false)
	s := &goalScript{turn: func(n int) []providertest.ToolCall {
		return []providertest.ToolCall{goalCall("complete", "x", "")}
	}}
	h := newGoalHarness(t, GoalSpec{}, s)
	done, _ := h.turn("/goal crash me")
	if !fired.Load() || done.Status != event.StatusFailed || !strings.Contains(done.Error, "injected fault") {
		t.Fatalf("fired %v, turn %+v", fired.Load(), done)
	}
	if done, _ := h.turn("hello"); done.Status != event.StatusOK {
		t.Fatalf("next turn %+v", done)
	}
}

// TestGoalRepairsEveryHandler: a panic in the handler of a goal's start,
// of a relayed event or of the child's answer ends the goal's turn once
// (failed, or finished as the goal went on) and the session goes on.
func TestGoalRepairsEveryHandler(t *testing.T) {
	for _, msg := range []string{"*agent.RunTurn", "*goalctl.goalSeen", "*agent.TurnFinished"} {
		for _, after := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/after=%v", msg, after), func(t *testing.T) {
				fired := InjectPanic(t, "goal", msg, after)
				s := &goalScript{turn: func(n int) []providertest.ToolCall {
					if n >= 2 {
						return []providertest.ToolCall{goalCall("complete", "x", "")}
					}
					return []providertest.ToolCall{goalCall("in_progress", "x", "")}
				}}
				h := newGoalHarness(t, GoalSpec{}, s)
				done, _ := h.turn("/goal crash me")
				if !fired.Load() || (done.Status != event.StatusFailed && done.Status != event.StatusOK) {
					t.Fatalf("fired %v, turn %+v", fired.Load(), done)
				}
				if done, _ := h.turn("hello"); done.Status != event.StatusOK {
					t.Fatalf("next turn %+v", done)
				}
			})
		}
	}
}

// TestGoalAnswerContinuesBlockedGoal: a prompt while the goal waits for
// the user continues the goal with the prompt after the goal block, with
// a fresh blocked audit.
func TestGoalAnswerContinuesBlockedGoal(t *testing.T) {
	s := &goalScript{turn: func(n int) []providertest.ToolCall {
		if n > 3 {
			return []providertest.ToolCall{goalCall("complete", "deployed", "")}
		}
		return []providertest.ToolCall{goalCall("blocked", "waiting", "need the token")}
	}}
	h := newGoalHarness(t, GoalSpec{}, s)
	if done, _ := h.turn("/goal deploy"); done.Status != event.StatusBlocked {
		t.Fatalf("turn %+v", done)
	}
	done, evs := h.turn("the token is in ~/.token")
	if done.Status != event.StatusOK || goalEnd(t, evs).Status != goal.StatusComplete || !eventsOf[*event.GoalStarted](evs)[0].Resumed {
		t.Fatalf("turn %+v", done)
	}
	reqs := h.srv.Requests()
	if u := reqs[len(reqs)-2].LastUser(); !strings.HasPrefix(u, "[Active goal") || !strings.HasSuffix(u, "the token is in ~/.token") {
		t.Fatalf("answer turn %q", u)
	}
}

// TestGoalTokenBudget: the token budget ends the goal once the turns'
// total tokens reach it.
func TestGoalTokenBudget(t *testing.T) {
	s := &goalScript{turn: func(n int) []providertest.ToolCall {
		return []providertest.ToolCall{goalCall("in_progress", "x", "")}
	}}
	h := newGoalHarness(t, GoalSpec{Limits: goal.Limits{MaxTokens: 1}}, s)
	done, evs := h.turn("/goal spend")
	if done.Status != event.StatusLimit || !strings.Contains(done.Error, "token budget") || goalEnd(t, evs).Turns != 1 {
		t.Fatalf("turn %+v", done)
	}
}

// TestGoalPublishesTodoList: each list the todo tool sets is published as
// todo_updated while the goal turn runs, so a frontend can show the plan
// before the turn ends.
func TestGoalPublishesTodoList(t *testing.T) {
	s := &goalScript{turn: func(n int) []providertest.ToolCall {
		if n == 1 {
			return []providertest.ToolCall{call(goal.ToolTodo,
				`{"items":[{"content":"read the code","status":"in_progress"},{"content":"fix it","status":"pending"}]}`)}
		}
		return []providertest.ToolCall{goalCall("complete", "fixed", "")}
	}}
	h := newGoalHarness(t, GoalSpec{Dir: t.TempDir()}, s)
	done, evs := h.turn("/goal --simple fix the bug")
	if done.Status != event.StatusOK {
		t.Fatalf("turn %+v", done)
	}
	var lists [][]goal.Item
	for _, u := range eventsOf[*event.TodoUpdated](evs) {
		if u.Session != h.id {
			t.Fatalf("todo_updated of session %q", u.Session)
		}
		lists = append(lists, u.Items)
	}
	// The fresh goal starts with an empty list, then the tool's.
	if len(lists) != 2 || len(lists[0]) != 0 || len(lists[1]) != 2 || lists[1][0].Status != goal.TodoInProgress {
		t.Fatalf("todo lists %+v", lists)
	}
}

// stepClock is a goal clock that moves only when the test moves it.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestGoalTimeBudget: the time budget ends the goal at the round whose
// elapsed time reaches it. Each goal turn takes ten minutes on the
// injected clock, all of them in the turn's last model request, so a
// 30-minute budget is reached exactly as the third turn ends, and only the
// check between turns can see it there.
func TestGoalTimeBudget(t *testing.T) {
	clock := &stepClock{now: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)}
	s := &goalScript{turn: func(n int) []providertest.ToolCall {
		return []providertest.ToolCall{goalCall("in_progress", fmt.Sprintf("did %d", n), "")}
	}, answered: func() { clock.advance(10 * time.Minute) }}
	h := newGoalHarness(t, GoalSpec{Limits: goal.Limits{MaxTime: 30 * time.Minute}, Now: clock.Now}, s)
	done, evs := h.turn("/goal never ends")
	if done.Status != event.StatusLimit || !strings.Contains(done.Error, "time budget reached (30m0s of 30m0s)") || !strings.Contains(done.Error, "did 3") {
		t.Fatalf("turn %+v", done)
	}
	end := goalEnd(t, evs)
	if end.Status != goal.StatusLimit || end.Turns != 3 || end.ElapsedMS != (30*time.Minute).Milliseconds() {
		t.Fatalf("end %+v", end)
	}
	var elapsed []int64
	for _, p := range eventsOf[*event.GoalProgressed](evs) {
		elapsed = append(elapsed, p.ElapsedMS/time.Minute.Milliseconds())
	}
	if fmt.Sprint(elapsed) != "[10 20 30]" {
		t.Errorf("elapsed minutes per round = %v", elapsed)
	}
}
