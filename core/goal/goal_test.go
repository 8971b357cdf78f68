package goal

import (
	"strings"
	"testing"
	"time"
)

func TestNormalizeAudit(t *testing.T) {
	t.Parallel()
	r := &Record{}
	for i, reason := range []string{"Can't reach the API-key store.", "cant reach the  api key store", "CANT REACH THE API KEY STORE!!"} {
		if got := r.Audit(StatusBlocked, reason); got != (i == 2) {
			t.Fatalf("report %d: end %v (count %d)", i+1, got, r.BlockedCount)
		}
	}
	r = &Record{}
	r.Audit(StatusBlocked, "a")
	r.Audit(StatusBlocked, "a")
	if r.Audit("in_progress", "") || r.Audit(StatusBlocked, "a") || r.BlockedCount != 1 {
		t.Fatalf("another report must reset the audit: %+v", r)
	}
}

// TestAuditCountsOneBlockerInARow: a goal ends on the same blocker
// reported three times in a row (docs/SPEC.md, Goals), so a different
// blocker starts the count again at one rather than adding to it, while
// rewording the same one (case, spacing, punctuation) still adds; any
// other report ends the run, leaving no count behind.
func TestAuditCountsOneBlockerInARow(t *testing.T) {
	t.Parallel()
	type report struct {
		status, reason string
		count          int // BlockedCount after the report
	}
	blocked := func(reason string, count int) report { return report{StatusBlocked, reason, count} }
	working := report{"in_progress", "", 0}
	tests := []struct {
		name    string
		reports []report
		end     bool // the last report ends the goal; no earlier one does
	}{
		{
			name: "a new blocker restarts the count",
			reports: []report{blocked("Need the deploy token", 1), blocked("need the deploy token.", 2),
				blocked("Waiting for CI access", 1), blocked("waiting  for ci-access!", 2), blocked("WAITING FOR CI ACCESS", 3)},
			end: true,
		},
		{
			name: "an earlier blocker does not resume its count",
			reports: []report{blocked("Need the deploy token", 1), blocked("Need the deploy token", 2),
				blocked("Waiting for CI access", 1), blocked("Need the deploy token", 1)},
		},
		{
			name: "alternating blockers never end the goal",
			reports: []report{blocked("token", 1), blocked("access", 1), blocked("token", 1),
				blocked("access", 1), blocked("token", 1), blocked("access", 1)},
		},
		{
			name:    "progress between blockers resets the count",
			reports: []report{blocked("token", 1), blocked("token", 2), working, blocked("token", 1), blocked("token", 2)},
		},
		{
			name:    "progress reports are never a blocker",
			reports: []report{working, working, working, working},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &Record{}
			for i, rep := range tc.reports {
				want := tc.end && i == len(tc.reports)-1
				end := r.Audit(rep.status, rep.reason)
				if end != want || r.BlockedCount != rep.count {
					t.Fatalf("report %d (%s %q): end %v, count %d; want %v, %d", i+1, rep.status, rep.reason, end, r.BlockedCount, want, rep.count)
				}
				wantKey := ""
				if rep.status == StatusBlocked {
					wantKey = Normalize(rep.reason)
				}
				if r.Blocked != wantKey {
					t.Fatalf("report %d (%s %q): blocked key %q, want %q", i+1, rep.status, rep.reason, r.Blocked, wantKey)
				}
			}
		})
	}
}

func TestParsePrompt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		ok      bool
		want    Prompt
		wantErr bool
	}{
		{"fix it", false, Prompt{}, false},
		{"/goals", false, Prompt{}, false},
		{"/goal clear", true, Prompt{Action: "clear"}, false},
		{"/goal resume", true, Prompt{Action: "resume"}, false},
		{"/goal --research find the leak", true, Prompt{Action: "start", Objective: "find the leak", Strategy: StrategyResearch}, false},
		{"/goal --simple  rename x", true, Prompt{Action: "start", Objective: "rename x", Strategy: StrategySimple}, false},
		{"/goal", true, Prompt{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			p, ok, err := ParsePrompt(tc.in)
			if ok != tc.ok || (err != nil) != tc.wantErr || (err == nil && p != tc.want) {
				t.Fatalf("got %+v %v %v", p, ok, err)
			}
		})
	}
}

