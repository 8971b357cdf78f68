package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/cmd/reasonix/internal/fleetcmd"
	"reasonix/core/provider/providertest"
)

// parentOnly are the parent's requests, in order.
func parentOnly(reqs []providertest.Request) []providertest.Request {
	var out []providertest.Request
	for _, r := range reqs {
		if !isSubagent(r) {
			out = append(out, r)
		}
	}
	return out
}

// backgroundResults lists the first lines of the background results a
// request carries, in order.
func backgroundResults(r providertest.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "user" && strings.HasPrefix(m.Content, "[Background task ") {
			out = append(out, strings.SplitN(m.Content, "\n", 2)[0])
		}
	}
	return out
}

// TestE2EBackgroundTasksWhileTheParentWorks: through the real binary, the
// parent dispatches 8 background tasks of 600 ms and then makes 3 more
// tool steps, all sent while the tasks run (they are held until the
// parent's last step is sent); the run does not exit with its first
// turn but waits for the tasks, each result reaches the parent once, as
// an appended message, every parent request extends the one before it
// byte for byte, and the run exits 0 with the answer of the turn that
// read them.
func TestE2EBackgroundTasksWhileTheParentWorks(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var once sync.Once
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if isSubagent(req) {
			select {
			case <-release:
			case <-time.After(30 * time.Second):
			}
			return providertest.Turn{Text: "answer to " + req.FirstUser(), Latency: 600 * time.Millisecond}
		}
		steps := len(toolResults(req))
		switch {
		case steps == 0:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "bg", Name: "fleet",
				Arguments: strings.Replace(fleetArgs(8, func(i int) string { return fmt.Sprintf(`,"name":"t%d"`, i) }), `{"tasks"`, `{"background":true,"tasks"`, 1)}}}
		case steps < 4:
			if steps == 3 {
				once.Do(func() { close(release) })
			}
			// Three different calls, so the loop guard has nothing to say.
			args := []string{`{}`, `{"path":"."}`, `{"path":"./"}`}[steps-1]
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: fmt.Sprintf("ls%d", steps), Name: "ls", Arguments: args}}}
		}
		if n := len(backgroundResults(req)); n > 0 {
			return providertest.Turn{Text: fmt.Sprintf("read %d background results", n)}
		}
		return providertest.Turn{Text: "the tasks run in the background"}
	}))
	e.writeConfig("max_retries = 0\n\n[agent]\nmax_subagent_concurrency = 8\n")
	r := e.run("run", "--output-format", "stream-json", "fan out and keep working")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	parent := parentOnly(e.srv.Requests())
	if !extendsEach(t, parent) {
		t.Fatal("a parent request did not extend the one before it byte for byte")
	}
	if len(parent) < 6 {
		t.Fatalf("the parent sent %d requests; want its 5 and a turn for the results", len(parent))
	}
	for i := 1; i <= 3; i++ {
		if got := backgroundResults(parent[i]); len(got) != 0 {
			t.Fatalf("request %d, sent while the tasks were held, already carries %v", i, got)
		}
	}
	got := backgroundResults(parent[len(parent)-1])
	seen := map[string]bool{}
	for _, h := range got {
		if seen[h] {
			t.Fatalf("result %q delivered twice: %v", h, got)
		}
		seen[h] = true
	}
	for i := 1; i <= 8; i++ {
		if want := fmt.Sprintf("[Background task f1.%d (t%d) ok]", i, i); !seen[want] {
			t.Errorf("result %s missing from the parent's conversation: %v", want, got)
		}
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, `"type":"turn_done"`) || !strings.Contains(last, `read 8 background results`) {
		var kinds []string
		for _, l := range lines {
			if i := strings.Index(l, `"type":"`); i >= 0 {
				k := l[i+8:]
				kinds = append(kinds, k[:strings.Index(k, `"`)])
			}
		}
		t.Errorf("the run's last event is not the turn that read all 8 results: %s\n%v\n%s", last, kinds, r.stderr)
	}
	if n := strings.Count(r.stdout, `"type":"background_result"`); n != 8 {
		t.Errorf("%d background_result events, want 8", n)
	}
}

