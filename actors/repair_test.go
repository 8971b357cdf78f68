package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/kernel"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// injectPanic makes the repair middleware panic once, in the handler of
// the first message of type msgType that actor kind receives (before the
// handler runs, or after it returned). It reports whether it fired. Tests
// using it must not run in parallel: the hook is process-wide.
func InjectPanic(t *testing.T, kind, msgType string, after bool) *kernel.Fault {
	t.Helper()
	f, clear := kernel.InjectFault(kind, msgType, after)
	t.Cleanup(clear)
	return f
}

// killActorAt arms a fault that kills an actor of kind for good: its
// handler of the first message hit accepts panics, and so does the repair
// of that panic, so its supervisor stops it. It reports when the repair's
// panic fired. It sets the process-wide hook, so its tests do not run in
// parallel.
func killActorAt(t *testing.T, kind string, hit func(msg any) bool) <-chan struct{} {
	t.Helper()
	var armed, inRepair atomic.Bool
	armed.Store(true)
	killed := make(chan struct{})
	hook := func(k string, msg any, after bool) {
		if k != kind || after {
			return
		}
		if _, repairing := msg.(*kernel.Crashed); repairing {
			if inRepair.CompareAndSwap(true, false) {
				close(killed)
				panic("injected fault in the repair of " + kind)
			}
			return
		}
		if armed.Load() && hit(msg) && armed.CompareAndSwap(true, false) {
			inRepair.Store(true)
			panic(fmt.Sprintf("injected fault in %s at %T", kind, msg))
		}
	}
	kernel.FaultHook.Store(&hook)
	t.Cleanup(func() { kernel.FaultHook.Store(nil) })
	return killed
}

