package actors

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/fleet/resume"
	"reasonix/actors/kernel"
	"reasonix/core/journal"
	"reasonix/core/provider/providertest"
)

// TestFleetJournalAndResume runs a journalled fleet, cuts its journal
// after the second finished task as a crash would, and resumes it from
// the cut: the two finished tasks keep their results and are not asked
// again, the others run, and the result lists all four in input order.
func TestFleetJournalAndResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j, err := journal.OpenPath(ctx, filepath.Join(t.TempDir(), "fleets.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	spec := &fleet.FleetSpec{MaxRunning: 1, MaxWriters: 1, Root: "/ws", Journal: j}
	h := newHarness(t, harnessOpts{fleet: spec,
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				return providertest.Turn{Text: "answer to " + req.FirstUser()}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(4, nil)}}
			}
			return providertest.Turn{Text: "parent done"}
		})}})
	if done, _ := h.turn("fan out"); done.Status != event.StatusOK {
		t.Fatalf("parent turn: %+v", done)
	}
	fleets, err := j.Fleets(ctx)
	if err != nil || len(fleets) != 1 || !fleets[0].Replied || !strings.HasPrefix(fleets[0].Key, "s1/f1-") {
		t.Fatalf("journalled fleets: %+v, %v", fleets, err)
	}
	recs, err := j.Records(ctx, fleets[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range recs {
		kinds[r.Kind]++
	}
	if recs[0].Kind != journal.KindSubmit || recs[len(recs)-1].Kind != journal.KindReply || kinds[journal.KindStart] != 4 || kinds[journal.KindFinish] != 4 {
		t.Fatalf("records: %v", kinds)
	}
	// The cut: everything up to the second finish and the next start.
	cut, finishes := 0, 0
	for i, r := range recs {
		if r.Kind == journal.KindFinish {
			finishes++
		}
		if finishes == 2 && r.Kind == journal.KindStart {
			cut = i + 1
			break
		}
	}
	for _, mode := range []string{"rerun", "fail"} {
		t.Run(mode, func(t *testing.T) {
			j2, err := journal.OpenPath(ctx, filepath.Join(t.TempDir(), "fleets.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer j2.Close()
			for _, r := range recs[:cut] {
				if _, err := j2.Append(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			before := subRequests(h)
			rf, err := resume.Rebuild(ctx, j2, recs[:cut], mode)
			if err != nil {
				t.Fatal(err)
			}
			if len(rf.Submit.Done) != map[string]int{"rerun": 2, "fail": 3}[mode] {
				t.Fatalf("done before the resume: %v (rerun %v, failed %v)", rf.Submit.Done, rf.Rerun, rf.Failed)
			}
			again := *spec
			again.Journal = j2
			res, err := fleet.RunFleet(h.sys, again, "s2", h.bus, rf.Submit, 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := fleet.FormatFleetResult(team.ToolFleet, res)
			want := map[string]string{"rerun": "4 tasks: 4 ok", "fail": "4 tasks: 3 ok, 1 failed"}[mode]
			if !strings.HasPrefix(out, want) {
				t.Fatalf("resumed result:\n%s", out)
			}
			for i, r := range res.Results {
				if r.TaskID != rf.Submit.Tasks[i].ID {
					t.Fatalf("result %d is %s: not in input order", i, r.TaskID)
				}
			}
			after := subRequests(h)
			for _, r := range res.Results[:2] {
				p := "task " + strings.TrimPrefix(r.TaskID, "f1.")
				if after[p] != before[p] {
					t.Errorf("finished %s was asked again", r.TaskID)
				}
			}
			recs2, _ := j2.Records(ctx, recs[0].Fleet)
			if recs2[len(recs2)-1].Kind != journal.KindReply {
				t.Errorf("resumed journal does not end with the reply: %+v", recs2[len(recs2)-1])
			}
			if r, err := resume.Rebuild(ctx, j2, recs2, mode); err != nil || !r.Replayed.Complete() {
				t.Errorf("journal after the resume: complete=%v err=%v", r != nil && r.Replayed.Complete(), err)
			}
		})
	}
}

// killSchedulerAt arms a fault that kills the scheduler for good at its
// n-th subagent answer (see killActorAt).
func killSchedulerAt(t *testing.T, n int32) <-chan struct{} {
	t.Helper()
	var answers atomic.Int32
	return killActorAt(t, "scheduler", func(msg any) bool {
		_, ok := msg.(*agent.TurnFinished)
		return ok && answers.Add(1) == n
	})
}

// TestDeadSchedulerRestartsFromItsJournal: a scheduler whose repair itself
// panics is stopped; the session starts a new one, and the fleet it held
// goes on there from the journal: the task that had finished keeps its
// result and is not asked again, the one whose answer was lost runs
// again, the queued one runs, and the delegation call gets all three as
// ok. Without the restart the call ends with the tasks failed.
func TestDeadSchedulerRestartsFromItsJournal(t *testing.T) {
	ctx := context.Background()
	j, err := journal.OpenPath(ctx, filepath.Join(t.TempDir(), "fleets.db"))
	must(t, err)
	defer j.Close()
	spec := &fleet.FleetSpec{MaxRunning: 1, MaxWriters: 1, Root: "/ws", Journal: j}
	h := newHarness(t, harnessOpts{fleet: spec,
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				return providertest.Turn{Text: "answer to " + req.FirstUser()}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(3, nil)}}
			}
			return providertest.Turn{Text: "parent read: " + toolMessages(req)[0].Content}
		})}})
	killed := killSchedulerAt(t, 2)
	done, evs := h.turn("fan out")
	<-killed
	if done.Status != event.StatusOK || !strings.Contains(done.Text, "3 tasks: 3 ok") {
		t.Fatalf("parent turn: %+v", done)
	}
	asked := subRequests(h)
	if asked["task 1"] != 1 || asked["task 2"] != 2 || asked["task 3"] != 1 {
		t.Fatalf("subagent requests %v: want task 1 once, task 2 twice (its answer was lost), task 3 once", asked)
	}
	restarted := false
	for _, ev := range evs {
		if n, ok := ev.(*event.Notice); ok && strings.Contains(n.Message, "scheduler stopped and was started again") {
			restarted = true
		}
	}
	if !restarted {
		t.Fatal("no notice of the scheduler's restart")
	}
	fleets, err := j.Fleets(ctx)
	if err != nil || len(fleets) != 1 || !fleets[0].Replied {
		t.Fatalf("journalled fleets: %+v, %v", fleets, err)
	}
}

