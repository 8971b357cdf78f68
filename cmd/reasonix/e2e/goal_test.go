package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"reasonix/core/goal"
	"reasonix/core/provider/providertest"
)

// stepper is a fake model working through a goal of steps: at each goal
// turn it writes the next step's file (the steps done are the successful
// write_file results in the conversation) and reports in_progress, and
// once every step is written it reports complete. It logs every write it
// asks for, so a repeated mutation shows.
type stepper struct {
	mu     sync.Mutex
	steps  int
	writes map[string]int
	// hangAt, when positive, hangs the first request of the goal turn
	// that would write that step, and closes hung.
	hangAt int
	hung   chan struct{}
	// report overrides the turn: the goal report of turn n, or empty.
	report func(n int) string
}

func newStepper(steps int) *stepper {
	return &stepper{steps: steps, writes: map[string]int{}, hung: make(chan struct{})}
}

func (s *stepper) respond(r providertest.Request) providertest.Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := r.Messages[len(r.Messages)-1]
	if last.Role != "user" {
		return providertest.Turn{Text: "ok"}
	}
	turns, done := 0, 0
	for _, m := range r.Messages {
		switch {
		case m.Role == "user" && strings.HasPrefix(m.Content, "[Active goal"):
			turns++
		case m.Role == "tool" && m.Name == "write_file" && !strings.Contains(m.Content, "interrupted"):
			done++
		}
	}
	if s.report != nil {
		if rep := s.report(turns); rep != "" {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "goal", Arguments: rep}}}
		}
	}
	if done >= s.steps {
		return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "goal",
			Arguments: fmt.Sprintf(`{"status":"complete","summary":"all %d steps written"}`, s.steps)}}}
	}
	next := done + 1
	if next == s.hangAt {
		s.hangAt = 0
		close(s.hung)
		return providertest.Turn{Text: "never", Latency: -1}
	}
	path := fmt.Sprintf("steps/%03d.txt", next)
	s.writes[path]++
	return providertest.Turn{ToolCalls: []providertest.ToolCall{
		{Name: "write_file", Arguments: fmt.Sprintf(`{"path":%q,"content":"step %d\n"}`, path, next)},
		{Name: "goal", Arguments: fmt.Sprintf(`{"status":"in_progress","summary":"wrote step %d"}`, next)},
	}}
}

func (s *stepper) repeated() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for p, n := range s.writes {
		if n != 1 {
			out = append(out, fmt.Sprintf("%s×%d", p, n))
		}
	}
	return out
}

// goalE2E is an e2e home whose model has a window large enough that a
// long goal never compacts.
func goalE2E(t *testing.T, respond func(providertest.Request) providertest.Turn) *e2e {
	e := newE2E(t, providertest.WithResponder(respond))
	cfg := fmt.Sprintf(`default_model = "fake"

[[providers]]
name = "fake"
kind = "openai"
base_url = %q
model = "fake-model"
api_key_env = "FAKE_API_KEY"
context_window = 10000000
`, e.srv.URL())
	must(t, os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(cfg), 0o600))
	return e
}

func (e *e2e) goals(t *testing.T) []*goal.Record {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(e.home, "projects", "*", "goals"))
	must(t, err)
	if len(dirs) != 1 {
		return nil
	}
	all, err := goal.List(dirs[0])
	must(t, err)
	return all
}

// checkGoalRequests: the goal block is never in a system message, and each
// request extends the previous one byte for byte.
func checkGoalRequests(t *testing.T, reqs []providertest.Request) {
	t.Helper()
	for _, r := range reqs {
		for _, m := range r.Messages {
			if m.Role == "system" && strings.Contains(m.Content, "Active goal") {
				t.Fatal("the goal block reached a system message")
			}
		}
	}
	if !extendsEach(t, reqs) {
		t.Fatal("a request did not extend the previous one byte for byte")
	}
}