// checkPaired fails the test unless every assistant tool call in the
// request has exactly one tool result before the next assistant message.
func checkPaired(t *testing.T, req providertest.Request) {
	t.Helper()
	open := map[string]bool{}
	for i, m := range req.Messages {
		switch m.Role {
		case "assistant":
			if len(open) > 0 {
				t.Fatalf("message %d: assistant message while calls %v have no result", i, open)
			}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case "tool":
			if !open[m.ToolCallID] {
				t.Fatalf("message %d: result for %q, which is not an open call", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		case "user":
			if len(open) > 0 {
				t.Fatalf("message %d: user message while calls %v have no result", i, open)
			}
		}
	}
	if len(open) > 0 {
		t.Fatalf("calls %v have no result at the end of the request", open)
	}
}

// countTurnDone counts TurnDone events of the main session.
func countTurnDone(evs []event.Event) int {
	n := 0
	for _, e := range evs {
		if td, ok := e.(*event.TurnDone); ok && td.Task == "" {
			n++
		}
	}
	return n
}

// TestPanicAtEveryExecutorHandler injects a panic at each executor and
// session handler a tool-using turn goes through, before and after the
// handler runs. Whatever crashed, the turn ends with exactly one turn_done,
// the next turn works, and its request pairs every tool call with a result.
func TestPanicAtEveryExecutorHandler(t *testing.T) {
	// want is how the turn ends: "failed" (the repair ended it with the
	// crash as reason), "crashed tool" (the runner answered its call with
	// the crash and the model carried on) or "ok" (nothing was lost).
	cases := []struct {
		kind, msg         string
		before, afterWant string
	}{
		{"executor", "*actor.Started", "ok", "ok"},
		{"executor", "*agent.RunTurn", "failed", "failed"},
		{"executor", "*agent.StreamChunk", "failed", "failed"},
		{"executor", "*agent.streamClosed", "failed", "failed"},
		{"executor", "*agent.ToolResult", "failed", "failed"},
		{"session", "*agent.RunTurn", "failed", "ok"},
		{"session", "*agent.TurnFinished", "failed", "ok"},
		{"toolrunner", "*agent.RunTool", "crashed tool", "crashed tool"},
		{"toolrunner", "*agent.toolOutcome", "crashed tool", "ok"},
	}
	for _, tc := range cases {
		for _, after := range []bool{false, true} {
			want := tc.before
			if after {
				want = tc.afterWant
			}
			name := fmt.Sprintf("%s %s after=%v", tc.kind, tc.msg, after)
			t.Run(name, func(t *testing.T) {
				// The hook goes in first: Started arrives while the harness starts.
				fired := InjectPanic(t, tc.kind, tc.msg, after)
				echo := &funcTool{name: "echo", readOnly: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
					if tc.msg == "*agent.streamClosed" {
						// The first stream's close may reach the executor
						// after its done chunk started the tools; the tools
						// wait for it, so it lands mid-turn, as the case
						// means, and not after a turn that already ended.
						select {
						case <-fired.Done:
						case <-ctx.Done():
						}
					}
					return "echoed", nil
				}}
				h := newHarness(t, harnessOpts{tools: []tool.Tool{echo}})
				h.srv.Push(
					providertest.Turn{Reasoning: "plan", ToolCalls: []providertest.ToolCall{call("echo", `{}`), call("echo", `{"n":2}`)}},
					providertest.Turn{Text: "first done"},
				)
				done, evs := h.turn("go")
				select {
				case <-fired.Done:
				case <-time.After(10 * time.Second):
					t.Fatalf("the fault never fired")
				}
				kernel.FaultHook.Store(nil)
				if n := countTurnDone(evs); n != 1 {
					t.Fatalf("%d turn_done events for one turn", n)
				}
				crashedTool := false
				for _, f := range eventsOf[*event.ToolFinished](evs) {
					crashedTool = crashedTool || (f.IsError && strings.Contains(f.Output, "internal error in toolrunner"))
				}
				switch want {
				case "failed":
					if done.Status != event.StatusFailed || !strings.Contains(done.Error, "internal error in "+tc.kind) {
						t.Fatalf("turn = %+v, want failed by the repair", done)
					}
				case "crashed tool":
					if done.Status != event.StatusOK || !crashedTool {
						t.Fatalf("turn = %+v, crashed tool result: %v", done, crashedTool)
					}
				default:
					if done.Status != event.StatusOK {
						t.Fatalf("turn = %+v, want ok", done)
					}
				}
				// The session is usable and its history valid.
				h.srv.Push(providertest.Turn{Text: "second done"}, providertest.Turn{Text: "spare"})
				done2, evs2 := h.turn("again")
				if done2.Status != event.StatusOK {
					t.Fatalf("second turn = %+v", done2)
				}
				if n := countTurnDone(evs2); n != 1 {
					t.Fatalf("%d turn_done events in the second turn: one is late from the first", n)
				}
				reqs := h.srv.Requests()
				checkPaired(t, reqs[len(reqs)-1])
			})
		}
	}
}

// TestRunnerAnswersForToolThatIgnoresContext: a tool that never looks at
// its context neither hangs the turn past its timeout nor survives a
// cancel; the runner answers on its own timer and abandons the goroutine,
// which the System still counts.
func TestRunnerAnswersForToolThatIgnoresContext(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	stuck := &funcTool{name: "stuck", run: func(context.Context, json.RawMessage) (string, error) {
		<-release // ignores its context
		return "too late", nil
	}}
	for _, mode := range []string{"timeout", "cancel"} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, harnessOpts{tools: []tool.Tool{stuck}, timeout: 300 * time.Millisecond, grace: 200 * time.Millisecond})
			h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("stuck", `{}`)}}, providertest.Turn{Text: "moved on"})
			h.sess.Run("go")
			if mode == "cancel" {
				h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.ToolStarted); return ok })
				h.sess.Cancel()
			}
			done, evs := h.wait()
			fin := eventsOf[*event.ToolFinished](evs)
			if len(fin) != 1 || !fin[0].IsError || !strings.Contains(fin[0].Output, "abandoned") {
				t.Fatalf("tool result = %+v", fin)
			}
			want := event.StatusOK
			if mode == "cancel" {
				want = event.StatusCancelled
			}
			if done.Status != want {
				t.Fatalf("turn = %+v, want %s", done, want)
			}
			if h.sys.Abandoned() != 1 {
				t.Errorf("abandoned goroutines = %d, want 1 (still counted)", h.sys.Abandoned())
			}
		})
	}
}

