package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
)

// The tests in this file hold `reasonix run` to what SPEC.md promises for
// Ctrl-C: the run exits 130 within interruptPromise of the signal that
// ends it, and no process it started is left behind, whether the command
// was the run's own or a subagent's, and whether bash runs jailed or not.

// interruptPromise is the user-facing bound on how long Ctrl-C may take to
// end a run. It is a promise, not a benchmark: the runs here take a small
// fraction of it.
const interruptPromise = 2 * time.Second

// sandboxOff turns the bash sandbox off, so a group kill that misses a
// process cannot be masked by bubblewrap tearing its jail down.
const sandboxOff = "\n[sandbox]\nbash = \"off\"\n"

// sleepMarker returns a sleep duration unique to one test: the test finds
// its processes by their exact argv in /proc, which works for processes in
// a jail's PID namespace too.
func sleepMarker(prefix int) string {
	return fmt.Sprintf("%d.%09d", prefix, rand.IntN(1_000_000_000))
}

// bashSleep is a bash call whose sleep runs as the shell's child, not in
// its place, so only a kill of the whole group reaches it.
func bashSleep(marker string) providertest.ToolCall {
	args, _ := json.Marshal(map[string]string{"command": "sleep " + marker + "; true"})
	return providertest.ToolCall{Name: "bash", Arguments: string(args)}
}

// e2eSleep is a call of the test-only e2e_sleep tool (e2e_tools_sleep.go),
// which returns on cancellation and abandons its sleep, or with hang never
// returns at all.
func e2eSleep(marker string, hang bool) providertest.ToolCall {
	args, _ := json.Marshal(map[string]any{"seconds": marker, "hang": hang})
	return providertest.ToolCall{Name: "e2e_sleep", Arguments: string(args)}
}

// sleepRun starts `reasonix run` with a model that calls sleeper once, in
// the run itself when tasks is 0 or in each of a fleet of tasks, and
// returns it once all the sleeps run, with its e2e. writers makes the tasks writers, each
// claiming its own path.
func sleepRun(t *testing.T, config string, tasks int, writers bool, sleeper providertest.ToolCall, marker string) (*e2e, *liveProc) {
	t.Helper()
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if tasks > 0 && !isSubagent(req) {
			var extra func(int) string
			if writers {
				extra = func(i int) string { return fmt.Sprintf(`,"write_paths":["out/%d"]`, i) }
			}
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: fleetArgs(tasks, extra)}}}
		}
		return providertest.Turn{ToolCalls: []providertest.ToolCall{sleeper}}
	}))
	if tasks > 0 {
		config += fmt.Sprintf("\n[agent]\nmax_subagent_concurrency = %d\nmax_parallel_writers = %d\n", tasks, tasks)
	}
	e.writeConfig(config)
	p := startLive(t, e, "run", "sleep")
	want := max(1, tasks)
	pollUntil(t, e2eExitBound, fmt.Sprintf("%d sleeps running", want), func() bool {
		if strings.Contains(p.stderr.String(), "failed") {
			t.Fatalf("a call failed:\n%s", p.stderr)
		}
		// A subagent's failed call shows only in the model's next request.
		for _, req := range e.srv.Requests() {
			for _, m := range toolResults(req) {
				if strings.HasPrefix(m.Content, "Error:") {
					t.Fatalf("a call failed: %s", m.Content)
				}
			}
		}
		return len(sleepersWithArg(marker)) == want
	})
	return e, p
}

// interruptAndMeasure sends SIGINT, checks the run exits 130 within
// interruptPromise, then that no sleeper with marker is left.
func interruptAndMeasure(t *testing.T, p *liveProc, marker string) time.Duration {
	t.Helper()
	start := time.Now()
	p.signal(t, os.Interrupt)
	code := p.wait(t)
	took := time.Since(start)
	if code != 130 {
		t.Fatalf("exit %d, want 130\n--- stderr\n%s", code, p.stderr)
	}
	if took > interruptPromise {
		t.Errorf("exited %s after the signal, promised within %s", took, interruptPromise)
	}
	// The sleeps were killed before the exit; only the reaping of the
	// orphans by init is waited for here.
	pollUntil(t, e2eExitBound, "no sleeper left", func() bool { return len(sleepersWithArg(marker)) == 0 })
	return took
}

