package actors

import (
	"strings"
	"testing"

	"reasonix/actors/event"
	"reasonix/core/provider/providertest"
)

// TestCoordinatorCancelWhilePlanning: a cancel while the planner streams
// ends the turn as cancelled and the executor is never asked.
func TestCoordinatorCancelWhilePlanning(t *testing.T) {
	h := newHarness(t, harnessOpts{planRounds: 2})
	h.srv.Push(providertest.Turn{Text: "a plan that never ends", Latency: -1})
	h.sess.Run("do it")
	h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.TurnStarted); return ok })
	if _, err := h.srv.WaitRequests(1, 10e9); err != nil {
		t.Fatal(err)
	}
	h.sess.Cancel()
	done, _ := h.wait()
	if done.Status != event.StatusCancelled {
		t.Fatalf("turn %+v", done)
	}
	for _, r := range h.srv.Requests() {
		if r.Model != "plan-model" {
			t.Fatalf("the executor was asked: %+v", r.Messages)
		}
	}
	// The session goes on: the next turn plans and executes.
	h.srv.Push(providertest.Turn{Text: "1. answer"}, providertest.Turn{Text: "answered"})
	if done, _ := h.turn("again"); done.Status != event.StatusOK || done.Text != "answered" {
		t.Fatalf("next turn %+v", done)
	}
}

// TestCoordinatorRepairsACrash: a panic in the coordinator's handler of
// the planner's answer fails that turn with the reason, and the session
// takes the next turn.
func TestCoordinatorRepairsACrash(t *testing.T) {
	fired := InjectPanic(t, "coordinator", "*agent.TurnFinished", false)
	h := newHarness(t, harnessOpts{planRounds: 1})
	h.srv.Push(providertest.Turn{Text: "1. plan"})
	done, _ := h.turn("crash me")
	if !fired.Load() || done.Status != event.StatusFailed || !strings.Contains(done.Error, "injected fault") {
		t.Fatalf("fired %v, turn %+v", fired.Load(), done)
	}
	h.srv.Push(providertest.Turn{Text: "1. plan"}, providertest.Turn{Text: "ok now"})
	if done, _ := h.turn("again"); done.Status != event.StatusOK || done.Text != "ok now" {
		t.Fatalf("next turn %+v", done)
	}
}

// TestCoordinatorSumsUsage: the turn's usage is both roles' together and
// usage events carry the role.
func TestCoordinatorSumsUsage(t *testing.T) {
	h := newHarness(t, harnessOpts{planRounds: 1})
	h.srv.Push(providertest.Turn{Text: "1. plan", Usage: &providertest.Usage{PromptTokens: 100, CompletionTokens: 10}},
		providertest.Turn{Text: "done", Usage: &providertest.Usage{PromptTokens: 200, CompletionTokens: 20}})
	done, evs := h.turn("go")
	if done.Usage.PromptTokens != 300 || done.Usage.CompletionTokens != 30 {
		t.Fatalf("usage %+v", done.Usage)
	}
	roles := map[string]int{}
	for _, u := range eventsOf[*event.UsageReported](evs) {
		roles[u.Role] += u.Usage.PromptTokens
	}
	if roles[event.RolePlanner] != 100 || roles[event.RoleExecutor] != 200 {
		t.Fatalf("usage by role %v", roles)
	}
}
