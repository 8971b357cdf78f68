package panel

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"reasonix/actors/event"
)

// rowSum is what a fold test checks of one row.
type rowSum struct {
	ID, State, Tool string
	Tokens          int
	Cache           string
}

func summarize(f *Fleet) []rowSum {
	var out []rowSum
	for _, t := range f.tasks {
		r := rowSum{ID: t.id, State: stateLabel(t), Tokens: t.tokens}
		if n := len(t.open); n > 0 {
			r.Tool = t.open[n-1].tool
		}
		if t.hasCache {
			r.Cache = fmt.Sprintf("%.1f", t.cachePct)
		}
		out = append(out, r)
	}
	return out
}

func TestFleetFold(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		events []event.Event
		want   []rowSum
		// counts: running, queued, ok, failed
		counts [4]int
	}{
		{
			name:   "queued then started then done ok",
			events: []event.Event{queued(1, "f1.1", "", "a", 0), started(2, "f1.1", 1), done(3, "f1.1", event.TaskOK, 5, 4000, 1200, 87.5)},
			want:   []rowSum{{ID: "f1.1", State: "ok", Tokens: 1200, Cache: "87.5"}},
			counts: [4]int{0, 0, 1, 0},
		},
		{
			name:   "order is first sight, not state",
			events: []event.Event{queued(1, "f1.1", "", "a", 0), queued(2, "f1.2", "", "b", 0), started(3, "f1.2", 1), done(4, "f1.2", event.TaskFailed, 2, 0, 0, 0)},
			want:   []rowSum{{ID: "f1.1", State: "queued"}, {ID: "f1.2", State: "failed"}},
			counts: [4]int{0, 1, 0, 1},
		},
		{
			name: "current tool is the latest unfinished",
			events: []event.Event{started(1, "f1.1", 0), toolStart(2, "f1.1", "c1", "read_file", "{}"), toolStart(3, "f1.1", "c2", "bash", "{}"),
				toolEnd(4, "f1.1", "c2", "bash", false)},
			want:   []rowSum{{ID: "f1.1", State: "running", Tool: "read_file"}},
			counts: [4]int{1, 0, 0, 0},
		},
		{
			name:   "a finish for a call never started changes nothing",
			events: []event.Event{started(1, "f1.1", 0), toolStart(2, "f1.1", "c1", "grep", "{}"), toolEnd(3, "f1.1", "zz", "bash", false)},
			want:   []rowSum{{ID: "f1.1", State: "running", Tool: "grep"}},
			counts: [4]int{1, 0, 0, 0},
		},
		{
			name:   "usage sets tokens and cache share",
			events: []event.Event{started(1, "f1.1", 0), usage(2, "f1.1", 1000, 250, 1100), usage(3, "f1.1", 2000, 1500, 2300)},
			want:   []rowSum{{ID: "f1.1", State: "running", Tokens: 2300, Cache: "75.0"}},
			counts: [4]int{1, 0, 0, 0},
		},
		{
			name:   "task_done's cache share wins over usage",
			events: []event.Event{started(1, "f1.1", 0), usage(2, "f1.1", 1000, 250, 1100), done(3, "f1.1", event.TaskOK, 9, 0, 3000, 93.25)},
			want:   []rowSum{{ID: "f1.1", State: "ok", Tokens: 3000, Cache: "93.2"}},
			counts: [4]int{0, 0, 1, 0},
		},
		{
			name:   "events of an unknown task make a running row",
			events: []event.Event{delta(1, "f2.7", "hello"), toolStart(2, "f2.8", "c1", "bash", "{}")},
			want:   []rowSum{{ID: "f2.7", State: "running"}, {ID: "f2.8", State: "running", Tool: "bash"}},
			counts: [4]int{2, 0, 0, 0},
		},
		{
			name:   "task_done without start",
			events: []event.Event{done(1, "f1.3", event.TaskCancelled, 0, 0, 0, 0)},
			want:   []rowSum{{ID: "f1.3", State: "cancelled"}},
			counts: [4]int{0, 0, 0, 1},
		},
		{
			name: "duplicates by seq are skipped",
			events: []event.Event{queued(1, "f1.1", "", "a", 0), started(2, "f1.1", 1), toolStart(3, "f1.1", "c1", "bash", "{}"),
				toolEnd(4, "f1.1", "c1", "bash", false), started(2, "f1.1", 1), toolStart(3, "f1.1", "c1", "bash", "{}"), queued(1, "f1.1", "", "a", 0)},
			want:   []rowSum{{ID: "f1.1", State: "running"}},
			counts: [4]int{1, 0, 0, 0},
		},
		{
			name:   "a repeated task_done without seq counts once",
			events: []event.Event{started(0, "f1.1", 0), done(0, "f1.1", event.TaskTimedOut, 3, 0, 0, 0), done(0, "f1.1", event.TaskTimedOut, 3, 0, 0, 0)},
			want:   []rowSum{{ID: "f1.1", State: "timed out"}},
			counts: [4]int{0, 0, 0, 1},
		},
		{
			name: "nothing revives a done task",
			events: []event.Event{started(1, "f1.1", 0), done(2, "f1.1", event.TaskOverBudget, 3, 0, 0, 0), started(3, "f1.1", 4),
				toolStart(4, "f1.1", "c9", "bash", "{}"), queued(5, "f1.1", "", "again", 5)},
			want:   []rowSum{{ID: "f1.1", State: "over budget"}},
			counts: [4]int{0, 0, 0, 1},
		},
		{
			name:   "done clears open tool calls",
			events: []event.Event{started(1, "f1.1", 0), toolStart(2, "f1.1", "c1", "bash", "{}"), done(3, "f1.1", event.TaskOK, 1, 0, 0, 0)},
			want:   []rowSum{{ID: "f1.1", State: "ok"}},
			counts: [4]int{0, 0, 1, 0},
		},
		{
			name:   "main-session events are not tasks",
			events: []event.Event{&event.TextDelta{Meta: mt(1, "", 0), Text: "x"}, &event.ToolStarted{Meta: mt(2, "", 0), CallID: "c", Tool: "bash"}, &event.Notice{Meta: mt(3, "f1.1", 0)}},
			counts: [4]int{0, 0, 0, 0},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := NewFleet()
			for _, ev := range tc.events {
				f.Apply(ev)
			}
			if got := summarize(f); !slices.Equal(got, tc.want) {
				t.Errorf("rows\ngot  %+v\nwant %+v", got, tc.want)
			}
			r, q, d, x := f.Counts()
			if got := [4]int{r, q, d, x}; got != tc.counts {
				t.Errorf("counts (running, queued, ok, failed) = %v, want %v", got, tc.counts)
			}
			if f.Len() != len(tc.want) {
				t.Errorf("Len = %d, want %d", f.Len(), len(tc.want))
			}
		})
	}
}