func TestSignals(t *testing.T) {
	t.Parallel()
	if StrongSignal("research the best option") || StrongSignal("optimize this loop, long term") {
		t.Fatal("weak words upgraded a prompt")
	}
	if !StrongSignal("Investigate the flaky test and keep iterating until it passes 100 times") {
		t.Fatal("a strong signal was missed")
	}
	if Classify("debug the crash") != StrategyResearch || Classify("rename a variable") != StrategySimple {
		t.Fatal("classify")
	}
	if got := Sections("Context: a\nRequest: b\n## Constraints\nno network"); strings.Join(got, ",") != "Context,Request,Constraints" {
		t.Fatalf("sections %v", got)
	}
}

func TestCheckTodo(t *testing.T) {
	t.Parallel()
	p, s := 0, 1
	item := func(c, st string, l int) Item { return Item{Content: c, Status: st, Level: l} }
	tests := []struct {
		name  string
		items []Item
		ok    bool
	}{
		{"serial", []Item{item("a", TodoCompleted, p), item("b", TodoInProgress, p), item("c", TodoPending, p)}, true},
		{"two active", []Item{item("a", TodoInProgress, p), item("b", TodoInProgress, p)}, false},
		{"orphan sub-step", []Item{item("a", TodoPending, s)}, false},
		{"sub-step active, phase pending", []Item{item("P", TodoPending, p), item("a", TodoCompleted, s), item("b", TodoInProgress, s)}, true},
		{"phase active before its steps", []Item{item("P", TodoInProgress, p), item("a", TodoPending, s)}, false},
		{"steps out of order", []Item{item("P", TodoPending, p), item("a", TodoPending, s), item("b", TodoCompleted, s)}, false},
		{"phase signs off after steps", []Item{item("P", TodoCompleted, p), item("a", TodoCompleted, s), item("b", TodoCompleted, s)}, true},
		{"bad status", []Item{item("a", "done", p)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckTodo(tc.items); (err == nil) != tc.ok {
				t.Fatalf("err %v", err)
			}
		})
	}
}

func TestLease(t *testing.T) {
	t.Parallel()
	var l Lease
	if l.Round([]string{"read\x00a"}) != Renewed {
		t.Fatal("a new read must renew")
	}
	var got []Verdict
	for i := 0; i < PauseAfter; i++ {
		got = append(got, l.Round([]string{"read\x00a"}))
	}
	for i, v := range got {
		want := Idle
		switch i + 1 {
		case NudgeAfter:
			want = Nudge
		case PauseAfter:
			want = Pause
		}
		if v != want {
			t.Fatalf("round %d: %v, want %v", i+1, v, want)
		}
	}
	if l.Round([]string{"read\x00b"}) != Renewed || l.NoProgress != 0 || l.Nudged {
		t.Fatalf("renewal must reset: %+v", l)
	}
}

func TestJournal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, st := range []string{StatusComplete, StatusRunning} {
		r := &Record{ID: "g" + string(rune('a'+i)), Status: st, StartedAt: now.Add(time.Duration(i) * time.Second), Turns: i}
		if err := Save(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	latest, err := Latest(dir, (*Record).Unfinished)
	if err != nil || latest.ID != "gb" {
		t.Fatalf("latest %+v %v", latest, err)
	}
	if _, err := Load(dir, "../x"); err == nil {
		t.Fatal("a path escaped the journal")
	}
}

func TestObjectiveOf(t *testing.T) {
	r := &Record{ID: "g1", Objective: "  Make the tests pass\nunder -race  ", Strategy: StrategyResearch, Research: "/r"}
	got, ok := ObjectiveOf(Turn(r, Continue))
	if !ok || got != "Make the tests pass\nunder -race" {
		t.Fatalf("ObjectiveOf = %q, %v", got, ok)
	}
	for _, s := range []string{"fix the build", "[Active goal g1]", "[Active goal without the objective line]\n"} {
		if _, ok := ObjectiveOf(s); ok {
			t.Errorf("ObjectiveOf(%q) took it for a goal turn", s)
		}
	}
}