// TestPanicAtEverySchedulerHandler injects a panic at each scheduler
// handler a fleet goes through. Every task still ends exactly once, the
// fleet call gets its result, and the parent turn ends.
func TestPanicAtEverySchedulerHandler(t *testing.T) {
	cases := []string{"*actor.Started", "*fleetmsg.SubmitFleet", "*agent.TurnFinished", "*actor.Terminated", "*fleetmsg.QueryFleet"}
	for _, msg := range cases {
		for _, after := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s after=%v", msg, after), func(t *testing.T) {
				fired := InjectPanic(t, "scheduler", msg, after)
				h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 2, MaxWriters: 1, Root: "/ws", Grace: 500 * time.Millisecond},
					server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
						if isSub(req) {
							return providertest.Turn{Text: "answer to " + req.FirstUser()}
						}
						if len(toolMessages(req)) == 0 {
							return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(4, nil)}}
						}
						return providertest.Turn{Text: "parent done"}
					})}})
				h.sess.Run("fan out")
				if msg == "*fleetmsg.QueryFleet" {
					// A status query whose handler crashed is still answered.
					if _, err := h.sess.FleetStatus(5 * time.Second); err != nil {
						t.Fatalf("fleet status after a crash: %v", err)
					}
				}
				done, evs := h.wait()
				kernel.FaultHook.Store(nil)
				if !fired.Load() && msg != "*fleetmsg.QueryFleet" {
					t.Fatalf("the fault never fired")
				}
				if done.Status != event.StatusOK {
					t.Fatalf("parent turn = %+v", done)
				}
				perTask := map[string]int{}
				for _, d := range eventsOf[*event.TaskDone](evs) {
					perTask[d.Task]++
				}
				for id, n := range perTask {
					if n != 1 {
						t.Errorf("task %s: %d task_done events", id, n)
					}
				}
				var final providertest.Request
				for _, r := range h.srv.Requests() {
					if !isSub(r) {
						final = r
					}
				}
				tm := toolMessages(final)
				if len(tm) != 1 || !strings.HasPrefix(tm[0].Content, "4 tasks: ") {
					t.Fatalf("fleet result = %+v", tm)
				}
				checkPaired(t, final)
			})
		}
	}
}

// TestApprovalTimeoutDenies: an approval nobody answers ends as a deny
// after ApprovalTimeout, with approval_resolved, and the model sees Blocked.
func TestApprovalTimeoutDenies(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := newHarness(t, harnessOpts{tools: []tool.Tool{shell(&runs)}, approvalTimeout: 150 * time.Millisecond,
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true}})
	h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"make"}`)}}, providertest.Turn{Text: "ok"})
	done, evs := h.turn("go")
	if done.Status != event.StatusOK || runs.Load() != 0 {
		t.Fatalf("done %+v runs %d", done, runs.Load())
	}
	res := eventsOf[*event.ApprovalResolved](evs)
	if len(res) != 1 || res[0].Decision != event.ApproveDeny || !strings.Contains(res[0].Reason, "within") {
		t.Fatalf("approval_resolved = %+v", res)
	}
	if got := toolMessages(h.srv.Requests()[1])[0].Content; !strings.Contains(got, "Blocked: nobody approved it within") {
		t.Errorf("result = %q", got)
	}
}

// TestToolRemovedWhileApprovalPending: the registry losing a tool (an MCP
// relist) while a call of it waits for approval does not touch the turn,
// which works on its snapshot: the approved call runs.
func TestToolRemovedWhileApprovalPending(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	sh := shell(&runs)
	h := newHarness(t, harnessOpts{tools: []tool.Tool{sh},
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true}})
	h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"make"}`)}}, providertest.Turn{Text: "ok"})
	h.sess.Run("go")
	ev := h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.ApprovalRequested); return ok }).(*event.ApprovalRequested)
	h.reg.Remove("bash")
	h.sess.Approve(&agent.ApprovalResponse{RequestID: ev.RequestID, Choice: event.ApproveOnce})
	done, _ := h.wait()
	if done.Status != event.StatusOK || runs.Load() != 1 {
		t.Fatalf("done %+v runs %d", done, runs.Load())
	}
}

// TestFleetAnsweredWhenSchedulerDies: a fleet call waiting on a scheduler
// that stops gets a result (every task failed) from the executor's ledger
// instead of waiting forever.
func TestFleetAnsweredWhenSchedulerDies(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 8)
	block := &funcTool{name: "block", readOnly: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	}}
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 2, Root: "/ws"}, subTools: []tool.Tool{block},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{call("block", `{}`)}}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(2, nil)}}
			}
			return providertest.Turn{Text: "parent done"}
		})}})
	h.sess.Run("fan out")
	<-started
	<-started
	h.sys.Root().Stop(actor.NewPID(h.sys.ActorSystem().Address(), h.sess.pid.Id+"/scheduler"))
	done, _ := h.wait()
	if done.Status != event.StatusOK {
		t.Fatalf("parent turn = %+v", done)
	}
	var final providertest.Request
	for _, r := range h.srv.Requests() {
		if !isSub(r) {
			final = r
		}
	}
	// Exactly one answer with both tasks ended and neither ok, whichever
	// comes first: the stopping scheduler's own (its subagents stopped or
	// cancelled before finishing) or the executor's ledger, when the
	// scheduler is gone before it could reply.
	tm := toolMessages(final)
	if len(tm) != 1 || !strings.HasPrefix(tm[0].Content, "2 tasks: 0 ok,") ||
		strings.Count(tm[0].Content, "\n## Task ") != 2 {
		t.Fatalf("fleet result = %+v", tm)
	}
}

