package tui

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"reasonix/actors/event"
)

// fleetModel is a model with n subagent tasks running.
func fleetModel(tb testing.TB, n int) *model {
	m := testModel(tb, 120, 40)
	for i := range n {
		task := event.Meta{Session: "s1", Task: fmt.Sprintf("t%02d", i)}
		feed(m, &event.TaskQueued{Meta: task, Fleet: "f1", Prompt: fmt.Sprintf("review package %d", i)},
			&event.TaskStarted{Meta: task, Fleet: "f1", Model: "fake-model"})
	}
	feed(m, &event.TurnStarted{Meta: meta(1), Prompt: "review everything"})
	return m
}

// BenchmarkFrame64Tasks is one frame while 64 tasks stream: the update of
// one task's text delta and of the main answer's, then the view drawn.
// median-ns is the median frame.
func BenchmarkFrame64Tasks(b *testing.B) {
	m := fleetModel(b, 64)
	times := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		task := event.Meta{Seq: int64(i + 10), Session: "s1", Task: fmt.Sprintf("t%02d", i%64)}
		m.Update(eventsMsg{gen: m.gen, events: []event.Event{
			&event.TextDelta{Meta: task, Text: "checking the next file for problems "},
			&event.TextDelta{Meta: meta(int64(i + 10)), Text: "and the answer grows by a few words "},
		}})
		_ = m.View()
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "median-ns")
}

// BenchmarkIdleCPU runs the chat program with nothing happening and
// reports the CPU time it uses per second of wall time, and how many times
// the model was updated: an idle chat schedules no ticks, so the count
// stays at what starting it took.
func BenchmarkIdleCPU(b *testing.B) {
	m := testModel(b, 80, 24)
	counter := &countingModel{m: m}
	p := tea.NewProgram(counter, tea.WithInput(nil), tea.WithOutput(discard{}), tea.WithWindowSize(80, 24), tea.WithoutSignals())
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	// Let the start-up messages arrive, then measure.
	deadline := time.Now().Add(5 * time.Second)
	for !counter.sized.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	settled := counter.updates.Load()
	b.ResetTimer()
	cpu0 := cpuTime()
	wall0 := time.Now()
	for range b.N {
		time.Sleep(10 * time.Millisecond)
	}
	wall := time.Since(wall0)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/wall.Seconds()/1000, "cpu-ms/s")
	b.ReportMetric(float64(counter.updates.Load()-settled), "updates")
	p.Quit()
	<-done
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
