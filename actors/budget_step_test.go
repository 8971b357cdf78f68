package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/core/goal"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// runawayCap is where the scripted runaways give up by themselves and
// answer, so a guard that does not hold fails its test instead of hanging
// it.
const runawayCap = 40

// newStepHarness is a harness whose session is tuned by tune (its guards,
// permissions) and, with gs, runs goals.
func newStepHarness(t *testing.T, respond func(providertest.Request) providertest.Turn, gs *GoalSpec, tune func(*agent.AgentSpec), tools ...tool.Tool) *harness {
	t.Helper()
	srv := providertest.Start(t, providertest.WithResponder(respond))
	p := fakeProvider(t, srv)
	reg, err := tool.NewRegistry(tools...)
	must(t, err)
	sys := kernel.NewSystem(nil)
	bus := event.NewBus()
	h := &harness{t: t, srv: srv, sys: sys, bus: bus, sub: bus.Subscribe(), id: "s1", reg: reg}
	agent := agent.AgentSpec{Session: h.id, Provider: p, Model: "fake-model", Tools: reg, System: "sys", ToolTimeout: 30 * time.Second, Bus: bus}
	if tune != nil {
		tune(&agent)
	}
	h.sess, err = StartSession(sys, SessionSpec{Agent: agent, Goal: gs})
	must(t, err)
	t.Cleanup(h.close)
	return h
}

// runaway never ends a turn by itself: each request (up to runawayCap)
// asks for one more call made by next, and reports usage of
// tokens tokens.
func runaway(tokens int, next func(n int) providertest.ToolCall) func(providertest.Request) providertest.Turn {
	var n atomic.Int32
	return func(r providertest.Request) providertest.Turn {
		k := int(n.Add(1))
		u := &providertest.Usage{PromptTokens: tokens - tokens/10, CompletionTokens: tokens / 10}
		if k > runawayCap {
			return providertest.Turn{Usage: u, Text: "giving up"}
		}
		return providertest.Turn{Usage: u, ToolCalls: []providertest.ToolCall{next(k)}}
	}
}

func lookTool(out func() string) *funcTool {
	return &funcTool{name: "look", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return out(), nil }}
}

func same() string { return "same" }

func lookAt(n int) providertest.ToolCall { return call("look", fmt.Sprintf(`{"at":%d}`, n)) }

// TestGoalTokenBudgetInsideTurn: a goal turn that never ends by itself is
// stopped before the first request its token budget does not cover: 1,000
// tokens a request, a 5,000-token budget, five requests.
func TestGoalTokenBudgetInsideTurn(t *testing.T) {
	h := newStepHarness(t, runaway(1000, lookAt), &GoalSpec{Limits: goal.Limits{MaxTokens: 5000}}, nil, lookTool(same))
	done, evs := h.turn("/goal --simple look everywhere")
	if done.Status != event.StatusLimit || !strings.Contains(done.Error, "token budget reached (5000 of 5000 tokens)") {
		t.Fatalf("turn %+v", done)
	}
	if n := h.srv.Count(); n != 5 {
		t.Errorf("%d requests, want 5", n)
	}
	if end := goalEnd(t, evs); end.Status != goal.StatusLimit || end.Turns != 1 || end.Tokens != 5000 {
		t.Errorf("end %+v", end)
	}
}

// TestGoalTimeBudgetInsideTurn: each request takes a minute on the goal's
// clock; a five-minute budget lets five requests go and stops the sixth.
func TestGoalTimeBudgetInsideTurn(t *testing.T) {
	clock := &stepClock{now: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)}
	next := func(n int) providertest.ToolCall {
		clock.advance(time.Minute)
		return lookAt(n)
	}
	h := newStepHarness(t, runaway(10, next), &GoalSpec{Limits: goal.Limits{MaxTime: 5 * time.Minute}, Now: clock.Now}, nil, lookTool(same))
	done, evs := h.turn("/goal --simple look everywhere")
	if done.Status != event.StatusLimit || !strings.Contains(done.Error, "time budget reached (5m0s of 5m0s)") {
		t.Fatalf("turn %+v", done)
	}
	if n := h.srv.Count(); n != 5 {
		t.Errorf("%d requests, want 5", n)
	}
	if end := goalEnd(t, evs); end.Status != goal.StatusLimit || end.Turns != 1 {
		t.Errorf("end %+v", end)
	}
}

