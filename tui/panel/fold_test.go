package panel

import (
	"testing"

	"reasonix/actors/event"
)

// TestFoldDone: a fleet folds out of the panel only once every one of its
// tasks has ended, leaving the other fleet's rows, and says what it came to.
func TestFoldDone(t *testing.T) {
	f := NewFleet()
	f.SetClock(clockAt(10))
	f.Apply(queued(1, "f1.1", "", "a", 0))
	f.Apply(queued(2, "f1.2", "", "b", 0))
	other := queued(3, "f2.1", "", "c", 0)
	other.Fleet = "f2"
	f.Apply(other)
	f.Apply(started(4, "f1.1", 1))
	f.Apply(done(5, "f1.1", event.TaskOK, 3, 2000, 100, 0))
	if _, ok := f.FoldDone("f1"); ok {
		t.Fatal("a fleet with a queued task folded")
	}
	f.Apply(done(6, "f1.2", event.TaskFailed, 4.5, 1000, 50, 0))
	s, ok := f.FoldDone("f1")
	if !ok {
		t.Fatal("a finished fleet did not fold")
	}
	if want := "fleet f1: 2 tasks, 1 ok, 1 failed · 4.5s · 150 tokens"; s.String() != want {
		t.Errorf("summary %q, want %q", s, want)
	}
	if f.Len() != 1 {
		t.Fatalf("%d rows left, want the other fleet's one", f.Len())
	}
	if id, _ := f.Selected(); id != "f2.1" {
		t.Errorf("selected %q after the fold", id)
	}
	if running, queuedN, ok, failed := f.Counts(); running+queuedN+ok+failed != 1 || queuedN != 1 {
		t.Errorf("counts %d %d %d %d after the fold", running, queuedN, ok, failed)
	}
}
