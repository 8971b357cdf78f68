package actors

import (
	"strings"
	"sync/atomic"
	"testing"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// TestPromptsQueueDuringATurn: prompts sent while a turn runs are queued
// (prompt_queued), then answered in order, each with one turn_done; a
// prompt sent with Reject is refused with prompt_rejected.
func TestPromptsQueueDuringATurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	h.srv.Push(
		providertest.Turn{Text: "answer one", Stall: true, FaultAfterEvents: 2},
		providertest.Turn{Text: "answer two"},
		providertest.Turn{Text: "answer three"},
	)
	h.sess.Run("one")
	h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.TextDelta); return ok })
	h.sess.Run("two")
	h.sess.Run("three")
	h.sess.Submit("refused", true)
	var queued []*event.PromptQueued
	var rejected []*event.PromptRejected
	for len(queued) < 2 || len(rejected) < 1 {
		switch e := h.waitEvent(func(event.Event) bool { return true }).(type) {
		case *event.PromptQueued:
			queued = append(queued, e)
		case *event.PromptRejected:
			rejected = append(rejected, e)
		}
	}
	if queued[0].Prompt != "two" || queued[0].Position != 1 || queued[1].Prompt != "three" || queued[1].Position != 2 {
		t.Fatalf("prompt_queued = %+v %+v", queued[0], queued[1])
	}
	if rejected[0].Prompt != "refused" || !strings.Contains(rejected[0].Reason, "already running") {
		t.Fatalf("prompt_rejected = %+v", rejected[0])
	}
	h.sess.Cancel()
	first, _ := h.wait()
	second, _ := h.wait()
	third, _ := h.wait()
	if first.Status != event.StatusCancelled || second.Text != "answer two" || third.Text != "answer three" {
		t.Fatalf("turns = %+v / %+v / %+v", first, second, third)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 3 || reqs[1].LastUser() != "two" || reqs[2].LastUser() != "three" {
		t.Fatalf("requests: %d, last users %q %q", len(reqs), reqs[1].LastUser(), reqs[2].LastUser())
	}
}

// TestSubagentApprovalReachesParentFrontend: with an interactive parent, a
// subagent's call that needs approval is asked on the parent's stream with
// an id naming the task, and the answer reaches that subagent.
func TestSubagentApprovalReachesParentFrontend(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := delegatingHarness(t, &runs)
	h.sess.Run("delegate")
	// The parent's own task call is a writer: it is asked first, and once
	// approved it reaches the scheduler like an allowed call.
	ev := h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.ApprovalRequested); return ok }).(*event.ApprovalRequested)
	if ev.Tool != "task" || ev.Task != "" || ev.RequestID != "s1/"+ev.CallID {
		t.Fatalf("parent approval request = %+v", ev)
	}
	h.sess.Approve(&agent.ApprovalResponse{RequestID: ev.RequestID, Choice: event.ApproveOnce})
	ev = h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.ApprovalRequested); return ok }).(*event.ApprovalRequested)
	if ev.Task != "f1.1" || ev.RequestID != "s1/f1.1/"+ev.CallID {
		t.Fatalf("approval request = %+v, want task f1.1 and id s1/f1.1/<call>", ev)
	}
	h.sess.Approve(&agent.ApprovalResponse{RequestID: ev.RequestID, Choice: event.ApproveOnce})
	done, evs := h.wait()
	if done.Status != event.StatusOK || runs.Load() != 1 {
		t.Fatalf("done %+v runs %d", done, runs.Load())
	}
	res := eventsOf[*event.ApprovalResolved](evs)
	if len(res) != 1 || res[0].Task != "f1.1" || res[0].Decision != event.ApproveOnce { // the parent's was resolved before
		t.Fatalf("approval_resolved = %+v", res)
	}
}

// TestPostureSwitchDuringSession: switching to yolo lets the next call run
// without asking; deny rules still block.
func TestPostureSwitchDuringSession(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := newHarness(t, harnessOpts{tools: []tool.Tool{shell(&runs)},
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, []string{"Bash(rm:*)"}), Interactive: true}})
	must(t, h.sess.SetPosture("yolo"))
	if err := h.sess.SetPosture("reckless"); err == nil {
		t.Fatal("a bad posture was accepted")
	}
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"make"}`), call("bash", `{"command":"rm x"}`)}},
		providertest.Turn{Text: "ok"},
	)
	done, evs := h.turn("go")
	if done.Status != event.StatusOK || runs.Load() != 1 || len(eventsOf[*event.ApprovalRequested](evs)) != 0 {
		t.Fatalf("done %+v runs %d approvals %d", done, runs.Load(), len(eventsOf[*event.ApprovalRequested](evs)))
	}
	if pc := eventsOf[*event.PostureChanged](evs); len(pc) != 1 || pc[0].Posture != "yolo" {
		t.Errorf("posture_changed = %+v", pc)
	}
	if got := toolMessages(h.srv.Requests()[1])[1].Content; !strings.HasPrefix(got, "Blocked:") {
		t.Errorf("denied call = %q", got)
	}
}

// TestEffortSwitchDuringSession: set_effort changes the reasoning effort
// of the next request, is published, and shows in the snapshot.
func TestEffortSwitchDuringSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	h.srv.Push(providertest.Turn{Text: "one"}, providertest.Turn{Text: "two"})
	h.turn("before")
	must(t, h.sess.Do(&event.SetEffortCmd{Effort: "max"}))
	done, evs := h.turn("after")
	if done.Status != event.StatusOK {
		t.Fatalf("turn %+v", done)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 2 || reqs[0].ReasoningEffort != "" || reqs[1].ReasoningEffort != "max" {
		t.Fatalf("reasoning_effort of the requests: %q, %q", reqs[0].ReasoningEffort, reqs[1].ReasoningEffort)
	}
	if ec := eventsOf[*event.EffortChanged](evs); len(ec) != 1 || ec[0].Effort != "max" {
		t.Errorf("effort_changed = %+v", ec)
	}
	v := event.NewView(h.id)
	for _, ev := range evs {
		v.Apply(ev)
	}
	if got := v.Snapshot().Effort; got != "max" {
		t.Errorf("snapshot effort %q", got)
	}
}

// delegatingHarness is an interactive session whose model hands one
// writer task to a subagent; the subagent runs bash (counted in runs),
// which asks, and then reports the result it read.
func delegatingHarness(t *testing.T, runs *atomic.Int32) *harness {
	t.Helper()
	perms := agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true}
	return newHarness(t, harnessOpts{perms: perms, fleet: &fleet.FleetSpec{MaxRunning: 2, Root: "/ws"}, subTools: []tool.Tool{shell(runs)},
		subPerms: &perms,
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				if len(toolMessages(req)) == 0 {
					return providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"make"}`)}}
				}
				return providertest.Turn{Text: "sub saw: " + toolMessages(req)[0].Content}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{call("task", `{"prompt":"build it","write_paths":["."]}`)}}
			}
			return providertest.Turn{Text: "parent done"}
		})}})
}
