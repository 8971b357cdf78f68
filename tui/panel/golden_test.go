package panel

import (
	"fmt"
	"testing"

	"reasonix/actors/event"
	"reasonix/core/goal"
	"reasonix/core/provider"
)

// goldenFleet is a 64-task fleet in every state, on a clock fixed at
// 600 s after its start.
func goldenFleet() *Fleet {
	f := NewFleet()
	f.SetClock(clockAt(600))
	profiles := []string{"", "explore", "review", "general", "研究"}
	tools := []string{"read_file", "bash", "grep", "write_file", "list_dir"}
	ends := []string{event.TaskOK, event.TaskOK, event.TaskFailed, event.TaskOK, event.TaskCancelled, event.TaskTimedOut, event.TaskOverBudget}
	seq := int64(0)
	next := func() int64 { seq++; return seq }
	for i := range 64 {
		id := fmt.Sprintf("f1.%d", i+1)
		prompt := fmt.Sprintf("Audit package %d for unchecked errors and report every finding with its file and line", i+1)
		if i%9 == 4 {
			prompt = "检查第" + fmt.Sprint(i+1) + "个模块的错误处理，并列出所有未检查的返回值及其文件和行号"
		}
		f.Apply(queued(next(), id, profiles[i%len(profiles)], prompt, float64(i)))
	}
	for i := range 64 {
		id := fmt.Sprintf("f1.%d", i+1)
		switch {
		case i < 40: // ended
			f.Apply(started(next(), id, float64(10+i)))
			f.Apply(usage(next(), id, 4000+i*100, 3000+i*50, 4500+i*137))
			st := ends[i%len(ends)]
			d := done(next(), id, st, float64(100+i*5), int64(90_000+i*5000), 5000+i*211, 0)
			if i%3 == 0 {
				d.CacheHitPct = 80 + float64(i%20)
			}
			if st == event.TaskFailed {
				d.Error = "model stream: unexpected EOF"
			}
			if st == event.TaskOverBudget {
				d.OverBudget = "tokens"
				d.Budget = &event.Budget{Tokens: 6000}
				d.Turns, d.Cost = 7, 0.0123
			}
			f.Apply(d)
		case i < 52: // running
			st := started(next(), id, float64(300+i))
			if i == 40 {
				st.Budget = &event.Budget{Tokens: 50_000, Turns: 20}
				st.Endpoint = &provider.LimiterStats{Endpoint: "http://127.0.0.1:1/v1/chat/completions", Window: 8, Max: 32, InFlight: 6, Waiting: 2}
			}
			f.Apply(st)
			f.Apply(usage(next(), id, 2000+i*10, 1000, 2100+i*33))
			if i%2 == 0 {
				f.Apply(toolStart(next(), id, "c1", tools[i%len(tools)], `{"path":"x"}`))
			}
			if i%4 == 0 {
				f.Apply(toolStart(next(), id, "c2", "grep", `{"pattern":"err"}`))
			}
		}
	}
	return f
}

func TestGoldenFleet64(t *testing.T) {
	t.Parallel()
	f := goldenFleet()
	f.Focus()
	for range 54 {
		f.Key(key("down"))
	}
	out := f.View(120, 30)
	checkFrame(t, out, 120, 30)
	golden(t, "fleet_64", out)
}

func TestGoldenFleetNarrow(t *testing.T) {
	t.Parallel()
	f := goldenFleet()
	out := f.View(72, 8)
	checkFrame(t, out, 72, 8)
	golden(t, "fleet_narrow", out)
}

