package panel

import (
	"strings"
	"testing"

	"reasonix/actors/event"
)

// TestFleetAgents: /tasks lists the background tasks with their names and
// how they ended, after their fleet has folded out of the panel, and
// "@<task> <message>" addresses a task by id or name while an @ reference
// to a file, or to nobody, is not a message.
func TestFleetAgents(t *testing.T) {
	f := NewFleet()
	if got := f.Tasks(); !strings.HasPrefix(got, "no background tasks") {
		t.Errorf("Tasks() with none = %q", got)
	}
	meta := func(seq int64, task string) event.Meta { return event.Meta{Seq: seq, Session: "s1", Task: task} }
	f.Apply(&event.TaskQueued{Meta: meta(1, "f1.1"), Fleet: "f1", Prompt: "search the logs", Background: true, Name: "logs"})
	f.Apply(&event.TaskQueued{Meta: meta(2, "f2.1"), Fleet: "f2", Prompt: "a task the parent waits for"})
	f.Apply(&event.TaskDone{Meta: meta(3, "f1.1"), Fleet: "f1", Status: event.TaskOK})
	f.FoldDone("f1")
	got := f.Tasks()
	if !strings.Contains(got, "f1.1 (logs)  ok  search the logs") || strings.Contains(got, "f2.1") {
		t.Errorf("Tasks() = %q", got)
	}
	for _, tc := range []struct {
		in, to, msg string
		ok          bool
	}{
		{"@logs what else?", "logs", "what else?", true},
		{"@f1.1   and the 404s", "f1.1", "and the 404s", true},
		{"@f2.1 hello", "f2.1", "hello", true},
		{"@notes.txt summarise it", "", "", false},
		{"@logs", "", "", false},
		{"look at @logs", "", "", false},
	} {
		to, msg, ok := f.Addressed(tc.in)
		if to != tc.to || msg != tc.msg || ok != tc.ok {
			t.Errorf("Addressed(%q) = %q, %q, %v; want %q, %q, %v", tc.in, to, msg, ok, tc.to, tc.msg, tc.ok)
		}
	}
}
