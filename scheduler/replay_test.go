package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"reasonix/core/journal"
)

// randomJournal writes the journal of a fleet of n tasks driven by random
// inputs: starts, finishes, duplicate finishes (a task re-run after a
// crash between its result and the crash's discovery), requeues (its
// worker was lost), cancellations and expiries, ending with the reply once
// every task has a result.
func randomJournal(rng *rand.Rand, n int) []journal.Record {
	at := time.Unix(1700000000, 0)
	var recs []journal.Record
	add := func(kind, task string, data any) {
		at = at.Add(time.Millisecond)
		var raw json.RawMessage
		if data != nil {
			raw, _ = json.Marshal(data)
		}
		recs = append(recs, journal.Record{Fleet: "s/f1", Seq: int64(len(recs) + 1), Kind: kind, Task: task, At: at, Data: raw})
	}
	sub := Submission{}
	for i := 1; i <= n; i++ {
		sub.Tasks = append(sub.Tasks, Task{ID: fmt.Sprintf("f1.%d", i)})
	}
	add(journal.KindSubmit, "", sub)
	state := map[string]int{} // 0 queued, 1 running, 2 finished
	runs := map[string]int{}
	for left := n; left > 0; {
		id := fmt.Sprintf("f1.%d", 1+rng.IntN(n))
		switch state[id] {
		case 0:
			add(journal.KindStart, id, nil)
			state[id] = 1
		case 1:
			if rng.IntN(4) == 0 {
				add(journal.KindRequeue, id, map[string]any{"worker": "w1", "attempt": 2, "why": "lost"})
				state[id] = 0
				continue
			}
			switch rng.IntN(6) {
			case 0:
				add(journal.KindCancel, id, nil)
			case 1:
				add(journal.KindExpire, id, nil)
			}
			runs[id]++
			add(journal.KindFinish, id, fmt.Sprintf("result %s run %d", id, runs[id]))
			state[id] = 2
			left--
		case 2:
			if rng.IntN(4) == 0 { // a re-run's second answer
				runs[id]++
				add(journal.KindFinish, id, fmt.Sprintf("result %s run %d", id, runs[id]))
			}
		}
	}
	add(journal.KindReply, "", nil)
	return recs
}

// TestReplayNeverDuplicatesOrLosesAResult cuts random journals at every
// point and checks that replay keeps each finished task's first result
// exactly once, leaves every other task pending exactly once, and that
// the rebuilt queue holds exactly the pending tasks.
func TestReplayNeverDuplicatesOrLosesAResult(t *testing.T) {
	t.Parallel()
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 17))
		n := 1 + rng.IntN(12)
		full := randomJournal(rng, n)
		cut := 1 + rng.IntN(len(full))
		recs := full[:cut]
		r, err := Replay(recs)
		if err != nil {
			t.Fatalf("seed %d cut %d: %v", seed, cut, err)
		}
		first := map[string]string{}
		for _, rec := range recs {
			if rec.Kind == journal.KindFinish {
				if _, ok := first[rec.Task]; !ok {
					var s string
					_ = json.Unmarshal(rec.Data, &s)
					first[rec.Task] = s
				}
			}
		}
		if len(r.Order) != n {
			t.Fatalf("seed %d: %d tasks in order, want %d", seed, len(r.Order), n)
		}
		seen := map[string]int{}
		for id, res := range r.Results {
			seen[id]++
			var s string
			_ = json.Unmarshal(res, &s)
			if s != first[id] || s != fmt.Sprintf("result %s run 1", id) {
				t.Fatalf("seed %d cut %d: %s kept %q, want its first result %q", seed, cut, id, s, first[id])
			}
		}
		for _, id := range r.Pending() {
			seen[id]++
			if _, ok := first[id]; ok {
				t.Fatalf("seed %d cut %d: finished %s is pending", seed, cut, id)
			}
		}
		for _, id := range r.Order {
			if seen[id] != 1 {
				t.Fatalf("seed %d cut %d: %s appears %d times among results and pending", seed, cut, id, seen[id])
			}
		}
		for id := range r.Running {
			if _, ok := r.Results[id]; ok {
				t.Fatalf("seed %d cut %d: %s both running and finished", seed, cut, id)
			}
		}
		// Running is exactly the unfinished tasks whose last start is not
		// followed by a requeue.
		lastStart := map[string]bool{}
		for _, rec := range recs {
			switch rec.Kind {
			case journal.KindStart:
				lastStart[rec.Task] = true
			case journal.KindRequeue:
				lastStart[rec.Task] = false
			}
		}
		for _, id := range r.Order {
			_, done := first[id]
			if want := lastStart[id] && !done; r.Running[id] != want {
				t.Fatalf("seed %d cut %d: %s running %v, want %v", seed, cut, id, r.Running[id], want)
			}
		}
		q, err := r.Rebuild(Config{MaxRunning: 64, MaxWriters: 3, Root: "/ws"}, r.Pending(), time.Unix(1800000000, 0))
		if err != nil {
			t.Fatal(err)
		}
		if st := q.Status(); st.Queued != len(r.Pending()) {
			t.Fatalf("seed %d cut %d: rebuilt queue holds %d, want %d", seed, cut, st.Queued, len(r.Pending()))
		}
		if r.Complete() != (len(r.Pending()) == 0) || (cut == len(full)) != r.Replied {
			t.Fatalf("seed %d cut %d: complete %v replied %v", seed, cut, r.Complete(), r.Replied)
		}
	}
}