// TestGoalTimeUpStopsSlowTool: a call that would run far past the goal's
// time is cancelled when the time is up; the goal ends on its budget, not
// as interrupted.
func TestGoalTimeUpStopsSlowTool(t *testing.T) {
	cancelled := make(chan struct{})
	hang := &funcTool{name: "hang", readOnly: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		close(cancelled)
		return "", ctx.Err()
	}}
	respond := func(r providertest.Request) providertest.Turn {
		if r.Last().Role == "user" {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{call("hang", `{}`)}}
		}
		return providertest.Turn{Text: "done"}
	}
	h := newStepHarness(t, respond, &GoalSpec{Limits: goal.Limits{MaxTime: 300 * time.Millisecond}}, nil, hang)
	start := time.Now()
	done, evs := h.turn("/goal --simple wait for it")
	took := time.Since(start)
	if done.Status != event.StatusLimit || !strings.Contains(done.Error, "time budget reached") {
		t.Fatalf("turn %+v", done)
	}
	select {
	case <-cancelled:
	default:
		t.Error("the slow call was not cancelled")
	}
	// The tool would hang until its 30-second timeout.
	if took > 10*time.Second {
		t.Errorf("the goal took %s to stop", took)
	}
	if end := goalEnd(t, evs); end.Status != goal.StatusLimit {
		t.Errorf("end %+v", end)
	}
}

// TestGoalLeaseCountsToolRounds: the lease counts tool-call rounds, not
// goal turns: a turn that repeats one read ends at the eighth round
// without progress, the next turn carries the nudge, and the sixteenth
// round pauses the goal, 17 requests in two turns.
func TestGoalLeaseCountsToolRounds(t *testing.T) {
	h := newStepHarness(t, runaway(10, func(int) providertest.ToolCall { return call("look", `{"at":"x"}`) }),
		&GoalSpec{}, nil, lookTool(same))
	done, evs := h.turn("/goal --simple look around")
	if done.Status != event.StatusBlocked || !strings.Contains(done.Error, "no progress for 16 tool rounds") {
		t.Fatalf("turn %+v", done)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 17 {
		t.Errorf("%d requests, want 17", len(reqs))
	}
	nudges := 0
	for _, r := range reqs {
		if r.Last().Role == "user" && strings.Contains(r.LastUser(), goal.Reassess) {
			nudges++
		}
	}
	if nudges != 1 {
		t.Errorf("%d nudges", nudges)
	}
	if end := goalEnd(t, evs); end.Status != goal.StatusPaused || end.Turns != 2 {
		t.Errorf("end %+v", end)
	}
	if p := eventsOf[*event.GoalProgressed](evs); len(p) != 2 || !p[0].Nudged || p[1].NoProgress != goal.PauseAfter {
		t.Errorf("progress %+v", p)
	}
}

// TestGoalLoopPauses: a goal whose model is stuck on one call pauses for
// the user, its record kept for a resume.
func TestGoalLoopPauses(t *testing.T) {
	dir := t.TempDir()
	h := newStepHarness(t, runaway(10, func(int) providertest.ToolCall { return call("look", `{"at":"x"}`) }),
		&GoalSpec{Dir: dir}, func(a *agent.AgentSpec) { a.LoopRepeats = agent.LoopRepeats }, lookTool(same))
	done, evs := h.turn("/goal --simple look around")
	if done.Status != event.StatusBlocked || !strings.Contains(done.Error, "same look call 3 times") {
		t.Fatalf("turn %+v", done)
	}
	end := goalEnd(t, evs)
	rec, err := goal.Load(dir, end.Goal)
	must(t, err)
	if rec.Status != goal.StatusPaused || !rec.Unfinished() || h.srv.Count() != 3 {
		t.Errorf("record %+v after %d requests", rec, h.srv.Count())
	}
}

// TestLoopGuard: the same call with the same result three times in a row
// ends a headless turn on the third; arguments are compared canonically,
// and a call whose result changes is no loop.
func TestLoopGuard(t *testing.T) {
	args := []string{`{"a":1,"b":[1,2]}`, `{ "b": [1, 2], "a": 1 }`, `{"b":[1,2],"a":1}`}
	tests := []struct {
		name     string
		out      func() string
		status   string
		requests int
	}{
		{name: "same result", out: same, status: agent.StatusLoop, requests: 3},
		{name: "changing result", out: counter(), status: event.StatusOK, requests: runawayCap + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := func(n int) providertest.ToolCall { return call("look", args[n%len(args)]) }
			h := newStepHarness(t, runaway(10, next), nil, func(a *agent.AgentSpec) { a.LoopRepeats = agent.LoopRepeats }, lookTool(tt.out))
			done, evs := h.turn("look")
			if done.Status != tt.status || h.srv.Count() != tt.requests {
				t.Fatalf("turn %+v after %d requests", done, h.srv.Count())
			}
			if tt.status != agent.StatusLoop {
				return
			}
			if !strings.Contains(done.Error, "same look call 3 times in a row") || done.Steps != 3 {
				t.Errorf("turn %+v", done)
			}
			if errs := eventsOf[*event.ErrorOccurred](evs); len(errs) != 1 || errs[0].Message != done.Error {
				t.Errorf("errors %+v", errs)
			}
		})
	}
}

