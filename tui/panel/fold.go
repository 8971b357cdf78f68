package panel

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"reasonix/actors/event"
)

// FleetSummary is a finished fleet folded out of the panel.
type FleetSummary struct {
	Fleet                        string
	Tasks, OK, Failed, Cancelled int
	Tokens                       int
	Wall                         time.Duration
}

// String is the summary's one line: "fleet f1: 16 tasks, 15 ok, 1 failed ·
// 42.0s · 120.3k tokens".
func (s FleetSummary) String() string {
	parts := []string{fmt.Sprintf("%d ok", s.OK)}
	if s.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", s.Failed))
	}
	if s.Cancelled > 0 {
		parts = append(parts, fmt.Sprintf("%d cancelled", s.Cancelled))
	}
	line := fmt.Sprintf("fleet %s: %d tasks, %s · %s", s.Fleet, s.Tasks, strings.Join(parts, ", "), s.Wall.Round(100*time.Millisecond))
	if s.Tokens > 0 {
		line += fmt.Sprintf(" · %s tokens", FormatTokens(s.Tokens))
	}
	return line
}

// FoldDone removes fleet's tasks from the panel once every one of them has
// ended, and returns what they came to, so a finished fleet leaves one
// line behind instead of its rows and the next fleet gets a panel of its
// own. ok is false while any of its tasks is queued or running.
func (f *Fleet) FoldDone(fleet string) (FleetSummary, bool) {
	s := FleetSummary{Fleet: fleet}
	var first, last time.Time
	for _, t := range f.tasks {
		if t.fleet != fleet {
			continue
		}
		if t.state != stateDone {
			return FleetSummary{}, false
		}
		s.Tasks++
		s.Tokens += t.tokens
		switch t.status {
		case event.TaskOK:
			s.OK++
		case event.TaskCancelled:
			s.Cancelled++
		default:
			s.Failed++
		}
		if first.IsZero() || (!t.queuedAt.IsZero() && t.queuedAt.Before(first)) {
			first = t.queuedAt
		}
		if t.doneAt.After(last) {
			last = t.doneAt
		}
	}
	if s.Tasks == 0 || fleet == "" {
		return FleetSummary{}, false
	}
	if !first.IsZero() && last.After(first) {
		s.Wall = last.Sub(first)
	}
	keep, _ := f.Selected()
	f.tasks = slices.DeleteFunc(f.tasks, func(t *task) bool {
		if t.fleet != fleet {
			return false
		}
		delete(f.index, t.id)
		f.counts[t.bucket()]--
		return true
	})
	f.sel, f.top = 0, 0
	for i, t := range f.tasks {
		if t.id == keep {
			f.sel = i
		}
	}
	if f.detail || f.confirm != "" {
		if _, still := f.index[keep]; !still {
			f.detail, f.confirm, f.back = false, "", 0
		}
	}
	if len(f.tasks) == 0 {
		f.Blur()
	}
	return s, true
}