// TestE2ESigintExitsPromptly interrupts a run while its sleeps run: bash's
// in the run itself, jailed or not, bash's in each subagent of a jailed
// fleet, and, unjailed, where subagents have no bash, a tool's that the
// tool abandons when cancelled.
func TestE2ESigintExitsPromptly(t *testing.T) {
	t.Parallel()
	skipWithoutSignals(t)
	if runtime.GOOS != "linux" {
		t.Skip("finds the sleepers through /proc")
	}
	const fleet = 8
	tests := []struct {
		name   string
		jailed bool
		tasks  int // 0: the run calls the tool itself
		// abandon uses e2e_sleep, which returns on cancellation and
		// leaves its sleep running, instead of bash.
		abandon bool
	}{
		{name: "bash sandbox off"},
		{name: "abandoned sleep sandbox off", abandon: true},
		{name: "fleet of abandoned sleeps sandbox off", tasks: fleet, abandon: true},
		{name: "bash jailed", jailed: true},
		{name: "fleet of bash jailed", jailed: true, tasks: fleet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			config := sandboxOff
			if tt.jailed {
				if _, err := exec.LookPath("bwrap"); err != nil {
					t.Skip("the jailed variant needs bubblewrap: bwrap is not on PATH")
				}
				config = ""
			}
			marker := sleepMarker(400)
			sleeper := bashSleep(marker)
			if tt.abandon {
				sleeper = e2eSleep(marker, false)
			}
			// A subagent runs bash only as a writer jailed to its paths.
			_, p := sleepRun(t, config, tt.tasks, tt.jailed, sleeper, marker)
			took := interruptAndMeasure(t, p, marker)
			t.Logf("%d sleep(s) stopped, run exited %s after SIGINT", max(1, tt.tasks), took)
		})
	}
}

// TestE2ESecondSigintKillsWhatTheFirstLeft interrupts a run whose tool
// hangs, so the first SIGINT cannot end it: the second must end it within
// the promise, though the tool never returns, and the sleep the tool's
// shell started, which no parent-death signal reaches, must not outlive it.
func TestE2ESecondSigintKillsWhatTheFirstLeft(t *testing.T) {
	t.Parallel()
	skipWithoutSignals(t)
	if runtime.GOOS != "linux" {
		t.Skip("finds the sleepers through /proc")
	}
	tests := []struct {
		name  string
		tasks int
	}{
		{name: "one tool"},
		{name: "fleet", tasks: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := sleepMarker(401)
			e, p := sleepRun(t, sandboxOff, tt.tasks, false, e2eSleep(marker, true), marker)

			p.signal(t, os.Interrupt)
			// The log is the only sign that the first signal was taken;
			// sent before, the second would merge with it.
			logPath := filepath.Join(e.home, "logs", "reasonix.log")
			pollUntil(t, e2eExitBound, "the first interrupt logged", func() bool {
				b, _ := os.ReadFile(logPath)
				return strings.Contains(string(b), "interrupt: cancelling the turn")
			})
			select {
			case err := <-p.exited:
				t.Fatalf("the first SIGINT ended the run (%v): the tool did not hold it up\n%s", err, p.stderr)
			default:
			}
			if n := len(sleepersWithArg(marker)); n != max(1, tt.tasks) {
				t.Fatalf("%d sleeps left after the first SIGINT: it was not ignored", n)
			}
			took := interruptAndMeasure(t, p, marker)
			t.Logf("second SIGINT: run exited %s after it", took)
		})
	}
}