func counter() func() string {
	var n atomic.Int32
	return func() string { return fmt.Sprint(n.Add(1)) }
}

// TestStepGuard: agent.max_steps ends a headless turn at that many steps
// with status max_steps and the key named.
func TestStepGuard(t *testing.T) {
	h := newStepHarness(t, runaway(10, lookAt), nil, func(a *agent.AgentSpec) { a.GuardSteps = 4 }, lookTool(counter()))
	done, _ := h.turn("look")
	if done.Status != event.StatusMaxSteps || !strings.Contains(done.Error, "agent.max_steps = 4") || h.srv.Count() != 4 {
		t.Fatalf("turn %+v after %d requests", done, h.srv.Count())
	}
}

// TestGuardsAskInteractive: where someone answers, a guard asks whether
// the turn goes on (once only); yes gives it as many steps again (or
// clears the loop), no ends it with the guard's status.
func TestGuardsAskInteractive(t *testing.T) {
	tests := []struct {
		name   string
		tune   func(*agent.AgentSpec)
		next   func(int) providertest.ToolCall
		out    func() string
		tool   string
		status string
		// asked are the questions' ids; requests how many went before the
		// second answer (a no) ended the turn.
		asked    []string
		requests int
	}{
		{name: "steps", tune: func(a *agent.AgentSpec) { a.GuardSteps = 2 }, next: lookAt, out: counter(),
			tool: agent.ToolContinueTurn, status: event.StatusMaxSteps, asked: []string{"s1/guard-1", "s1/guard-2"}, requests: 4},
		{name: "loop", tune: func(a *agent.AgentSpec) { a.LoopRepeats = agent.LoopRepeats },
			next: func(int) providertest.ToolCall { return call("look", `{"at":"x"}`) }, out: same,
			tool: "look", status: agent.StatusLoop, asked: []string{"s1/guard-1", "s1/guard-2"}, requests: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newStepHarness(t, runaway(10, tt.next), nil, func(a *agent.AgentSpec) {
				a.Permissions.Interactive = true
				tt.tune(a)
			}, lookTool(tt.out))
			h.sess.Run("look")
			for i, id := range tt.asked {
				ev := h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.ApprovalRequested); return ok })
				a := ev.(*event.ApprovalRequested)
				if a.RequestID != id || !a.OnceOnly || a.Tool != tt.tool || a.Reason == "" {
					t.Fatalf("question %d: %+v", i+1, a)
				}
				choice := event.ApproveOnce
				if i == len(tt.asked)-1 {
					choice = event.ApproveDeny
				}
				h.sess.Approve(&agent.ApprovalResponse{RequestID: a.RequestID, Choice: choice})
			}
			done, evs := h.wait()
			if done.Status != tt.status || !strings.Contains(done.Error, "the user chose to stop") || h.srv.Count() != tt.requests {
				t.Fatalf("turn %+v after %d requests", done, h.srv.Count())
			}
			if r := eventsOf[*event.ApprovalResolved](evs); len(r) == 0 || r[len(r)-1].Decision != event.ApproveDeny {
				t.Errorf("resolved %+v", r)
			}
		})
	}
}