func TestFleetApplyChanged(t *testing.T) {
	t.Parallel()
	f := NewFleet()
	steps := []struct {
		ev   event.Event
		want bool
	}{
		{queued(1, "f1.1", "", "a", 0), true},
		{queued(1, "f1.1", "", "a", 0), false}, // duplicate
		{started(2, "f1.1", 1), true},
		{delta(3, "f1.1", "text"), false}, // rows show no text
		{toolStart(4, "f1.1", "c1", "bash", "{}"), true},
		{&event.TurnStarted{Meta: mt(5, "", 0)}, false},
		{delta(6, "f1.2", "first sight"), true}, // a new row
		{delta(7, "f1.2", "more"), false},
	}
	for i, s := range steps {
		if got := f.Apply(s.ev); got != s.want {
			t.Errorf("step %d (%s): changed = %v, want %v", i, s.ev.Kind(), got, s.want)
		}
	}
	f.Focus()
	f.Key(key("enter"))
	if !f.Apply(delta(8, "f1.1", "more")) {
		t.Error("text of the task whose detail is open did not report a change")
	}
}

// key builds the key press whose String is s.
func key(s string) tea.KeyPressMsg {
	special := map[string]rune{"up": tea.KeyUp, "down": tea.KeyDown, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown,
		"home": tea.KeyHome, "end": tea.KeyEnd, "enter": tea.KeyEnter, "esc": tea.KeyEscape}
	if c, ok := special[s]; ok {
		return tea.KeyPressMsg{Code: c}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func fleetOf(states ...string) *Fleet {
	f := NewFleet()
	f.SetClock(clockAt(100))
	seq := int64(0)
	next := func() int64 { seq++; return seq }
	for i, st := range states {
		id := fmt.Sprintf("f1.%d", i+1)
		f.Apply(queued(next(), id, "", "prompt", 0))
		switch st {
		case "running":
			f.Apply(started(next(), id, 1))
		case "done":
			f.Apply(started(next(), id, 1))
			f.Apply(done(next(), id, event.TaskOK, 2, 1000, 10, 0))
		}
	}
	return f
}

func TestFleetKeys(t *testing.T) {
	t.Parallel()
	type step struct {
		key     string
		handled bool
		cancel  string
	}
	cases := []struct {
		name   string
		states []string
		steps  []step
		// sel is the selection after the steps; confirm the question
		// still open; detail whether it is shown.
		sel     int
		confirm string
		detail  bool
		focused bool
	}{
		{name: "cancel asks, y confirms", states: []string{"running"},
			steps: []step{{"x", true, ""}, {"y", true, "f1.1"}}, focused: true},
		{name: "c asks too, for a queued task", states: []string{"done", "queued"},
			steps: []step{{"down", true, ""}, {"c", true, ""}, {"y", true, "f1.2"}}, sel: 1, focused: true},
		{name: "any other key keeps the task", states: []string{"running"},
			steps: []step{{"x", true, ""}, {"n", true, ""}, {"y", false, ""}}, focused: true},
		{name: "cancel on a done task does nothing", states: []string{"done"},
			steps: []step{{"x", true, ""}, {"y", false, ""}}, focused: true},
		{name: "question open", states: []string{"running", "running"},
			steps: []step{{"j", true, ""}, {"x", true, ""}}, sel: 1, confirm: "f1.2", focused: true},
		{name: "selection clamps", states: []string{"queued", "queued", "queued"},
			steps: []step{{"k", true, ""}, {"end", true, ""}, {"down", true, ""}, {"up", true, ""}}, sel: 1, focused: true},
		{name: "home and pgdown", states: []string{"queued", "queued", "queued"},
			steps: []step{{"pgdown", true, ""}, {"home", true, ""}}, sel: 0, focused: true},
		{name: "enter opens the detail, esc closes it", states: []string{"running"},
			steps: []step{{"enter", true, ""}}, detail: true, focused: true},
		{name: "esc closes the detail, then blurs", states: []string{"running"},
			steps: []step{{"enter", true, ""}, {"esc", true, ""}, {"esc", true, ""}, {"j", false, ""}}},
		{name: "cancel from the detail", states: []string{"running"},
			steps: []step{{"enter", true, ""}, {"x", true, ""}, {"y", true, "f1.1"}}, detail: true, focused: true},
		{name: "unknown keys are left to the caller", states: []string{"running"},
			steps: []step{{"q", false, ""}}, focused: true},
		{name: "empty fleet", steps: []step{{"down", true, ""}, {"enter", true, ""}, {"x", true, ""}, {"y", false, ""}}, focused: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fleetOf(tc.states...)
			f.Focus()
			for i, s := range tc.steps {
				handled, act := f.Key(key(s.key))
				if handled != s.handled || act.CancelTask != s.cancel {
					t.Fatalf("step %d %q: got handled=%v cancel=%q, want handled=%v cancel=%q", i, s.key, handled, act.CancelTask, s.handled, s.cancel)
				}
			}
			if f.sel != tc.sel {
				t.Errorf("selection %d, want %d", f.sel, tc.sel)
			}
			if id, _ := f.Confirming(); id != tc.confirm {
				t.Errorf("confirming %q, want %q", id, tc.confirm)
			}
			if f.DetailOpen() != tc.detail || f.Focused() != tc.focused {
				t.Errorf("detail=%v focused=%v, want %v %v", f.DetailOpen(), f.Focused(), tc.detail, tc.focused)
			}
		})
	}
}

func TestFleetCancelQuestionEndsWithTask(t *testing.T) {
	t.Parallel()
	f := fleetOf("running")
	f.Focus()
	f.Key(key("x"))
	if _, ok := f.Confirming(); !ok {
		t.Fatal("x did not ask")
	}
	if !strings.Contains(ansi.Strip(f.View(80, 6)), "Cancel task f1.1?") {
		t.Errorf("the question is not shown:\n%s", ansi.Strip(f.View(80, 6)))
	}
	f.Apply(done(100, "f1.1", event.TaskOK, 5, 0, 0, 0))
	if handled, act := f.Key(key("y")); handled || act.CancelTask != "" {
		t.Errorf("y after the task ended: handled=%v cancel=%q", handled, act.CancelTask)
	}
}

func TestFleetUnfocusedIgnoresKeys(t *testing.T) {
	t.Parallel()
	f := fleetOf("running")
	if handled, _ := f.Key(key("x")); handled {
		t.Error("a blurred panel handled a key")
	}
}

func TestFleetViewSize(t *testing.T) {
	t.Parallel()
	f := goldenFleet()
	for _, w := range []int{1, 5, 20, 40, 63, 80, 120, 200} {
		for _, h := range []int{0, 1, 2, 3, 4, 10, 40, 80} {
			for _, focused := range []bool{false, true} {
				if focused {
					f.Focus()
				} else {
					f.Blur()
				}
				checkFrame(t, f.View(w, h), w, h)
			}
		}
	}
	f.Focus()
	f.Key(key("enter"))
	for _, w := range []int{1, 10, 33, 120} {
		for _, h := range []int{1, 2, 3, 4, 12, 50} {
			checkFrame(t, f.View(w, h), w, h)
		}
	}
}

func TestFleetWidePrompt(t *testing.T) {
	t.Parallel()
	f := NewFleet()
	f.SetClock(clockAt(10))
	f.Apply(queued(1, "f1.1", "探索", "修复登录页面在移动端的布局问题并补充测试用例，确保所有浏览器一致", 0))
	out := f.View(90, 4)
	checkFrame(t, out, 90, 4)
	row := ansi.Strip(strings.Split(out, "\n")[2])
	if !strings.HasSuffix(row, "…") {
		t.Errorf("a wide prompt was not cut with an ellipsis: %q", row)
	}
	if w := ansi.StringWidth(row); w < 88 {
		t.Errorf("the row is %d cells; a wide prompt should fill 90 less at most one cell", w)
	}
}

func TestFleetScrollKeepsSelection(t *testing.T) {
	t.Parallel()
	states := make([]string, 30)
	for i := range states {
		states[i] = "queued"
	}
	f := fleetOf(states...)
	f.Focus()
	for range 25 {
		f.Key(key("down"))
		out := ansi.Strip(f.View(60, 8))
		if !strings.Contains(out, fmt.Sprintf("> queued      f1.%d ", f.sel+1)) {
			t.Fatalf("selection %d not visible:\n%s", f.sel, out)
		}
	}
	f.Key(key("pgup"))
	if f.sel != 25-f.page {
		t.Errorf("pgup moved to %d, want %d (page %d)", f.sel, 25-f.page, f.page)
	}
}

func TestFleetColours(t *testing.T) {
	t.Parallel()
	f := fleetOf("running", "done")
	f.Apply(done(50, "f1.1", event.TaskFailed, 3, 0, 0, 0))
	out := f.View(100, 4)
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[2], "\x1b[7m") {
		t.Errorf("the selected row is not reversed: %q", lines[2])
	}
	if !strings.Contains(lines[3], "\x1b[32m") {
		t.Errorf("the ok state is not green: %q", lines[3])
	}
	f.Key(key("down")) // not focused: no move
	f.Focus()
	f.Key(key("down"))
	lines = strings.Split(f.View(100, 5), "\n")
	if !strings.Contains(lines[2], "\x1b[31m") {
		t.Errorf("the failed state is not red once unselected: %q", lines[2])
	}
}