// TestE2EBackgroundFleetSurvivesSIGKILL: a run whose 8 background tasks
// have their last four hang is SIGKILLed once four are done; `fleet
// resume` runs only the other four and gives the parent's conversation
// the results it had not read, so after `run --continue` the parent holds
// each of the 8 results exactly once.
func TestE2EBackgroundFleetSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	e, resumed := killHalfwayBackground(t, false)
	r := e.run("fleet", "list", "--json")
	var list []fleetcmd.FleetJSON
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list) != 1 || list[0].Finished != 4 {
		t.Fatalf("fleet list:\n%s", r)
	}
	before := subagentAsks(e)
	resumed.Store(true)
	if r = e.run("fleet", "resume", list[0].ID); r.code != 0 || !strings.HasPrefix(r.stdout, "8 tasks: 8 ok") {
		t.Fatalf("fleet resume:\n%s", r)
	}
	checkAskedOnce(t, before, subagentAsks(e))
	continueReadsEachOnce(t, e)
}

// TestE2EBackgroundContinueReattaches: `run --continue` of a parent killed
// while its background fleet ran finishes the fleet first, without asking
// a finished task again, and the parent holds each result once.
func TestE2EBackgroundContinueReattaches(t *testing.T) {
	t.Parallel()
	e, resumed := killHalfwayBackground(t, true)
	before := subagentAsks(e)
	resumed.Store(true)
	continueReadsEachOnce(t, e)
	checkAskedOnce(t, before, subagentAsks(e))
}

// subagentAsks counts the fake's subagent requests by task prompt.
func subagentAsks(e *e2e) map[string]int {
	n := map[string]int{}
	for _, req := range e.srv.Requests() {
		if isSubagent(req) {
			n[req.FirstUser()]++
		}
	}
	return n
}

// continueReadsEachOnce continues the parent and checks that its request
// holds each of the 8 results exactly once.
func continueReadsEachOnce(t *testing.T, e *e2e) {
	t.Helper()
	r := e.run("run", "--continue", "--output-format", "json", "what came back?")
	if r.code != 0 || !strings.Contains(r.stdout, "read 8 background results") {
		t.Fatalf("continued parent:\n%s", r)
	}
	var last providertest.Request
	for _, req := range e.srv.Requests() {
		if !isSubagent(req) {
			last = req
		}
	}
	seen := map[string]int{}
	for _, h := range backgroundResults(last) {
		seen[h]++
	}
	for i := 1; i <= 8; i++ {
		if h := fmt.Sprintf("[Background task f1.%d ok]", i); seen[h] != 1 {
			t.Errorf("%s is in the parent's conversation %d times, want once (%v)", h, seen[h], seen)
		}
	}
	notes := 0
	for _, m := range last.Messages {
		if m.Role == "user" && m.Content == "[Message from f1.5]\na note from task 5" {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("task 5's message to the parent is in its conversation %d times, want once", notes)
	}
}

// killHalfwayBackground runs a parent whose 8 background tasks have their
// last four hang, SIGKILLs it once four are done, and returns the e2e and
// the switch that lets the hanging tasks answer on the next run. Task 5
// first sends its parent a message (the first four end only once it is
// sent), which the parent reads before the kill or, with wakeup false
// (no turn of its own for it), only after the resume.
func killHalfwayBackground(t *testing.T, wakeup bool) (*e2e, *atomic.Bool) {
	t.Helper()
	resumed := &atomic.Bool{}
	sent := make(chan struct{})
	var once sync.Once
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if !isSubagent(req) {
			switch {
			case len(toolResults(req)) == 0:
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "bg", Name: "fleet",
					Arguments: strings.Replace(fleetArgs(8, nil), `{"tasks"`, `{"background":true,"tasks"`, 1)}}}
			case len(backgroundResults(req)) > 0:
				return providertest.Turn{Text: fmt.Sprintf("read %d background results", len(backgroundResults(req)))}
			}
			return providertest.Turn{Text: "the tasks run in the background"}
		}
		task := req.FirstUser()
		switch {
		case task == "task 5" && len(toolResults(req)) == 0 && !resumed.Load():
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "note", Name: "send_message", Arguments: `{"to":"parent","text":"a note from task 5"}`}}}
		case task == "task 5" && !resumed.Load():
			once.Do(func() { close(sent) })
			return providertest.Turn{Latency: time.Hour, Text: "never"}
		case (task == "task 6" || task == "task 7" || task == "task 8") && !resumed.Load():
			return providertest.Turn{Latency: time.Hour, Text: "never"}
		case !resumed.Load():
			select {
			case <-sent:
			case <-time.After(20 * time.Second):
			}
		}
		return providertest.Turn{Text: "done with " + task}
	}))
	e.writeConfig(fmt.Sprintf("\n[agent]\nmax_subagent_concurrency = 8\nbackground_wakeup = %v\n", wakeup))
	killAfterTasks(t, e, 4, "fan out in the background")
	return e, resumed
}
