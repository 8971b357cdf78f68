package actors

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/kernel"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// BenchmarkScheduler64 runs a 64-task fleet at cap 64 in one process,
// each task three model turns (two read-only tool calls, then its answer)
// against the fake at zero latency, and reports the scheduler actor's own
// cost: the time spent in its handlers, which never block, so it is the
// scheduler's CPU. It is given per task event the scheduler published
// (task_queued, task_started, task_done and the like on the parent's
// bus), per message it handled, and per task.
func BenchmarkScheduler64(b *testing.B) {
	var busy, handled, began atomic.Int64
	epoch := time.Now()
	hook := func(kind string, _ any, after bool) {
		if kind != "scheduler" {
			return
		}
		now := int64(time.Since(epoch))
		if !after {
			began.Store(now) // one scheduler: its handlers run one at a time
			return
		}
		busy.Add(now - began.Load())
		handled.Add(1)
	}
	probe := &funcTool{name: "probe", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return "ok", nil }}
	h := newHarness(b, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 64, MaxWriters: 3, Root: "/ws"},
		subTools: []tool.Tool{probe},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				if n := len(toolMessages(req)); n < 2 {
					return providertest.Turn{ToolCalls: []providertest.ToolCall{call("probe", `{}`)}}
				}
				return providertest.Turn{Text: "answer to " + req.FirstUser()}
			}
			// Each iteration's turn fans out once, then answers.
			if last := req.Messages[len(req.Messages)-1]; last.Role == "user" {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(64, nil)}}
			}
			return providertest.Turn{Text: "parent done"}
		})}})
	kernel.FaultHook.Store(&hook)
	defer kernel.FaultHook.Store(nil)
	var taskEvents int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		done, evs := h.turn("fan out")
		if done.Status != event.StatusOK {
			b.Fatalf("parent turn: %+v", done)
		}
		ok := 0
		for _, ev := range evs {
			meta := ev.EventMeta()
			if meta.Task != "" && strings.HasPrefix(ev.Kind(), "task_") {
				taskEvents++
			}
			if d, isDone := ev.(*event.TaskDone); isDone && d.Status == event.TaskOK {
				ok++
			}
		}
		if ok != 64 {
			kinds := map[string]int{}
			for _, ev := range evs {
				kinds[ev.Kind()]++
			}
			for _, d := range eventsOf[*event.TaskDone](evs) {
				b.Logf("%s %s %s", d.Task, d.Status, d.Error)
				break
			}
			b.Fatalf("%d of 64 tasks ok; events %v", ok, kinds)
		}
	}
	b.StopTimer()
	if taskEvents == 0 || handled.Load() == 0 {
		b.Fatal("no task events or scheduler messages seen")
	}
	b.ReportMetric(float64(busy.Load())/1000/float64(taskEvents), "sched-µs/task-event")
	b.ReportMetric(float64(busy.Load())/1000/float64(handled.Load()), "sched-µs/msg")
	b.ReportMetric(float64(busy.Load())/1000/float64(64*b.N), "sched-µs/task")
	b.ReportMetric(float64(taskEvents)/float64(64*b.N), "task-events/task")
}