// TestPrefixStableAcrossTurnsWithReasoning: two user turns with reasoning
// and tool calls against a model that, like DeepSeek's thinking mode,
// rejects a request that drops an earlier tool call's reasoning. Every
// request is a byte extension of the one before.
func TestPrefixStableAcrossTurnsWithReasoning(t *testing.T) {
	t.Parallel()
	echo := &funcTool{name: "echo", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return "echoed", nil }}
	h := newHarness(t, harnessOpts{tools: []tool.Tool{echo}, server: []providertest.Option{providertest.WithThinkingMode()}})
	h.srv.Push(
		providertest.Turn{Reasoning: "first I echo", ToolCalls: []providertest.ToolCall{call("echo", `{}`)}},
		providertest.Turn{Reasoning: "that worked", Text: "turn one"},
		providertest.Turn{Reasoning: "again", ToolCalls: []providertest.ToolCall{call("echo", `{"x":1}`)}},
		providertest.Turn{Text: "turn two"},
	)
	for _, in := range []string{"one", "two"} {
		if done, _ := h.turn(in); done.Status != event.StatusOK {
			t.Fatalf("turn %s = %+v", in, done)
		}
	}
	reqs := h.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		prev, next := rawMessages(t, reqs[i-1]), rawMessages(t, reqs[i])
		if len(next) <= len(prev) {
			t.Fatalf("request %d has %d messages, request %d has %d", i, len(next), i-1, len(prev))
		}
		for j := range prev {
			if string(prev[j]) != string(next[j]) {
				t.Fatalf("request %d message %d changed:\n%s\n%s", i, j, prev[j], next[j])
			}
		}
	}
}

// rawMessages returns the request's messages as the bytes that were sent.
func rawMessages(t *testing.T, r providertest.Request) []json.RawMessage {
	t.Helper()
	var body struct {
		Messages []json.RawMessage `json:"messages"`
	}
	must(t, json.Unmarshal(r.Body, &body))
	return body.Messages
}

// TestRepairKeepsTheTextOfACrashedStream: an executor whose handler
// panics mid-stream ends the turn failed and keeps, as an assistant
// message of the history, exactly the text the stream had delivered (and
// the user had seen), so the next request carries it.
func TestRepairKeepsTheTextOfACrashedStream(t *testing.T) {
	var armed, fired atomic.Bool
	hook := func(kind string, msg any, after bool) {
		if _, ok := msg.(*agent.StreamChunk); ok && kind == "executor" && !after && armed.Load() && fired.CompareAndSwap(false, true) {
			panic("injected fault mid-stream")
		}
	}
	kernel.FaultHook.Store(&hook)
	t.Cleanup(func() { kernel.FaultHook.Store(nil) })
	h := newHarness(t, harnessOpts{})
	hold := make(chan struct{})
	h.srv.Push(providertest.Turn{Text: "the first part of an answer that the crash cuts short", Hold: hold, FaultAfterEvents: 3},
		providertest.Turn{Text: "second done"})
	h.sess.Run("go")
	var seen strings.Builder
	first := h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.TextDelta); return ok }).(*event.TextDelta)
	seen.WriteString(first.Text)
	// The next chunk the executor handles, held back or not, is the one
	// that crashes.
	armed.Store(true)
	close(hold)
	done, evs := h.wait()
	if !fired.Load() {
		t.Fatal("the fault never fired")
	}
	if done.Status != event.StatusFailed || !strings.Contains(done.Error, "internal error in executor") {
		t.Fatalf("turn = %+v, want failed by the repair", done)
	}
	for _, d := range eventsOf[*event.TextDelta](evs) {
		seen.WriteString(d.Text)
	}
	if seen.Len() == 0 || seen.String() == "the first part of an answer that the crash cuts short" {
		t.Fatalf("text seen before the crash = %q, want a part of the answer", seen.String())
	}
	if done2, _ := h.turn("again"); done2.Status != event.StatusOK {
		t.Fatalf("second turn = %+v", done2)
	}
	reqs := h.srv.Requests()
	msgs := reqs[len(reqs)-1].Messages
	if len(msgs) != 4 || msgs[2].Role != "assistant" || msgs[2].Content != seen.String() {
		t.Fatalf("history after the crash = %+v, want the seen text %q as the assistant message", msgs, seen.String())
	}
}