// TestGuardQuestionEnds: a go-on question nobody answers in time, or one
// the user cancels the turn over, ends the turn and is resolved.
func TestGuardQuestionEnds(t *testing.T) {
	tests := []struct {
		name   string
		cancel bool
		status string
		reason string
	}{
		{name: "timeout", status: event.StatusMaxSteps, reason: "nobody approved it within"},
		{name: "cancel", cancel: true, status: event.StatusCancelled, reason: "cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newStepHarness(t, runaway(10, lookAt), nil, func(a *agent.AgentSpec) {
				a.Permissions.Interactive, a.GuardSteps = true, 1
				if !tt.cancel {
					a.ApprovalTimeout = 200 * time.Millisecond
				}
			}, lookTool(counter()))
			h.sess.Run("look")
			h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.ApprovalRequested); return ok })
			if tt.cancel {
				h.sess.Cancel()
			}
			done, evs := h.wait()
			if done.Status != tt.status || h.srv.Count() != 1 {
				t.Fatalf("turn %+v after %d requests", done, h.srv.Count())
			}
			r := eventsOf[*event.ApprovalResolved](evs)
			if len(r) != 1 || r[0].Decision != event.ApproveDeny || !strings.Contains(r[0].Reason, tt.reason) {
				t.Errorf("resolved %+v", r)
			}
		})
	}
}

// TestGoalRepairsTimeUp: a time-up whose handler panics, before or after
// it ran, still stops the slow call and ends the goal on its budget; the
// session takes the next turn.
func TestGoalRepairsTimeUp(t *testing.T) {
	for _, after := range []bool{false, true} {
		t.Run(fmt.Sprintf("after=%v", after), func(t *testing.T) {
			fired := InjectPanic(t, "goal", "*goalctl.goalTimeUp", after)
			hang := &funcTool{name: "hang", readOnly: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			}}
			respond := func(r providertest.Request) providertest.Turn {
				if strings.HasPrefix(r.LastUser(), "[Active goal") && r.Last().Role == "user" {
					return providertest.Turn{ToolCalls: []providertest.ToolCall{call("hang", `{}`)}}
				}
				return providertest.Turn{Text: "done"}
			}
			h := newStepHarness(t, respond, &GoalSpec{Limits: goal.Limits{MaxTime: 200 * time.Millisecond}}, nil, hang)
			start := time.Now()
			done, _ := h.turn("/goal --simple wait for it")
			if !fired.Load() || done.Status != event.StatusLimit || time.Since(start) > 10*time.Second {
				t.Fatalf("fired %v, turn %+v after %s", fired.Load(), done, time.Since(start))
			}
			if done, _ := h.turn("hello"); done.Status != event.StatusOK {
				t.Fatalf("next turn %+v", done)
			}
		})
	}
}