// TestDeadSchedulerWithoutJournal: with no journal there is nothing to go
// on from: the fleet the dead scheduler held fails, with the reason, and
// the next delegation runs on the restarted scheduler.
func TestDeadSchedulerWithoutJournal(t *testing.T) {
	spec := &fleet.FleetSpec{MaxRunning: 1, MaxWriters: 1, Root: "/ws"}
	h := newHarness(t, harnessOpts{fleet: spec,
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				return providertest.Turn{Text: "answer to " + req.FirstUser()}
			}
			last := req.Messages[len(req.Messages)-1]
			if last.Role == "user" {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(2, nil)}}
			}
			return providertest.Turn{Text: "parent read: " + last.Content}
		})}})
	killed := killSchedulerAt(t, 1)
	done, _ := h.turn("fan out")
	<-killed
	if done.Status != event.StatusOK || !strings.Contains(done.Text, "2 tasks: 0 ok, 2 failed") || !strings.Contains(done.Text, "scheduler") {
		t.Fatalf("first turn: %+v", done)
	}
	kernel.FaultHook.Store(nil)
	if done, _ := h.turn("fan out again"); done.Status != event.StatusOK || !strings.Contains(done.Text, "2 tasks: 2 ok") {
		t.Fatalf("second turn, on the restarted scheduler: %+v", done)
	}
}

// TestSubagentThatStopsFailsItsTask: a subagent whose executor stops
// without answering (its handler and its repair both fail) fails its task
// through the scheduler's ledger, with the reason; its sibling's answer
// stands and the fleet's result has both.
func TestSubagentThatStopsFailsItsTask(t *testing.T) {
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 2, MaxWriters: 1, Root: "/ws"},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				return providertest.Turn{Text: "answer to " + req.FirstUser()}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(2, nil)}}
			}
			return providertest.Turn{Text: "parent read: " + toolMessages(req)[0].Content}
		})}})
	killed := killActorAt(t, "executor", func(msg any) bool {
		m, ok := msg.(*agent.RunTurn)
		return ok && m.Input == "task 1"
	})
	done, _ := h.turn("fan out")
	<-killed
	if done.Status != event.StatusOK || !strings.Contains(done.Text, "2 tasks: 1 ok, 1 failed") ||
		!strings.Contains(done.Text, "subagent stopped before finishing its task") {
		t.Fatalf("parent turn: %+v", done)
	}
}
