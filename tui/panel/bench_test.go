package panel

import (
	"fmt"
	"testing"
	"time"

	"reasonix/actors/event"
)

// benchFleet is 64 running tasks and, per frame, the events a busy fleet
// sends between two frames: for each task a text delta (every eighth also
// ending a line), and a tool call started or finished, half the tasks
// starting while the other half finish, so the frames alternate; half the
// tasks also report usage.
func benchFleet() (*Fleet, [2][]event.Event, *time.Time) {
	now := t0
	f := NewFleet()
	f.SetClock(func() time.Time { return now })
	var seq int64
	for i := range 64 {
		id := fmt.Sprintf("f1.%d", i+1)
		seq++
		f.Apply(queued(seq, id, "explore", fmt.Sprintf("Audit package %d for unchecked errors and report every finding", i), 0))
		seq++
		f.Apply(started(seq, id, 1))
	}
	var frames [2][]event.Event
	for k := range frames {
		for i := range 64 {
			id := fmt.Sprintf("f1.%d", i+1)
			frames[k] = append(frames[k], delta(0, id, "some streamed words of the answer "))
			if i%8 == 0 {
				frames[k] = append(frames[k], delta(0, id, "and the end of a line\n"))
			}
			if (i+k)%2 == 0 {
				frames[k] = append(frames[k], toolStart(0, id, "c1", "read_file", `{"path":"core/config/load.go"}`), usage(0, id, 4000, 3500, 4400))
			} else {
				frames[k] = append(frames[k], toolEnd(0, id, "c1", "read_file", false))
			}
		}
	}
	return f, frames, &now
}

// BenchmarkFleetFrame is one frame of a 64-task fleet: the frame's events
// applied, then View(120, 40), the clock moving 50 ms a frame.
func BenchmarkFleetFrame(b *testing.B) {
	f, frames, now := benchFleet()
	seq := int64(1000)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		for _, ev := range frames[n%2] {
			seq++
			setSeq(ev, seq)
			f.Apply(ev)
		}
		*now = now.Add(50 * time.Millisecond)
		_ = f.View(120, 40)
	}
	b.ReportMetric(float64(len(frames[0])), "events/frame")
}

// BenchmarkFleetFrameDetail is the same with the detail view open.
func BenchmarkFleetFrameDetail(b *testing.B) {
	f, frames, now := benchFleet()
	f.Focus()
	f.Key(key("enter"))
	seq := int64(1000)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		for _, ev := range frames[n%2] {
			seq++
			setSeq(ev, seq)
			f.Apply(ev)
		}
		*now = now.Add(50 * time.Millisecond)
		_ = f.View(120, 40)
	}
}

// BenchmarkFleetApply is one event folded in, no rendering.
func BenchmarkFleetApply(b *testing.B) {
	f, frames, _ := benchFleet()
	all := append(frames[0], frames[1]...)
	seq := int64(1000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ev := all[i%len(all)]
		i++
		seq++
		setSeq(ev, seq)
		f.Apply(ev)
	}
}

// BenchmarkFleetView is View(120, 40) of a 64-task fleet whose rows did
// not change since the last frame but whose clock moved a second.
func BenchmarkFleetView(b *testing.B) {
	f, _, now := benchFleet()
	b.ReportAllocs()
	for b.Loop() {
		*now = now.Add(time.Second)
		_ = f.View(120, 40)
	}
}

func setSeq(ev event.Event, seq int64) {
	switch e := ev.(type) {
	case *event.TextDelta:
		e.Seq = seq
	case *event.ToolStarted:
		e.Seq = seq
	case *event.ToolFinished:
		e.Seq = seq
	case *event.UsageReported:
		e.Seq = seq
	}
}

// BenchmarkFleetViewUnchanged is View(120, 40) when nothing changed since
// the last frame: every row comes from its cache.
func BenchmarkFleetViewUnchanged(b *testing.B) {
	f, _, _ := benchFleet()
	_ = f.View(120, 40)
	b.ReportAllocs()
	for b.Loop() {
		_ = f.View(120, 40)
	}
}