func TestReplayRejectsCorruptJournals(t *testing.T) {
	t.Parallel()
	sub, _ := json.Marshal(Submission{Tasks: []Task{{ID: "a"}}})
	for _, tc := range []struct {
		name string
		recs []journal.Record
	}{
		{"empty", nil},
		{"start before submit", []journal.Record{{Kind: journal.KindStart, Task: "a"}}},
		{"unknown task", []journal.Record{{Kind: journal.KindSubmit, Data: sub}, {Kind: journal.KindFinish, Task: "b"}}},
		{"two submits", []journal.Record{{Kind: journal.KindSubmit, Data: sub}, {Kind: journal.KindSubmit, Data: sub}}},
		{"unknown kind", []journal.Record{{Kind: journal.KindSubmit, Data: sub}, {Kind: "explode"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Replay(tc.recs); err == nil {
				t.Fatal("replay accepted a corrupt journal")
			}
		})
	}
}

// TestReplayRequeue checks that a requeue record takes a started task out
// of Running, so a resume treats it as queued, and that a later start puts
// it back; a finished task ignores a stray requeue.
func TestReplayRequeue(t *testing.T) {
	t.Parallel()
	sub, _ := json.Marshal(Submission{Tasks: []Task{{ID: "a"}, {ID: "b"}, {ID: "c"}}})
	why := json.RawMessage(`{"worker":"build1","attempt":2,"why":"heartbeat lost"}`)
	rec := func(kind, task string, data json.RawMessage) journal.Record {
		return journal.Record{Fleet: "s/f", Kind: kind, Task: task, Data: data}
	}
	tests := []struct {
		name    string
		recs    []journal.Record
		running []string
		pending []string
	}{
		{"requeued task is queued again", []journal.Record{
			rec(journal.KindSubmit, "", sub),
			rec(journal.KindStart, "a", nil), rec(journal.KindStart, "b", nil),
			rec(journal.KindRequeue, "a", why),
		}, []string{"b"}, []string{"a", "b", "c"}},
		{"started again after the requeue", []journal.Record{
			rec(journal.KindSubmit, "", sub),
			rec(journal.KindStart, "a", nil), rec(journal.KindRequeue, "a", why),
			rec(journal.KindStart, "a", nil), rec(journal.KindRequeue, "a", why),
			rec(journal.KindStart, "a", nil),
		}, []string{"a"}, []string{"a", "b", "c"}},
		{"finished after a requeue keeps its result", []journal.Record{
			rec(journal.KindSubmit, "", sub),
			rec(journal.KindStart, "a", nil), rec(journal.KindRequeue, "a", why),
			rec(journal.KindStart, "a", nil), rec(journal.KindFinish, "a", json.RawMessage(`"ok"`)),
			rec(journal.KindRequeue, "a", why),
		}, nil, []string{"b", "c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := Replay(tc.recs)
			if err != nil {
				t.Fatal(err)
			}
			var running []string
			for _, id := range r.Order {
				if r.Running[id] {
					running = append(running, id)
				}
			}
			if !slices.Equal(running, tc.running) || !slices.Equal(r.Pending(), tc.pending) {
				t.Fatalf("running %q pending %q; want %q %q", running, r.Pending(), tc.running, tc.pending)
			}
		})
	}
	if _, err := Replay([]journal.Record{rec(journal.KindSubmit, "", sub), rec(journal.KindRequeue, "", why)}); err == nil {
		t.Fatal("replay accepted a requeue that names no task")
	}
	if _, err := Replay([]journal.Record{rec(journal.KindSubmit, "", sub), rec(journal.KindRequeue, "zz", why)}); err == nil {
		t.Fatal("replay accepted a requeue of an unknown task")
	}
}

// TestReplayRequeueThroughJournal writes records through a real journal
// database and replays what it reads back.
func TestReplayRequeueThroughJournal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j, err := journal.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	sub, _ := json.Marshal(Submission{Tasks: []Task{{ID: "a"}, {ID: "b"}}})
	for _, r := range []journal.Record{
		{Fleet: "s/f", Kind: journal.KindSubmit, Data: sub},
		{Fleet: "s/f", Kind: journal.KindStart, Task: "a"},
		{Fleet: "s/f", Kind: journal.KindStart, Task: "b"},
		{Fleet: "s/f", Kind: journal.KindRequeue, Task: "b", Data: json.RawMessage(`{"worker":"w1","attempt":2,"why":"lost"}`)},
	} {
		if _, err := j.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := j.Records(ctx, "s/f")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Running["a"] || r.Running["b"] {
		t.Fatalf("replayed running %v", r.Running)
	}
	q, err := r.Rebuild(Config{Root: "/ws"}, r.Pending(), time.Unix(1800000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := q.Lookup("b"); st.State != Queued || st.Attempt != 1 {
		t.Fatalf("rebuilt b = %+v", st)
	}
}
