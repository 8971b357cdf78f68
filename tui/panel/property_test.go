package panel

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"reasonix/actors/event"
)

// TestFleetCountsProperty folds random event sequences — duplicates,
// events out of order, tasks never queued, ends without starts — and
// checks that the header counts always equal a recount of the rows, that
// every task is a row once, and that every frame keeps its size.
func TestFleetCountsProperty(t *testing.T) {
	t.Parallel()
	statuses := []string{event.TaskOK, event.TaskFailed, event.TaskCancelled, event.TaskTimedOut, event.TaskOverBudget}
	for run := range 200 {
		r := rand.New(rand.NewPCG(uint64(run), 7))
		f := NewFleet()
		f.SetClock(clockAt(1000))
		var seq int64
		// ids are the tasks that ever had a row.
		ids := map[string]bool{}
		for range 300 {
			id := fmt.Sprintf("f%d.%d", 1+r.IntN(2), 1+r.IntN(20))
			seq++
			s := seq
			switch r.IntN(10) {
			case 0:
				s = max(seq-int64(r.IntN(5)), 1) // a replay overlapping what was applied
			case 1:
				s = 0 // no seq: never taken for a duplicate
			}
			sec := float64(r.IntN(900))
			var ev event.Event
			switch r.IntN(7) {
			case 0:
				ev = queued(s, id, "", "p", sec)
			case 1:
				ev = started(s, id, sec)
			case 2:
				ev = done(s, id, statuses[r.IntN(len(statuses))], sec, int64(r.IntN(1e6)), r.IntN(1e5), r.Float64()*100)
			case 3:
				ev = toolStart(s, id, fmt.Sprint("c", r.IntN(3)), "bash", "{}")
			case 4:
				ev = toolEnd(s, id, fmt.Sprint("c", r.IntN(3)), "bash", r.IntN(2) == 0)
			case 5:
				ev = usage(s, id, r.IntN(1e4), r.IntN(1e4), r.IntN(1e4))
			default:
				ev = delta(s, id, "text\n")
			}
			f.Apply(ev)
			if f.index[id] != nil {
				ids[id] = true
			}
		}
		var want [bucketCount]int
		seen := map[string]bool{}
		for _, tk := range f.tasks {
			want[tk.bucket()]++
			if seen[tk.id] {
				t.Fatalf("run %d: task %s has two rows", run, tk.id)
			}
			seen[tk.id] = true
			if tk.state == stateDone && len(tk.open) > 0 {
				t.Fatalf("run %d: done task %s has open calls", run, tk.id)
			}
		}
		if want != f.counts {
			t.Fatalf("run %d: counts %v, recount %v", run, f.counts, want)
		}
		for id := range ids {
			if !seen[id] {
				t.Fatalf("run %d: task %s lost its row", run, id)
			}
		}
		f.Focus()
		for range 10 {
			f.Key(key([]string{"down", "up", "pgdown", "enter", "esc", "x", "y", "end"}[r.IntN(8)]))
			f.Focus()
			w, h := 1+r.IntN(160), r.IntN(50)
			checkFrame(t, f.View(w, h), w, h)
		}
	}
}

// FuzzFleetText streams arbitrary text (escape sequences, wide and
// combining characters, invalid UTF-8, no newlines) into a task and
// checks the detail and the list keep their size.
func FuzzFleetText(f *testing.F) {
	for _, s := range []string{"", "hello\nworld", "\x1b[31mred\x1b[0m\ttab", "检查\u0301\n", "\xff\xfe", strings.Repeat("x", 5000), "a\r\nb\x00c"} {
		f.Add(s, uint8(40), uint8(8))
	}
	f.Fuzz(func(t *testing.T, s string, w, h uint8) {
		fl := NewFleet()
		fl.SetClock(clockAt(10))
		fl.Apply(queued(1, "f1.1", s, s, 0))
		fl.Apply(delta(2, "f1.1", s))
		fl.Apply(toolStart(3, "f1.1", "c", s, s))
		width, height := int(w%200)+1, int(h%60)
		checkFrame(t, fl.View(width, height), width, height)
		fl.Focus()
		fl.Key(key("enter"))
		checkFrame(t, fl.View(width, height), width, height)
		if strings.Contains(ansi.Strip(fl.View(width, height)), "\x1b") {
			t.Fatal("an escape sequence from the text reached the screen")
		}
	})
}
