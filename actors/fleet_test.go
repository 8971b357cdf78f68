package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// isSub tells a subagent's request from the parent's by its system prompt.
func isSub(req providertest.Request) bool {
	return len(req.Messages) > 0 && req.Messages[0].Content == "sub"
}

// fleetCall builds a fleet tool call with n tasks "task <i>".
func fleetCall(n int, extra func(i int) string) providertest.ToolCall {
	var tasks []string
	for i := 1; i <= n; i++ {
		x := ""
		if extra != nil {
			x = extra(i)
		}
		tasks = append(tasks, fmt.Sprintf(`{"prompt":"task %d"%s}`, i, x))
	}
	return call("fleet", `{"tasks":[`+strings.Join(tasks, ",")+`]}`)
}

func TestFleetRunsEveryTaskAndKeepsOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 3, MaxWriters: 2, Root: "/ws"},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				// Each task takes a while, so the fleet call has a duration.
				return providertest.Turn{Text: "answer to " + req.FirstUser(), Latency: 5 * time.Millisecond}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(8, nil)}}
			}
			return providertest.Turn{Text: "parent done"}
		})}})
	done, evs := h.turn("fan out")
	if done.Status != event.StatusOK || done.Text != "parent done" {
		t.Fatalf("done = %+v", done)
	}
	// The fleet call's card reports how long the fleet took: at least the
	// three waves of 5 ms tasks it waited for.
	if fin := eventsOf[*event.ToolFinished](evs); len(fin) != 1 || fin[0].Tool != team.ToolFleet || fin[0].DurationMS < 15 {
		t.Errorf("fleet tool_finished = %+v", fin)
	}
	var parentFinal providertest.Request
	for _, r := range h.srv.Requests() {
		if !isSub(r) {
			parentFinal = r
		}
	}
	res := toolMessages(parentFinal)[0].Content
	if !strings.HasPrefix(res, "8 tasks: 8 ok, 0 failed") {
		t.Errorf("fleet result: %s", res)
	}
	last := -1
	for i := 1; i <= 8; i++ {
		at := strings.Index(res, fmt.Sprintf("answer to task %d\n", i))
		if i == 8 {
			at = strings.Index(res, "answer to task 8")
		}
		if at < last {
			t.Fatalf("task %d out of order in:\n%s", i, res)
		}
		last = at
	}
	if n := len(eventsOf[*event.TaskDone](evs)); n != 8 {
		t.Errorf("%d task_done events", n)
	}
	for _, d := range eventsOf[*event.TaskDone](evs) {
		if d.Task == "" || d.Status != event.TaskOK {
			t.Errorf("task event %+v", d)
		}
	}
}

func TestFleetCrashIsolation(t *testing.T) {
	t.Parallel()
	boom := &funcTool{name: "boom", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { panic("subagent tool exploded") }}
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 64, MaxWriters: 2, Root: "/ws"}, subTools: []tool.Tool{boom},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				switch req.FirstUser() {
				case "task 3":
					if len(toolMessages(req)) == 0 {
						return providertest.Turn{ToolCalls: []providertest.ToolCall{call("boom", `{}`)}}
					}
					return providertest.Turn{Text: "should not get here"}
				case "task 5":
					return providertest.Turn{Text: "cut short in the middle", CutAfterEvents: 2}
				}
				return providertest.Turn{Text: "fine " + req.FirstUser()}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(64, nil)}}
			}
			return providertest.Turn{Text: "parent carries on"}
		})}})
	done, _ := h.turn("go")
	if done.Status != event.StatusOK || done.Text != "parent carries on" {
		t.Fatalf("done = %+v", done)
	}
	var final providertest.Request
	for _, r := range h.srv.Requests() {
		if !isSub(r) {
			final = r
		}
	}
	res := toolMessages(final)[0].Content
	for _, want := range []string{"64 tasks: 62 ok, 2 failed", "(f1.3): failed", "crashed: subagent tool exploded", "(f1.5): failed"} {
		if !strings.Contains(res, want) {
			t.Errorf("fleet result lacks %q:\n%s", want, res)
		}
	}
}