func TestFleetDetail(t *testing.T) {
	t.Parallel()
	f := NewFleet()
	f.SetClock(clockAt(30))
	f.Apply(queued(1, "f1.1", "explore", "find the config loader", 0))
	f.Apply(started(2, "f1.1", 2))
	seq := int64(2)
	for i := range 300 {
		seq++
		f.Apply(delta(seq, "f1.1", fmt.Sprintf("line %d\n", i)))
	}
	f.Focus()
	f.Key(key("enter"))
	out := ansi.Strip(f.View(40, 8))
	lines := strings.Split(out, "\n")
	if lines[len(lines)-2] != "line 299" {
		t.Errorf("the newest line is not last:\n%s", out)
	}
	f.Key(key("home"))
	out = ansi.Strip(f.View(40, 8))
	if want := fmt.Sprintf("line %d", 300-maxRingLines); !strings.Contains(out, want+"\n") {
		t.Errorf("home does not reach the oldest kept line %q:\n%s", want, out)
	}
	f.Key(key("end"))
	if !strings.Contains(ansi.Strip(f.View(40, 8)), "line 299") {
		t.Error("end does not come back to the newest line")
	}
}

func TestRingBounds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		write func(r *ring)
		lines int
		last  string
	}{
		{"lines over the count", func(r *ring) {
			for i := range 1000 {
				r.write(fmt.Sprintf("l%d\n", i))
			}
		}, maxRingLines, "l999"},
		{"split deltas join", func(r *ring) { r.write("hel"); r.write("lo\nwor"); r.write("ld") }, 2, "world"},
		{"bytes over the bound", func(r *ring) {
			for range 100 {
				r.write(strings.Repeat("x", 1000) + "\n")
			}
		}, maxRingBytes / 1000, strings.Repeat("x", 1000)},
		{"a line that never ends is cut", func(r *ring) {
			for range 100 {
				r.write(strings.Repeat("é", 100))
			}
		}, 20000/maxLineBytes + 1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var r ring
			tc.write(&r)
			got := r.tail(1 << 20)
			if len(got) != tc.lines {
				t.Errorf("%d lines kept, want %d", len(got), tc.lines)
			}
			if tc.last != "" && got[len(got)-1] != tc.last {
				t.Errorf("last line %q, want %q", got[len(got)-1], tc.last)
			}
			total := 0
			for _, l := range got {
				if len(l) > maxLineBytes {
					t.Errorf("a line of %d bytes", len(l))
				}
				if !utf8.ValidString(l) {
					t.Errorf("a line cut inside a rune: %q", l)
				}
				total += len(l)
			}
			if total > maxRingBytes+maxLineBytes {
				t.Errorf("%d bytes kept", total)
			}
		})
	}
}

