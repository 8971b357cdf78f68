package actors

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// observeUntil feeds every event of h's stream to u until one that match
// accepts, and returns the events read.
func observeUntil(t *testing.T, h *harness, u *Unattended, match func(event.Event) bool) []event.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var evs []event.Event
	for {
		e, err := h.sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for event: %v (events so far: %d)", err, len(evs))
		}
		evs = append(evs, e)
		u.Observe(e)
		if match(e) {
			return evs
		}
	}
}

func isTurnDone(e event.Event) bool { td, ok := e.(*event.TurnDone); return ok && td.Task == "" }

// TestUnattendedDeniesPendingApproval: Leave denies the approval waiting
// now with NoFrontendLeft, the model reads that reason, and the turn ends.
func TestUnattendedDeniesPendingApproval(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := newHarness(t, harnessOpts{tools: []tool.Tool{shell(&runs)},
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true}})
	h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"make"}`)}}, providertest.Turn{Text: "ok"})
	u := h.sess.Unattended()
	h.sess.Run("go")
	observeUntil(t, h, u, isApproval)
	u.Leave()
	evs := observeUntil(t, h, u, isTurnDone)
	res := eventsOf[*event.ApprovalResolved](evs)
	if len(res) != 1 || res[0].Decision != event.ApproveDeny || res[0].Reason != NoFrontendLeft || runs.Load() != 0 {
		t.Fatalf("approval_resolved = %+v, runs %d", res, runs.Load())
	}
	if got := toolMessages(h.srv.Requests()[1])[0].Content; !strings.HasPrefix(got, "Blocked: no frontend left") {
		t.Errorf("the model saw %q", got)
	}
}

// TestUnattendedDeniesLaterApprovalsUntilReturn: after Leave a call is
// denied as it is asked; after Return one waits for the frontend again.
func TestUnattendedDeniesLaterApprovalsUntilReturn(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := newHarness(t, harnessOpts{tools: []tool.Tool{shell(&runs)},
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true}})
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"make"}`)}}, providertest.Turn{Text: "denied"},
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"make"}`)}}, providertest.Turn{Text: "ran"},
	)
	u := h.sess.Unattended()
	u.Leave()
	h.sess.Run("one")
	evs := observeUntil(t, h, u, isTurnDone)
	if res := eventsOf[*event.ApprovalResolved](evs); len(res) != 1 || res[0].Reason != NoFrontendLeft || runs.Load() != 0 {
		t.Fatalf("approval_resolved = %+v, runs %d", res, runs.Load())
	}

	u.Return()
	h.sess.Run("two")
	ask := observeUntil(t, h, u, isApproval)
	req := ask[len(ask)-1].(*event.ApprovalRequested)
	h.sess.Approve(&agent.ApprovalResponse{RequestID: req.RequestID, Choice: event.ApproveOnce})
	evs = observeUntil(t, h, u, isTurnDone)
	if res := eventsOf[*event.ApprovalResolved](evs); len(res) != 1 || res[0].Decision != event.ApproveOnce || runs.Load() != 1 {
		t.Fatalf("after Return: approval_resolved = %+v, runs %d", res, runs.Load())
	}
}

// TestUnattendedDeniesSubagentApproval: a subagent's approval, asked on
// the parent's stream, is denied too, and the subagent reads the reason.
func TestUnattendedDeniesSubagentApproval(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := delegatingHarness(t, &runs)
	u := h.sess.Unattended()
	h.sess.Run("delegate")
	evs := observeUntil(t, h, u, isApproval)
	parent := evs[len(evs)-1].(*event.ApprovalRequested)
	h.sess.Approve(&agent.ApprovalResponse{RequestID: parent.RequestID, Choice: event.ApproveOnce})
	observeUntil(t, h, u, func(e event.Event) bool { return isApproval(e) && e.(*event.ApprovalRequested).Task != "" })
	u.Leave()
	evs = observeUntil(t, h, u, isTurnDone)
	var sub []*event.ApprovalResolved
	for _, r := range eventsOf[*event.ApprovalResolved](evs) {
		if r.Task != "" {
			sub = append(sub, r)
		}
	}
	if len(sub) != 1 || sub[0].Decision != event.ApproveDeny || sub[0].Reason != NoFrontendLeft || runs.Load() != 0 {
		t.Fatalf("subagent approval_resolved = %+v, runs %d", sub, runs.Load())
	}
	saw := false
	for _, r := range h.srv.Requests() {
		if isSub(r) && len(toolMessages(r)) > 0 {
			saw = strings.HasPrefix(toolMessages(r)[0].Content, "Blocked: no frontend left")
		}
	}
	if !saw {
		t.Fatal("the subagent never read why its call was blocked")
	}
}
