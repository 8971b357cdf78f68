package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/core/goal"
	"reasonix/core/provider/providertest"
)

// runawayModel never ends a turn by itself: every request asks for one
// more read of notes.txt, each with other arguments (so each is new to the
// lease and no loop), and reports tokens tokens of usage. It gives up and
// answers after limit requests or once the run has gone on for giveUp, so
// a budget that does not hold fails its test rather than hanging it.
func runawayModel(tokens, limit int, giveUp time.Duration) func(providertest.Request) providertest.Turn {
	var n atomic.Int32
	start := time.Now()
	return func(providertest.Request) providertest.Turn {
		k := int(n.Add(1))
		u := &providertest.Usage{PromptTokens: tokens - tokens/10, CompletionTokens: tokens / 10}
		if k > limit || time.Since(start) > giveUp {
			return providertest.Turn{Usage: u, Text: "giving up"}
		}
		return providertest.Turn{Usage: u, ToolCalls: []providertest.ToolCall{
			{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"notes.txt","offset":1,"limit":%d}`, k)}}}
	}
}

func writeNotes(t *testing.T, e *e2e) {
	t.Helper()
	must(t, os.WriteFile(filepath.Join(e.work, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644))
}

// TestE2EGoalTokenBudgetInsideTurn: a runaway goal turn at --max-tokens
// 50000, 7,000 tokens a request, stops with at most one request past the
// one that reached the ceiling (the eighth), exit 4, the budget named.
func TestE2EGoalTokenBudgetInsideTurn(t *testing.T) {
	t.Parallel()
	e := goalE2E(t, runawayModel(7000, 60, time.Minute))
	writeNotes(t, e)
	r := e.run("run", "--goal", "read the notes forever", "--simple", "--max-tokens", "50000")
	// Exit 4 is exitGoalLimit: a goal reached a limit (docs/SPEC.md).
	if r.code != 4 || !strings.Contains(r.stderr, "token budget reached") {
		t.Fatalf("run:\n%s", r)
	}
	const reaching = (50000 + 6999) / 7000
	t.Logf("%d requests; the budget was reached by request %d", e.srv.Count(), reaching)
	if n := e.srv.Count(); n > reaching+1 {
		t.Fatalf("%d requests; the budget was reached by request %d", n, reaching)
	}
	g := e.goals(t)
	if len(g) != 1 || g[0].Status != goal.StatusLimit || g[0].Tokens < 50000 || g[0].Tokens > 50000+2*7000 {
		t.Fatalf("goals %+v", g)
	}
}

// TestE2EGoalTimeBudgetInsideTurn: a runaway goal at --max-time 5s has
// ended, process and all, by 6 s.
func TestE2EGoalTimeBudgetInsideTurn(t *testing.T) {
	t.Parallel()
	e := goalE2E(t, runawayModel(10, 1<<30, 20*time.Second))
	// No step guard ends the turn on the way: the budget alone must.
	cfg, err := os.ReadFile(filepath.Join(e.home, "config.toml"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(e.home, "config.toml"), append(cfg, "\n[agent]\nmax_steps = 0\n"...), 0o600))
	writeNotes(t, e)
	start := time.Now()
	r := e.run("run", "--goal", "read the notes forever", "--simple", "--max-time", "5s")
	took := time.Since(start)
	t.Logf("ran %s, %d requests", took, e.srv.Count())
	// Exit 4 is exitGoalLimit (docs/SPEC.md).
	if r.code != 4 || !strings.Contains(r.stderr, "time budget reached") {
		t.Fatalf("run:\n%s", r)
	}
	if took > 6*time.Second {
		t.Fatalf("the run took %s; its budget was 5s", took)
	}
	if g := e.goals(t); len(g) != 1 || g[0].Status != goal.StatusLimit {
		t.Fatalf("goals %+v", g)
	}
}

// loopingModel asks for the same read every time.
func loopingModel(providertest.Request) providertest.Turn {
	return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "read_file", Arguments: `{"path":"notes.txt"}`}}}
}

// TestE2ELoopGuard: a model repeating one call ends the turn on its third
// identical call: exit 1, status loop, the reason in the result and on
// stderr, no fourth request.
func TestE2ELoopGuard(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, providertest.WithResponder(loopingModel))
			writeNotes(t, e)
			r := e.run("run", "-o", format, "read the notes")
			if r.code != 1 || e.srv.Count() != 3 {
				t.Fatalf("%d requests:\n%s", e.srv.Count(), r)
			}
			const why = "the model made the same read_file call 3 times in a row"
			if format == "text" {
				if !strings.Contains(r.stderr, why) {
					t.Fatalf("stderr:\n%s", r.stderr)
				}
				return
			}
			var out struct {
				Status, Error string
				Steps         int
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Status != "loop" || !strings.Contains(out.Error, why) || out.Steps != 3 {
				t.Fatalf("result %+v (%v):\n%s", out, err, r)
			}
		})
	}
}

// TestE2EStepGuard: agent.max_steps ends a headless turn at that many
// steps, exit 1 and status max_steps, naming the key.
func TestE2EStepGuard(t *testing.T) {
	t.Parallel()
	e := newE2E(t, providertest.WithResponder(runawayModel(10, 60, time.Minute)))
	e.writeConfig("\n[agent]\nmax_steps = 5\n")
	writeNotes(t, e)
	r := e.run("run", "-o", "json", "read the notes")
	var out struct{ Status, Error string }
	if r.code != 1 || json.Unmarshal([]byte(r.stdout), &out) != nil || out.Status != "max_steps" ||
		!strings.Contains(out.Error, "agent.max_steps = 5") || e.srv.Count() != 5 {
		t.Fatalf("%d requests, result %+v:\n%s", e.srv.Count(), out, r)
	}
}

// TestE2EGuardAsksOnTheStream: with a frontend on stdin, the step guard
// asks whether the turn goes on (once_only); "once" lets it take as many
// steps again, "deny" ends it.
func TestE2EGuardAsksOnTheStream(t *testing.T) {
	t.Parallel()
	e := newE2E(t, providertest.WithResponder(runawayModel(10, 60, time.Minute)))
	e.writeConfig("\n[agent]\nmax_steps = 2\n")
	writeNotes(t, e)
	s := e.stream()
	s.send(`{"type":"prompt","text":"read the notes"}`)
	for i, decision := range []string{"once", "deny"} {
		ask := s.expect("approval_requested", nil)
		if ask["tool"] != "continue_turn" || ask["once_only"] != true || !strings.Contains(ask["reason"].(string), "agent.max_steps = 2") {
			t.Fatalf("question %d: %v", i+1, ask)
		}
		s.send(`{"type":"approve","id":` + quote(ask["request_id"].(string)) + `,"decision":"` + decision + `"}`)
	}
	done := s.expect("turn_done", nil)
	if done["status"] != "max_steps" || !strings.Contains(done["error"].(string), "the user chose to stop") || e.srv.Count() != 4 {
		t.Fatalf("turn_done %v after %d requests", done, e.srv.Count())
	}
	if r := s.finish(); r.code != 1 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}