func TestFleetRestore(t *testing.T) {
	t.Parallel()
	f := fleetOf("running", "running")
	f.Focus()
	f.Key(key("down"))
	f.Restore(event.Snapshot{Seq: 40, Tasks: []event.TaskSnapshot{
		{ID: "f1.1", State: "done", Status: event.TaskOK},
		{ID: "f1.2", State: "running"},
		{ID: "f1.3", State: "queued", Prompt: "third"},
	}})
	want := []rowSum{{ID: "f1.1", State: "ok"}, {ID: "f1.2", State: "running"}, {ID: "f1.3", State: "queued"}}
	if got := summarize(f); !slices.Equal(got, want) {
		t.Errorf("rows %+v, want %+v", got, want)
	}
	if id, _ := f.Selected(); id != "f1.2" {
		t.Errorf("selection moved to %q", id)
	}
	if r, q, d, x := f.Counts(); [4]int{r, q, d, x} != [4]int{1, 1, 1, 0} {
		t.Errorf("counts %v", [4]int{r, q, d, x})
	}
	if f.Apply(done(40, "f1.2", event.TaskFailed, 1, 0, 0, 0)) {
		t.Error("an event the snapshot already holds was applied")
	}
	if !f.Apply(done(41, "f1.2", event.TaskFailed, 1, 0, 0, 0)) {
		t.Error("the event after the snapshot was skipped")
	}
}

