package team

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"reasonix/actors/event"
)

// TestBookHandsOutEachThingOnce drives a book through random
// interleavings of what can happen to a parent's background work: fleets
// submitted, task results arriving (some twice: a TaskEnded and then the
// fleet's FleetResult carrying the same result, or a scheduler that failed
// the whole fleet after some had ended), follow-ups started and ended,
// messages, cancellations (a cancelled result), and the conversation
// taking what waits (every step boundary) or a task_wait claiming some.
// Whatever the order, every run's result and every message is handed out
// exactly once, nothing is handed out that never came in, and once all
// runs have ended nothing is outstanding.
func TestBookHandsOutEachThingOnce(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, seed*7919))
		b := NewBook()
		type run struct{ agent, id string }
		var pending []run         // runs started, not ended
		ended := map[string]int{} // run id → times its result went in
		want := map[string]bool{} // item keys that must come out once
		got := map[string]int{}
		fleets, msgs := 0, 0
		take := func(items []Item) {
			for _, it := range items {
				key := it.Agent + "|" + it.Text
				got[key]++
				if !want[key] {
					t.Fatalf("seed %d: handed out %q, which never came in", seed, key)
				}
			}
		}
		for step := 0; step < 200; step++ {
			switch op := r.IntN(10); {
			case op < 2 && fleets < 6:
				fleets++
				id := fmt.Sprintf("f%d", fleets)
				var specs []event.TaskSpec
				for i := 1; i <= 1+r.IntN(4); i++ {
					specs = append(specs, event.TaskSpec{ID: fmt.Sprintf("%s.%d", id, i)})
					pending = append(pending, run{specs[len(specs)-1].ID, specs[len(specs)-1].ID})
				}
				b.Add(id, specs)
			case op < 5 && len(pending) > 0:
				k := r.IntN(len(pending))
				p := pending[k]
				status := []string{event.TaskOK, event.TaskFailed, event.TaskCancelled}[r.IntN(3)]
				res := event.TaskResult{TaskID: p.id, Status: status, Text: "answer of " + p.id}
				if b.Ended(p.agent, "", res) {
					want[p.agent+"|"+ResultText(p.agent, "", res)] = true
				}
				ended[p.id]++
				if r.IntN(3) == 0 {
					// The same run's result again: a FleetResult, or a
					// scheduler failing what it had already ended.
					if b.Ended(p.agent, "", event.TaskResult{TaskID: p.id, Status: event.TaskFailed, Error: "scheduler: stopped"}) {
						t.Fatalf("seed %d: %s's second result was taken", seed, p.id)
					}
				}
				pending = append(pending[:k], pending[k+1:]...)
			case op < 6 && len(ended) > 0:
				// A message to an agent that ended starts a follow-up.
				var agents []string
				for id := range ended {
					if !strings.Contains(id, "+") {
						agents = append(agents, id)
					}
				}
				if len(agents) == 0 {
					continue
				}
				a := agents[r.IntN(len(agents))]
				id := fmt.Sprintf("%s+%d", a, len(b.Followups(a))+1)
				b.Followup(a, id)
				pending = append(pending, run{a, id})
			case op < 7:
				msgs++
				text := MessageText("f1.1", "", fmt.Sprintf("message %d", msgs))
				id := fmt.Sprintf("m%d", msgs)
				b.Message(id, "f1.1", "", text)
				want["f1.1|"+text] = true
				if r.IntN(3) == 0 && b.Message(id, "f1.1", "", text) {
					// A repair handing the same message in again.
					t.Fatalf("seed %d: message %s taken twice", seed, id)
				}
			case op < 9:
				take(b.Take())
			default:
				take(b.Claim(b.WaitIDs()))
			}
		}
		for _, p := range pending {
			res := event.TaskResult{TaskID: p.id, Status: event.TaskOK, Text: "late " + p.id}
			if b.Ended(p.agent, "", res) {
				want[p.agent+"|"+ResultText(p.agent, "", res)] = true
			}
		}
		take(b.Take())
		for key := range want {
			if got[key] != 1 {
				t.Fatalf("seed %d: %q handed out %d times, want once", seed, key, got[key])
			}
		}
		if runs, items := b.Outstanding(); runs != 0 || items != 0 || len(b.Running()) != 0 {
			t.Fatalf("seed %d: after every run ended: %d runs, %d items outstanding, running %v", seed, runs, items, b.Running())
		}
	}
}

// TestBookNames: names are unique in a session and may not pass for
// another agent.
func TestBookNames(t *testing.T) {
	b := NewBook()
	b.Add("f1", []event.TaskSpec{{ID: "f1.1", Name: "logs"}})
	for _, tc := range []struct {
		specs []event.TaskSpec
		want  string
	}{
		{[]event.TaskSpec{{ID: "f2.1", Name: "logs"}}, "already used"},
		{[]event.TaskSpec{{ID: "f2.1", Name: "a"}, {ID: "f2.2", Name: "a"}}, "already used"},
		{[]event.TaskSpec{{ID: "f2.1", Name: "parent"}}, "reserved"},
		{[]event.TaskSpec{{ID: "f2.1", Name: "f1.2"}}, "reserved"},
		{[]event.TaskSpec{{ID: "f2.1", Name: "f1+1"}}, "reserved"},
		{[]event.TaskSpec{{ID: "f2.1", Name: "docs"}, {ID: "f2.2"}}, ""},
		{[]event.TaskSpec{{ID: "f2.1", Name: "f"}, {ID: "f2.2", Name: "f1."}, {ID: "f2.3", Name: "fix"}}, ""},
	} {
		err := b.CheckNames(tc.specs)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckNames(%+v) = %v, want %q", tc.specs, err, tc.want)
		}
	}
	if b.Resolve("logs") != "f1.1" || b.Resolve("f1.1") != "f1.1" || b.Resolve("nobody") != "" {
		t.Errorf("Resolve: logs=%q f1.1=%q nobody=%q", b.Resolve("logs"), b.Resolve("f1.1"), b.Resolve("nobody"))
	}
}
