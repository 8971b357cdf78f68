package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"reasonix/actors/event"
	"reasonix/cmd/reasonix/internal/fleetcmd"
	"reasonix/core/journal"
	"reasonix/core/provider/providertest"
	"reasonix/scheduler"
)

// subagentSystem tells a subagent's request from the parent's: subagents
// without a profile run on the generic subagent prompt.
func isSubagent(req providertest.Request) bool {
	return len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You are a subagent")
}

// fleetArgs builds fleet arguments for n tasks "task <i>"; extra adds
// fields to task i.
func fleetArgs(n int, extra func(i int) string) string {
	var tasks []string
	for i := 1; i <= n; i++ {
		x := ""
		if extra != nil {
			x = extra(i)
		}
		tasks = append(tasks, fmt.Sprintf(`{"prompt":"task %d"%s}`, i, x))
	}
	return `{"tasks":[` + strings.Join(tasks, ",") + `]}`
}

func toolResults(req providertest.Request) []providertest.Message {
	var out []providertest.Message
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out = append(out, m)
		}
	}
	return out
}

// TestE2EFleetOf64WithFailures runs a 64-task fleet through the real binary:
// each subagent takes three model turns (two read-only tool steps, then an
// answer), task 7's tool panics and task 13's model stream is cut. The
// other 62 succeed, the two fail with clear errors, the fleet result lists
// all 64 in input order, and the parent turn carries on.
func TestE2EFleetOf64WithFailures(t *testing.T) {
	t.Parallel()
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if !isSubagent(req) {
			if len(toolResults(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: fleetArgs(64, nil)}}}
			}
			return providertest.Turn{Text: "parent summarised the fleet"}
		}
		task, steps := req.FirstUser(), len(toolResults(req))
		switch {
		case task == "task 7" && steps == 0:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "e2e_panic", Arguments: `{}`}}}
		case task == "task 13" && steps == 1:
			return providertest.Turn{Text: "this stream breaks off", CutAfterEvents: 2}
		case steps == 0:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "ls", Arguments: `{}`}}}
		case steps == 1:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "glob", Arguments: `{"pattern":"*"}`}}}
		}
		return providertest.Turn{Text: "done with " + task}
	}))
	e.writeConfig("max_retries = 0\n\n[agent]\nmax_subagent_concurrency = 16\n")
	r := e.run("run", "--output-format", "stream-json", "fan out")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	var last providertest.Request
	for _, req := range e.srv.Requests() {
		if !isSubagent(req) {
			last = req
		}
	}
	res := toolResults(last)
	if len(res) != 1 || res[0].ToolCallID != "fan" {
		t.Fatalf("parent's final request tool results = %+v", res)
	}
	out := res[0].Content
	if !strings.HasPrefix(out, "64 tasks: 62 ok, 2 failed") {
		t.Fatalf("fleet summary:\n%s", out)
	}
	at := 0
	for i := 1; i <= 64; i++ {
		head := fmt.Sprintf("## Task %d (f1.%d): ", i, i)
		next := strings.Index(out[at:], head)
		if next < 0 {
			t.Fatalf("task %d missing or out of order", i)
		}
		at += next
		line := out[at : at+strings.Index(out[at:], "\n")]
		switch i {
		case 7:
			if !strings.Contains(line, "failed") || !strings.Contains(out[at:], "e2e_panic crashed") {
				t.Errorf("task 7: %s", out[at:min(len(out), at+300)])
			}
		case 13:
			if !strings.Contains(line, "failed") || !strings.Contains(out[at:at+300], "stream") {
				t.Errorf("task 13: %s", out[at:min(len(out), at+300)])
			}
		default:
			if !strings.Contains(line, "ok, 3 steps") || !strings.Contains(out[at:], fmt.Sprintf("done with task %d\n", i)) && i != 64 {
				t.Errorf("task %d: %s", i, line)
			}
		}
	}
	if !strings.Contains(r.stdout, `"type":"turn_done"`) || !strings.Contains(r.stdout, "parent summarised the fleet") {
		t.Errorf("parent turn did not carry on:\n%s", r.stdout[max(0, len(r.stdout)-500):])
	}
	// Every task's progress is visible with its task id.
	for _, kind := range []string{"task_queued", "task_started", "task_done"} {
		if n := strings.Count(r.stdout, `"type":"`+kind+`"`); n != 64 {
			t.Errorf("%d %s events, want 64", n, kind)
		}
	}
	if ts := e.transcripts(); len(ts) != 65 {
		t.Errorf("%d transcripts, want the parent's and 64 subagents'", len(ts))
	}
}

// TestFleetStatusNamesWorkers: for a fleet whose tasks ran on worker
// hosts, `fleet status` says where each task's last attempt ran and which
// attempt that was, from the journal's start records.
func TestFleetStatusNamesWorkers(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	ctx := context.Background()
	j, err := journal.Open(ctx, e.home)
	if err != nil {
		t.Fatal(err)
	}
	const key = "s1/f1-1"
	sub := scheduler.Submission{Tasks: []scheduler.Task{{ID: "f1.1", Fleet: "f1"}, {ID: "f1.2", Fleet: "f1"}, {ID: "f1.3", Fleet: "f1"}}}
	for _, id := range []string{"f1.1", "f1.2", "f1.3"} {
		b, _ := json.Marshal(event.TaskSpec{ID: id, Prompt: "do " + id})
		sub.Specs = append(sub.Specs, b)
	}
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	recs := []journal.Record{
		{Kind: journal.KindSubmit, Data: raw(sub)},
		{Kind: journal.KindStart, Task: "f1.1", Data: raw(map[string]any{"worker": "w1"})},
		{Kind: journal.KindStart, Task: "f1.2"},
		{Kind: journal.KindStart, Task: "f1.3", Data: raw(map[string]any{"worker": "w1"})},
		{Kind: journal.KindRequeue, Task: "f1.3", Data: raw(map[string]any{"worker": "w1", "attempt": 2, "why": "worker w1 lost"})},
		{Kind: journal.KindStart, Task: "f1.3", Data: raw(map[string]any{"worker": "w2", "attempt": 2})},
	}
	for _, r := range recs {
		r.Fleet, r.At = key, time.Now()
		if _, err := j.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	must(t, j.Close())

	r := e.run("fleet", "status", key, "--json")
	var st fleetcmd.FleetStatusJSON
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil || len(st.Tasks) != 3 {
		t.Fatalf("fleet status --json:\n%s", r)
	}
	want := []struct {
		worker  string
		attempt int
	}{{"w1", 0}, {"", 0}, {"w2", 2}}
	for i, w := range want {
		if got := st.Tasks[i]; got.Worker != w.worker || got.Attempt != w.attempt || got.State != "running" {
			t.Errorf("task %d = %+v, want running on %q attempt %d", i, got, w.worker, w.attempt)
		}
	}
	r = e.run("fleet", "status", key)
	if r.code != 0 || !strings.Contains(r.stdout, "WORKER") || !regexp.MustCompile(`f1\.3\s+running\s+0\s+w2\s+2\s`).MatchString(r.stdout) ||
		!regexp.MustCompile(`f1\.2\s+running\s+0\s+-\s+1\s`).MatchString(r.stdout) {
		t.Errorf("fleet status:\n%s", r)
	}
}