func TestFleetHeight(t *testing.T) {
	t.Parallel()
	f := fleetOf("running", "queued", "done")
	if got := f.Height(40); got != 5 {
		t.Errorf("Height = %d, want 5 (header, names, 3 rows)", got)
	}
	out := ansi.Strip(f.View(80, f.Height(40)))
	for _, want := range []string{"STATE", "f1.1", "f1.2", "f1.3"} {
		if !strings.Contains(out, want) {
			t.Errorf("a panel of its own Height lacks %q:\n%s", want, out)
		}
	}
	f.Focus()
	if got := f.Height(40); got != 6 {
		t.Errorf("focused Height = %d, want 6", got)
	}
	if got := f.Height(3); got != 3 {
		t.Errorf("Height(3) = %d", got)
	}
	// Len+1 rows, the caller's own rule, still shows every task.
	f.Blur()
	out = ansi.Strip(f.View(80, f.Len()+1))
	if !strings.Contains(out, "f1.3") {
		t.Errorf("Len+1 lines hide a task:\n%s", out)
	}
}

func TestPaintMatchesLipgloss(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p     paint
		style lipgloss.Style
	}{
		{styleSelected, lipgloss.NewStyle().Reverse(true)},
		{styleOK, lipgloss.NewStyle().Foreground(lipgloss.Green)},
		{styleFaint, lipgloss.NewStyle().Faint(true)},
		{styleHeader, lipgloss.NewStyle().Bold(true)},
	} {
		for _, s := range []string{"ok", "a b  c ", "检查 x", "…"} {
			if got, want := tc.p.Render(s), tc.style.Render(s); got != want {
				t.Errorf("paint %q = %q, lipgloss %q", s, got, want)
			}
		}
	}
}