// TestE2EGoalLongRunCompletes: a 200-turn goal runs to completion headless
// and exits 0; every step is written once and the record says complete.
func TestE2EGoalLongRunCompletes(t *testing.T) {
	t.Parallel()
	s := newStepper(199)
	e := goalE2E(t, s.respond)
	r := e.run("run", "--goal", "write the 199 step files, then report complete", "--simple", "--permission-mode", "yolo")
	if r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	if rep := s.repeated(); len(rep) > 0 || len(s.writes) != 199 {
		t.Fatalf("writes %d, repeated %v", len(s.writes), rep)
	}
	goals := e.goals(t)
	if len(goals) != 1 || goals[0].Status != goal.StatusComplete || goals[0].Turns != 200 {
		t.Fatalf("goals %+v", goals)
	}
	checkGoalRequests(t, e.srv.Requests())
	status := e.run("goal", "status", "--json")
	var rec goal.Record
	if status.code != 0 || json.Unmarshal([]byte(status.stdout), &rec) != nil || rec.ID != goals[0].ID {
		t.Fatalf("goal status:\n%s", status)
	}
}

// TestE2EGoalBlockedThreeTimes: the same blocker, punctuated differently,
// ends the goal at its third report with exit 3.
func TestE2EGoalBlockedThreeTimes(t *testing.T) {
	t.Parallel()
	s := newStepper(5)
	reasons := []string{"Need the deploy token.", "need the deploy-token", "NEED THE DEPLOY TOKEN!"}
	s.report = func(n int) string {
		return fmt.Sprintf(`{"status":"blocked","summary":"waiting for the token","reason":%q}`, reasons[(n-1)%3])
	}
	e := goalE2E(t, s.respond)
	r := e.run("run", "--goal", "deploy the site")
	if r.code != 3 || !strings.Contains(r.stderr, "blocked 3 times") {
		t.Fatalf("run:\n%s", r)
	}
	if g := e.goals(t); len(g) != 1 || g[0].Status != goal.StatusBlocked || g[0].Turns != 3 {
		t.Fatalf("goals %+v", g)
	}
}

// TestE2EGoalTurnBudget: a turn budget ends the goal with exit 4 and the
// summary of where it stands.
func TestE2EGoalTurnBudget(t *testing.T) {
	t.Parallel()
	s := newStepper(50)
	e := goalE2E(t, s.respond)
	r := e.run("run", "--goal", "write fifty steps", "--max-turns", "5", "--permission-mode", "yolo")
	if r.code != 4 || !strings.Contains(r.stderr, "turn limit reached (5 turns)") || !strings.Contains(r.stderr, "wrote step 5") {
		t.Fatalf("run:\n%s", r)
	}
	if g := e.goals(t); len(g) != 1 || g[0].Status != goal.StatusLimit || g[0].Turns != 5 {
		t.Fatalf("goals %+v", g)
	}
	// Resumed with a larger budget, it goes on from step 6.
	r = e.run("goal", "resume", "--max-turns", "8", "--permission-mode", "yolo")
	if r.code != 4 || !strings.Contains(r.stderr, "turn limit reached (8 turns)") || !strings.Contains(r.stderr, "wrote step 8") {
		t.Fatalf("resume:\n%s", r)
	}
	if rep := s.repeated(); len(rep) > 0 || len(s.writes) != 8 {
		t.Fatalf("writes %v, repeated %v", s.writes, rep)
	}
}

// TestE2EGoalLease: rounds that only repeat a read renew nothing; the
// eighth brings one reassessment nudge, the sixteenth pauses the goal
// (exit 3), its work kept for a resume.
func TestE2EGoalLease(t *testing.T) {
	t.Parallel()
	respond := func(r providertest.Request) providertest.Turn {
		last := r.Messages[len(r.Messages)-1]
		if last.Role != "user" {
			return providertest.Turn{Text: "looked"}
		}
		return providertest.Turn{ToolCalls: []providertest.ToolCall{
			{Name: "read_file", Arguments: `{"path":"notes.txt"}`},
			{Name: "goal", Arguments: `{"status":"in_progress","summary":"reading the notes again"}`},
		}}
	}
	e := goalE2E(t, respond)
	must(t, os.WriteFile(filepath.Join(e.work, "notes.txt"), []byte("notes\n"), 0o644))
	r := e.run("run", "-o", "stream-json", "--goal", "understand the notes", "--simple")
	if r.code != 3 {
		t.Fatalf("run:\n%s", r)
	}
	nudges := 0
	for _, req := range e.srv.Requests() {
		if req.Messages[len(req.Messages)-1].Role == "user" && strings.Contains(req.LastUser(), goal.Reassess) {
			nudges++
		}
	}
	g := e.goals(t)
	if nudges != 1 || len(g) != 1 || g[0].Status != goal.StatusPaused || g[0].Turns != 1+goal.PauseAfter {
		t.Fatalf("nudges %d, goals %+v", nudges, g)
	}
	if !strings.Contains(r.stdout, `"type":"goal_ended"`) || !strings.Contains(r.stdout, `"nudged":true`) {
		t.Fatalf("stream:\n%s", r.stdout)
	}
}

