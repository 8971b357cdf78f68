package fleetcmd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"reasonix/actors/event"
	"reasonix/actors/fleet/resume"
	"reasonix/core/journal"
	"reasonix/scheduler"
)

// TestCheckFleet: each kind of damage to a fleet's records is said, a
// line each, and becomes what a resume can still do: a lost result leaves
// its task unfinished, or failed once the fleet's reply was delivered; a
// start's lost details leave the start; an unknown record is ignored; a
// lost submission is the one loss nothing can be rebuilt from.
func TestCheckFleet(t *testing.T) {
	t.Parallel()
	at := time.Unix(1700000000, 0)
	sub := scheduler.Submission{Tasks: []scheduler.Task{{ID: "f.1", Fleet: "f"}, {ID: "f.2", Fleet: "f"}}}
	for _, id := range []string{"f.1", "f.2"} {
		b, _ := json.Marshal(event.TaskSpec{ID: id, Prompt: "do " + id})
		sub.Specs = append(sub.Specs, b)
	}
	raw := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	ok := raw(event.TaskResult{TaskID: "f.1", Status: event.TaskOK, Text: "done"})
	rec := func(kind, task, data string) journal.Record {
		r := journal.Record{Fleet: "s/f", Kind: kind, Task: task, At: at}
		if data != "" {
			r.Data = json.RawMessage(data)
		}
		return r
	}
	base := func(extra ...journal.Record) []journal.Record {
		recs := append([]journal.Record{rec(journal.KindSubmit, "", raw(sub)), rec(journal.KindStart, "f.1", ""),
			rec(journal.KindStart, "f.2", "")}, extra...)
		for i := range recs {
			recs[i].Seq = int64(i + 1)
		}
		return recs
	}
	tests := []struct {
		name    string
		recs    []journal.Record
		lost    []string
		err     string
		results map[string]string // task → status of its kept result
		running []string
	}{
		{name: "intact", recs: base(rec(journal.KindFinish, "f.1", ok)), results: map[string]string{"f.1": "ok"}, running: []string{"f.2"}},
		{name: "result not JSON", recs: base(rec(journal.KindFinish, "f.1", `{"Status":"o`)),
			lost:    []string{"record 4 (finish of f.1): its payload is not JSON: the task's result is lost and it counts as unfinished"},
			results: map[string]string{}, running: []string{"f.1", "f.2"}},
		{name: "result not a result", recs: base(rec(journal.KindFinish, "f.1", `[1]`)),
			lost:    []string{"record 4 (finish of f.1): its result does not read: json: cannot unmarshal array into Go value of type event.TaskResult: the task's result is lost and it counts as unfinished"},
			results: map[string]string{}, running: []string{"f.1", "f.2"}},
		{name: "delivered result lost", recs: base(rec(journal.KindFinish, "f.1", `{`), rec(journal.KindFinish, "f.2", ok), rec(journal.KindReply, "", "")),
			lost:    []string{"record 4 (finish of f.1): its payload is not JSON: the task's result, delivered before, is lost; it ends failed"},
			results: map[string]string{"f.1": "failed", "f.2": "ok"}},
		{name: "result lost, then run again", recs: base(rec(journal.KindFinish, "f.1", `{`), rec(journal.KindStart, "f.1", ""), rec(journal.KindFinish, "f.1", ok)),
			lost:    []string{"record 4 (finish of f.1): its payload is not JSON: the task's result is in record 6, which is intact"},
			results: map[string]string{"f.1": "ok"}, running: []string{"f.2"}},
		{name: "start details lost", recs: base(rec(journal.KindStart, "f.1", `{"worker":`)),
			lost:    []string{"record 4 (start of f.1): its payload is not JSON: its details are lost, the record is kept"},
			results: map[string]string{}, running: []string{"f.1", "f.2"}},
		{name: "unknown kind", recs: base(rec("fin\x7fsh", "f.1", ok)),
			lost:    []string{`record 4 (fin` + "\x7f" + `sh of f.1): unknown kind "fin\x7fsh": the record is ignored`},
			results: map[string]string{}, running: []string{"f.1", "f.2"}},
		{name: "no time", recs: func() []journal.Record {
			r := base(rec(journal.KindFinish, "f.1", ok))
			r[3].At = time.Unix(0, 0)
			return r
		}(), lost: []string{"record 4 (finish of f.1): it has no time: the record is kept"}, results: map[string]string{"f.1": "ok"}, running: []string{"f.2"}},
		{name: "records missing", recs: func() []journal.Record {
			r := base(rec(journal.KindFinish, "f.1", ok))
			r[3].Seq = 6
			return r
		}(), lost: []string{"records 4-5 are missing: what was recorded there is lost"}, results: map[string]string{"f.1": "ok"}, running: []string{"f.2"}},
		{name: "submission lost", recs: func() []journal.Record {
			r := base()
			r[0].Data = json.RawMessage(`{"tasks":[{"ID"`)
			return r
		}(), err: "record 1 (submit): its payload is not JSON: the fleet's tasks are lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := CheckFleet(tt.recs)
			if strings.Join(c.Lost, "\n") != strings.Join(tt.lost, "\n") {
				t.Errorf("lost %q, want %q", c.Lost, tt.lost)
			}
			if tt.err != "" {
				if c.Err == nil || c.Err.Error() != tt.err || !c.Damaged() || !strings.HasPrefix(c.Summary(), "damaged: "+tt.err) {
					t.Fatalf("err %v, want %q", c.Err, tt.err)
				}
				return
			}
			if c.Err != nil {
				t.Fatal(c.Err)
			}
			if c.Damaged() != (len(tt.lost) > 0) {
				t.Errorf("damaged %v", c.Damaged())
			}
			r := c.Replayed
			if len(r.Results) != len(tt.results) {
				t.Errorf("results %v, want %v", r.Results, tt.results)
			}
			for id, status := range tt.results {
				var res event.TaskResult
				if err := json.Unmarshal(r.Results[id], &res); err != nil || res.Status != status {
					t.Errorf("result of %s: %s (%v), want %s", id, r.Results[id], err, status)
				}
			}
			for _, id := range tt.running {
				if !r.Running[id] {
					t.Errorf("%s is not running: %v", id, r.Running)
				}
			}
			// What the check keeps, the resume can use.
			if _, err := resume.Rebuild(t.Context(), nil, c.Records, "rerun"); err != nil {
				t.Errorf("resume of the kept records: %v", err)
			}
		})
	}
}