func TestFleetCapsAndCancel(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	arrived := 0
	arrivedCh := make(chan struct{}, 16)
	hold := &funcTool{name: "hold", readOnly: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		mu.Lock()
		arrived++
		mu.Unlock()
		arrivedCh <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	}}
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 2, MaxWriters: 1, Root: "/ws"}, subTools: []tool.Tool{hold},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{call("hold", `{}`)}}
			}
			return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(6, nil)}}
		})}})
	h.sess.Run("go")
	for i := 0; i < 2; i++ {
		select {
		case <-arrivedCh:
		case <-time.After(20 * time.Second):
			t.Fatal("subagents never started")
		}
	}
	st := h.fleetStatus(t)
	if st.Running != 2 || st.Queued != 4 {
		t.Errorf("status with cap 2: %+v", st)
	}
	h.sess.Cancel()
	done, evs := h.wait()
	if done.Status != event.StatusCancelled {
		t.Fatalf("done = %+v", done)
	}
	counts := map[string]int{}
	for _, d := range eventsOf[*event.TaskDone](evs) {
		counts[d.Status]++
	}
	if counts[event.TaskCancelled] != 6 {
		t.Errorf("task outcomes after cancel: %v", counts)
	}
	mu.Lock()
	defer mu.Unlock()
	if arrived != 2 {
		t.Errorf("%d subagents ran with a cap of 2 before the cancel", arrived)
	}
}

func TestTaskTimeoutReapsHungSubagent(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	// This tool ignores cancellation, so only the reaper can end the task.
	stuck := &funcTool{name: "stuck", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) {
		<-release
		return "", nil
	}}
	h := newHarness(t, harnessOpts{
		fleet:    &fleet.FleetSpec{MaxRunning: 2, MaxWriters: 1, Root: "/ws", TaskTimeout: 300 * time.Millisecond, Grace: 200 * time.Millisecond},
		subTools: []tool.Tool{stuck},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				if req.FirstUser() == "task 1" {
					return providertest.Turn{ToolCalls: []providertest.ToolCall{call("stuck", `{}`)}}
				}
				return providertest.Turn{Text: "quick"}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(2, nil)}}
			}
			return providertest.Turn{Text: "parent done"}
		})}})
	// Registered after the harness, so it runs before the harness's
	// shutdown waits for the stuck tool goroutine.
	t.Cleanup(func() { close(release) })
	done, evs := h.turn("go")
	if done.Status != event.StatusOK {
		t.Fatalf("done = %+v", done)
	}
	got := map[string]string{}
	for _, d := range eventsOf[*event.TaskDone](evs) {
		got[d.Task] = d.Status
	}
	if got["f1.1"] != event.TaskTimedOut || got["f1.2"] != event.TaskOK {
		t.Errorf("outcomes = %v", got)
	}
}

func TestDelegationArgumentErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{Root: "/ws"}})
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{
			call("fleet", `{"tasks":[{"prompt":"only one"}]}`),
			call("task", `{"prompt":"x","write_paths":["../outside"]}`),
		}},
		providertest.Turn{Text: "ok"},
	)
	done, _ := h.turn("go")
	if done.Status != event.StatusOK {
		t.Fatalf("done = %+v", done)
	}
	tm := toolMessages(h.srv.Requests()[1])
	if !strings.Contains(tm[0].Content, "needs 2 to 64 tasks") {
		t.Errorf("fleet of one: %q", tm[0].Content)
	}
	if !strings.Contains(tm[1].Content, "not scheduled") {
		t.Errorf("escaping write path: %q", tm[1].Content)
	}
}

func (h *harness) fleetStatus(t *testing.T) *fleetmsg.FleetStatus {
	t.Helper()
	st, err := h.sess.FleetStatus(5 * time.Second)
	must(t, err)
	return st
}

func TestCancelOneTaskLeavesSiblingsRunning(t *testing.T) {
	t.Parallel()
	started := make(chan string, 4)
	release := make(chan struct{})
	gate := &funcTool{name: "gate", readOnly: true, run: func(ctx context.Context, args json.RawMessage) (string, error) {
		started <- string(args)
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}}
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 3, MaxWriters: 1, Root: "/ws"}, subTools: []tool.Tool{gate},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				if len(toolMessages(req)) == 0 {
					return providertest.Turn{ToolCalls: []providertest.ToolCall{call("gate", `{"t":"`+req.FirstUser()+`"}`)}}
				}
				return providertest.Turn{Text: "finished " + req.FirstUser()}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(3, nil)}}
			}
			return providertest.Turn{Text: "parent done"}
		})}})
	h.sess.Run("go")
	for i := 0; i < 3; i++ {
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatal("subagents never reached the gate")
		}
	}
	h.sess.CancelTask("f1.2")
	h.waitEvent(func(e event.Event) bool {
		d, ok := e.(*event.TaskDone)
		return ok && d.Task == "f1.2" && d.Status == event.TaskCancelled
	})
	close(release)
	done, evs := h.wait()
	if done.Status != event.StatusOK {
		t.Fatalf("done = %+v", done)
	}
	got := map[string]string{}
	for _, d := range eventsOf[*event.TaskDone](evs) {
		got[d.Task] = d.Status
	}
	if got["f1.1"] != event.TaskOK || got["f1.3"] != event.TaskOK {
		t.Errorf("siblings = %v, want both ok", got)
	}
}