func TestFleetTextStaysBounded(t *testing.T) {
	t.Parallel()
	f := NewFleet()
	chunk := strings.Repeat("word ", 40) + "\n" + strings.Repeat("x", 700)
	seq := int64(0)
	for round := range 400 {
		for i := range 64 {
			seq++
			f.Apply(delta(seq, fmt.Sprintf("f1.%d", i+1), chunk+fmt.Sprint(round)))
		}
	}
	for _, tk := range f.tasks {
		held := tk.lines.open.Len()
		for i := range tk.lines.len() {
			held += len(tk.lines.at(i))
		}
		if held > maxRingBytes+maxLineBytes || tk.lines.len() > maxRingLines {
			t.Fatalf("task %s holds %d bytes in %d lines", tk.id, held, tk.lines.len())
		}
		if held < maxRingBytes/2 {
			t.Fatalf("task %s kept only %d bytes of its text", tk.id, held)
		}
	}
}

func TestFleetElapsed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		events []event.Event
		want   string // "" for no time known
	}{
		{"queued waits", []event.Event{queued(1, "a", "", "p", 10)}, "50s"},
		{"running since start", []event.Event{queued(1, "a", "", "p", 0), started(2, "a", 20)}, "40s"},
		{"done from duration_ms", []event.Event{started(1, "a", 0), done(2, "a", event.TaskOK, 30, 125_000, 0, 0)}, "2m05s"},
		{"done from the stamps", []event.Event{started(1, "a", 5), done(2, "a", event.TaskOK, 35, 0, 0, 0)}, "30s"},
		{"start missed: the first work event", []event.Event{queued(1, "a", "", "p", 0), &event.ToolStarted{Meta: mt(2, "a", 45), CallID: "c", Tool: "bash"}}, "15s"},
		{"no times", []event.Event{&event.TaskQueued{Meta: event.Meta{Seq: 1, Task: "a"}}}, ""},
		{"long run", []event.Event{&event.TaskStarted{Meta: event.Meta{Seq: 1, Task: "a", Time: at(60 - 7384)}}}, "2h03m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := NewFleet()
			f.SetClock(clockAt(60))
			for _, ev := range tc.events {
				f.Apply(ev)
			}
			d, ok := f.tasks[0].elapsed(at(60))
			got := ""
			if ok {
				got = formatDuration(d)
			}
			if got != tc.want {
				t.Errorf("elapsed %q, want %q", got, tc.want)
			}
			row := ansi.Strip(strings.Split(f.View(120, 2), "\n")[1])
			if tc.want != "" && !strings.Contains(row, " "+tc.want+" ") {
				t.Errorf("row lacks %q: %q", tc.want, row)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got, want string
	}{
		{FormatTokens(0), "0"}, {FormatTokens(999), "999"}, {FormatTokens(1000), "1.0k"}, {FormatTokens(12_345), "12.3k"},
		{FormatTokens(412_345), "412k"}, {FormatTokens(2_000_000), "2.0M"}, {FormatTokens(250_000_000), "250M"},
		{formatDuration(0), "0s"}, {formatDuration(59 * time.Second), "59s"}, {formatDuration(61 * time.Second), "1m01s"},
		{formatDuration(3600 * time.Second), "1h00m"}, {formatDuration(-time.Second), "0s"},
		{fit("abcdef", 4), "abc…"}, {fit("abc", 3), "abc"}, {fit("检查检查", 5), "检查…"}, {fit("x", 0), ""},
		{pad("ab", 4), "ab  "}, {padLeft("ab", 4), "  ab"}, {pad("检查x", 4), "检… "},
		{clean("a\tb\x1b[31mc\x1b[0m\x07d\ne"), "a    bcd e"}, {clean("plain"), "plain"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestFleetRequeuedTask: a task whose worker was lost goes back to
// queued with the reason in its lines, its lost calls closed, and its
// detail names the worker and attempt it runs on next.
func TestFleetRequeuedTask(t *testing.T) {
	t.Parallel()
	f := NewFleet()
	f.SetClock(clockAt(30))
	f.Apply(queued(1, "f1.1", "", "scan the repo", 0))
	st := started(2, "f1.1", 1)
	st.Worker = "w1"
	f.Apply(st)
	f.Apply(&event.ToolStarted{Meta: mt(3, "f1.1", 2), CallID: "c1", Tool: "grep"})
	if !f.Apply(&event.TaskRequeued{Meta: mt(4, "f1.1", 3), Fleet: "f1", Worker: "w1", Attempt: 2, Reason: "worker w1 lost: connection to the worker closed"}) {
		t.Fatal("task_requeued changed nothing")
	}
	if got := summarize(f); len(got) != 1 || got[0].State != stateQueued || got[0].Tool != "" {
		t.Fatalf("after the requeue: %+v", got)
	}
	again := started(5, "f1.1", 4)
	again.Worker, again.Attempt = "w2", 2
	f.Apply(again)
	f.Focus()
	f.Key(key("enter"))
	out := ansi.Strip(f.View(100, 10))
	for _, want := range []string{"[requeued] worker w1 lost", "on w2", "attempt 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("detail lacks %q:\n%s", want, out)
		}
	}
}