// TestE2EGoalKillAndResume: a goal SIGKILLed half-way and resumed finishes
// with every step written exactly once, its turns carried over.
func TestE2EGoalKillAndResume(t *testing.T) {
	t.Parallel()
	skipWithoutSignals(t)
	s := newStepper(10)
	s.hangAt = 6
	e := goalE2E(t, s.respond)
	p := startLive(t, e, "run", "--goal", "investigate and write the ten step files", "--research", "--permission-mode", "yolo")
	select {
	case <-s.hung:
	case <-time.After(time.Minute):
		t.Fatalf("the goal never reached step 6\n%s", p.stderr)
	}
	pollUntil(t, 10*time.Second, "the goal journalled at five turns", func() bool {
		g := e.goals(t)
		return len(g) == 1 && g[0].Turns == 5
	})
	p.signal(t, syscall.SIGKILL)
	p.wait(t)
	g := e.goals(t)
	if len(g) != 1 || g[0].Status != goal.StatusRunning || g[0].Research == "" {
		t.Fatalf("after the kill: %+v", g)
	}
	if _, err := os.Stat(filepath.Join(g[0].Research, "heartbeat")); err != nil {
		t.Fatalf("autoresearch dir: %v", err)
	}

	r := e.run("goal", "resume", "--permission-mode", "yolo")
	if r.code != 0 {
		t.Fatalf("resume:\n%s", r)
	}
	if rep := s.repeated(); len(rep) > 0 || len(s.writes) != 10 {
		t.Fatalf("writes %v, repeated %v", s.writes, rep)
	}
	for i := 1; i <= 10; i++ {
		if _, err := os.Stat(filepath.Join(e.work, fmt.Sprintf("steps/%03d.txt", i))); err != nil {
			t.Fatal(err)
		}
	}
	g = e.goals(t)
	if len(g) != 1 || g[0].Status != goal.StatusComplete || g[0].Turns != 11 {
		t.Fatalf("after the resume: %+v", g)
	}
	for _, f := range []string{"task.md", "plan.md", "progress.md", "findings.md", "directions.md", "iterations.md", "heartbeat"} {
		b, err := os.ReadFile(filepath.Join(g[0].Research, f))
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %q %v", f, b, err)
		}
	}
	if list := e.run("goal", "list"); list.code != 0 || !strings.Contains(list.stdout, g[0].ID) {
		t.Fatalf("goal list:\n%s", list)
	}
}

// TestE2EGoalStreamCommand: a goal command on the JSON input stream runs
// the goal to its end; its events come in order, turn_done last.
func TestE2EGoalStreamCommand(t *testing.T) {
	t.Parallel()
	s := newStepper(2)
	e := goalE2E(t, s.respond)
	st := e.stream("--permission-mode", "yolo")
	st.send(`{"type":"goal","objective":"write two steps","strategy":"simple"}`)
	st.expect("goal_started", func(ev map[string]any) bool { return ev["strategy"] == "simple" })
	st.expect("goal_progress", nil)
	end := st.expect("goal_ended", nil)
	if end["status"] != "complete" || end["turns"] != 3.0 {
		t.Fatalf("goal_ended %v", end)
	}
	st.expect("turn_done", func(ev map[string]any) bool { return ev["status"] == "ok" })
	if r := st.finish(); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}
