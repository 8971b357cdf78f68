package panel

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"reasonix/actors/event"
	"reasonix/core/goal"
	"reasonix/core/provider"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// t0 is the fixed start of every test's clock.
var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func clockAt(sec float64) func() time.Time { return func() time.Time { return at(sec) } }

func mt(seq int64, task string, sec float64) event.Meta {
	return event.Meta{Seq: seq, Time: at(sec), Session: "s1", Task: task}
}

func queued(seq int64, id, profile, prompt string, sec float64) *event.TaskQueued {
	return &event.TaskQueued{Meta: mt(seq, id, sec), Fleet: "f1", Prompt: prompt, Profile: profile}
}

func started(seq int64, id string, sec float64) *event.TaskStarted {
	return &event.TaskStarted{Meta: mt(seq, id, sec), Fleet: "f1", Model: "deepseek-chat"}
}

func done(seq int64, id, status string, sec float64, durMS int64, tokens int, cache float64) *event.TaskDone {
	return &event.TaskDone{Meta: mt(seq, id, sec), Fleet: "f1", Status: status, DurationMS: durMS,
		Usage: provider.Usage{TotalTokens: tokens}, CacheHitPct: cache}
}

func toolStart(seq int64, id, call, tool, args string) *event.ToolStarted {
	return &event.ToolStarted{Meta: mt(seq, id, 0), CallID: call, Tool: tool, Args: args}
}

func toolEnd(seq int64, id, call, tool string, isErr bool) *event.ToolFinished {
	return &event.ToolFinished{Meta: mt(seq, id, 0), CallID: call, Tool: tool, IsError: isErr}
}

func usage(seq int64, id string, prompt, hit, total int) *event.UsageReported {
	return &event.UsageReported{Meta: mt(seq, id, 0),
		Total: provider.Usage{PromptTokens: prompt, CacheHitTokens: hit, TotalTokens: total}}
}

func delta(seq int64, id, text string) *event.TextDelta {
	return &event.TextDelta{Meta: mt(seq, id, 0), Text: text}
}

// checkFrame fails unless s is exactly height lines of at most width
// cells each.
func checkFrame(t *testing.T, s string, width, height int) {
	t.Helper()
	lines := strings.Split(s, "\n")
	if height == 0 {
		if s != "" {
			t.Fatalf("height 0 gave %q", s)
		}
		return
	}
	if len(lines) != height {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), height, ansi.Strip(s))
	}
	checkLines(t, s, width)
}

// checkLines fails unless every line of s is at most width cells and
// closes the styles it opens.
func checkLines(t *testing.T, s string, width int) {
	t.Helper()
	for i, l := range strings.Split(s, "\n") {
		if w := ansi.StringWidth(l); w > width {
			t.Fatalf("line %d is %d cells, more than %d: %q", i, w, width, ansi.Strip(l))
		}
		// A style opened on a line is closed on it, so nothing bleeds
		// into what the caller draws next.
		if j := strings.LastIndex(l, "\x1b["); j >= 0 && !strings.HasPrefix(l[j:], "\x1b[m") {
			t.Fatalf("line %d leaves a style open: %q", i, l)
		}
	}
}

// golden compares the frame, stripped of colour, with testdata/name.golden,
// or rewrites it under -update.
func golden(t *testing.T, name, frame string) {
	t.Helper()
	got := ansi.Strip(frame) + "\n"
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (rerun with -update if intended)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// todoUpdated is a todo_updated event with the items of a todo call's
// arguments, {"items":[…]}.
func todoUpdated(m event.Meta, args string) *event.TodoUpdated {
	var a struct {
		Items []goal.Item `json:"items"`
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		panic(err)
	}
	return &event.TodoUpdated{Meta: m, Items: a.Items}
}