func TestGoldenFleetDetail(t *testing.T) {
	t.Parallel()
	f := goldenFleet()
	id := "f1.41"
	seq := int64(10_000)
	next := func() int64 { seq++; return seq }
	for i := range 6 {
		f.Apply(delta(next(), id, fmt.Sprintf("Step %d: reading the next file.\n", i+1)))
	}
	f.Apply(delta(next(), id, "Looking at the package layout first.\n"))
	f.Apply(toolStart(next(), id, "c9", "list_dir", `{"path":"core"}`))
	f.Apply(toolEnd(next(), id, "c9", "list_dir", false))
	f.Apply(delta(next(), id, "core/ has twelve packages; the config loader is the one that reads TOML and it "))
	f.Apply(delta(next(), id, "ignores two errors from os.ReadFile, which this very long line should wrap to show.\nNext: "))
	f.Apply(delta(next(), id, "检查 \x1b[31mcolour\x1b[0m\tand tabs"))
	f.Focus()
	for range 40 {
		f.Key(key("down"))
	}
	f.Key(key("enter"))
	out := f.View(80, 12)
	checkFrame(t, out, 80, 12)
	golden(t, "fleet_detail", out)

	f.Key(key("up"))
	f.Key(key("up"))
	scrolled := f.View(80, 12)
	checkFrame(t, scrolled, 80, 12)
	golden(t, "fleet_detail_scrolled", scrolled)
}

func TestGoldenFleetDetailDone(t *testing.T) {
	t.Parallel()
	f := goldenFleet()
	f.Focus()
	for range 6 {
		f.Key(key("down"))
	}
	f.Key(key("enter"))
	out := f.View(100, 7)
	checkFrame(t, out, 100, 7)
	golden(t, "fleet_detail_over_budget", out)
}

func goldenGoal() *Goal {
	g := NewGoal()
	g.SetClock(clockAt(400))
	g.Apply(&event.GoalStarted{Meta: mt(1, "", 0), Goal: "g-20260304-1", Objective: "Make the test suite pass under -race\nand keep it green",
		Strategy: goal.StrategyResearch, MaxTurns: 40, MaxTokens: 2_000_000, MaxTimeMS: 3_600_000})
	items := `{"items":[{"content":"Reproduce the failures","status":"completed"},{"content":"Fix the races","status":"pending"},` +
		`{"content":"scheduler: guard the slot map","status":"completed","level":1},{"content":"bus: close subscribers once","status":"in_progress","level":1},` +
		`{"content":"Run the whole suite three times","status":"pending"}]}`
	g.Apply(todoUpdated(mt(2, "", 10), items))
	g.Apply(&event.GoalProgressed{Meta: mt(4, "", 300), Goal: "g-20260304-1", Turn: 7, Tokens: 412_345, ElapsedMS: 300_000,
		Report: "in_progress", Summary: "Two of three races fixed; the bus one remains.", Todo: 5, TodoDone: 2})
	return g
}

func TestGoldenGoal(t *testing.T) {
	t.Parallel()
	out := goldenGoal().View(72)
	checkLines(t, out, 72)
	golden(t, "goal", out)
}

func TestGoldenGoalBlocked(t *testing.T) {
	t.Parallel()
	g := goldenGoal()
	g.Apply(&event.GoalEnded{Meta: mt(5, "", 360), Goal: "g-20260304-1", Status: goal.StatusBlocked,
		Reason: "the staging database password is needed to run the integration suite", Turns: 8, Tokens: 460_000, ElapsedMS: 360_000})
	out := g.View(72)
	checkLines(t, out, 72)
	golden(t, "goal_blocked", out)
}

func TestGoldenMenu(t *testing.T) {
	t.Parallel()
	m := NewMenu()
	m.SetItems([]Item{
		{Label: "/compact", Detail: "fold the conversation now", Value: "/compact "},
		{Label: "/goal", Detail: "start a long autonomous task", Value: "/goal "},
		{Label: "/model", Detail: "switch the model", Value: "/model "},
		{Label: "docs", Value: "@docs/", Dir: true},
		{Label: "README.zh-CN.md", Detail: "12 KB", Value: "@README.zh-CN.md"},
		{Label: "/resume", Detail: "open a saved session", Value: "/resume "},
		{Label: "/new", Detail: "start a fresh session", Value: "/new"},
	})
	m.Move(4)
	out := m.View(50, 4)
	checkLines(t, out, 50)
	golden(t, "menu", out)
}
