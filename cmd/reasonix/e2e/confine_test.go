package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

// The tests in this file check, through the real binary and the model fake,
// that what confines the parent confines its fleet's subagents too: deny
// rules, write_paths (for file tools and for bash), the scheduler's caps
// and the task timeout.

// confTask is one task of a scripted fleet. A nil claims makes a reader;
// an empty, non-nil one a writer that claims the whole workspace.
type confTask struct {
	prompt string
	claims []string
	steps  []providertest.Turn // the subagent's turns before its final answer
}

// fleetCall renders the tasks as one fleet call's arguments.
func fleetCall(tasks []confTask) string {
	type wire struct {
		Prompt     string    `json:"prompt"`
		WritePaths *[]string `json:"write_paths,omitempty"`
	}
	var list []wire
	for _, t := range tasks {
		w := wire{Prompt: t.prompt}
		if t.claims != nil {
			w.WritePaths = &t.claims
		}
		list = append(list, w)
	}
	b, _ := json.Marshal(map[string]any{"tasks": list})
	return string(b)
}

// fleetResponder answers the parent with one fleet call of tasks and then
// a closing line, and each subagent, told apart by its prompt, with its
// scripted steps and then "done: <prompt>".
func fleetResponder(tasks []confTask) func(providertest.Request) providertest.Turn {
	byPrompt := map[string]confTask{}
	for _, t := range tasks {
		byPrompt[t.prompt] = t
	}
	args := fleetCall(tasks)
	return func(req providertest.Request) providertest.Turn {
		if !isSubagent(req) {
			if len(toolResults(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: args}}}
			}
			return providertest.Turn{Text: "parent done"}
		}
		t := byPrompt[req.FirstUser()]
		if step := len(assistantTurns(req)); step < len(t.steps) {
			return t.steps[step]
		}
		return providertest.Turn{Text: "done: " + t.prompt}
	}
}

// assistantTurns counts the assistant messages a request carries: how many
// turns the subagent has taken so far.
func assistantTurns(req providertest.Request) []providertest.Message {
	var out []providertest.Message
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			out = append(out, m)
		}
	}
	return out
}

// toolCall is one scripted tool call with its arguments built from a map.
func toolCall(id, name string, args map[string]string) providertest.ToolCall {
	b, _ := json.Marshal(args)
	return providertest.ToolCall{ID: id, Name: name, Arguments: string(b)}
}

// subagentResults returns the tool results, by call id, that the subagent
// running prompt sent back to the model.
func subagentResults(t *testing.T, e *e2e, prompt string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, req := range e.srv.Requests() {
		if isSubagent(req) && req.FirstUser() == prompt {
			for _, m := range toolResults(req) {
				out[m.ToolCallID] = m.Content
			}
		}
	}
	return out
}

// fleetResult returns the fleet tool's result as the parent's model saw it.
func fleetResult(t *testing.T, e *e2e) string {
	t.Helper()
	for _, req := range e.srv.Requests() {
		if isSubagent(req) {
			continue
		}
		for _, m := range toolResults(req) {
			if m.ToolCallID == "fan" {
				return m.Content
			}
		}
	}
	t.Fatal("the parent never received the fleet result")
	return ""
}

// wantResult checks one tool result by its prefix or a fragment.
func wantResult(t *testing.T, results map[string]string, id, want string) {
	t.Helper()
	got, ok := results[id]
	if !ok {
		t.Errorf("no result for call %s; results %q", id, results)
		return
	}
	if !strings.Contains(got, want) {
		t.Errorf("call %s = %q, want it to contain %q", id, got, want)
	}
}

// wantFile checks a workspace file's content; "" means it must not exist.
func wantFile(t *testing.T, e *e2e, rel, want string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.work, filepath.FromSlash(rel)))
	switch {
	case want == "" && !os.IsNotExist(err):
		t.Errorf("%s exists (%q, %v); the call that would write it must not have run", rel, b, err)
	case want != "" && (err != nil || string(b) != want):
		t.Errorf("%s = %q, %v; want %q", rel, b, err, want)
	}
}

// TestE2EFleetSubagentsObeyDenyRules: deny rules from the config and from
// --deny reach every subagent. A denied write_file, bash or read_file in a
// subagent comes back "Blocked" and never runs, while the allowed calls
// beside it do.
func TestE2EFleetSubagentsObeyDenyRules(t *testing.T) {
	t.Parallel()
	tasks := []confTask{
		{prompt: "writer", claims: []string{}, steps: []providertest.Turn{{ToolCalls: []providertest.ToolCall{
			toolCall("edit-denied", "write_file", map[string]string{"path": "denied.txt", "content": "x"}),
			toolCall("edit-ok", "write_file", map[string]string{"path": "allowed.txt", "content": "ok"}),
			toolCall("bash-denied", "bash", map[string]string{"command": "touch touched.txt"}),
			toolCall("bash-ok", "bash", map[string]string{"command": "printf ran > ran.txt"}),
		}}}},
		{prompt: "reader", steps: []providertest.Turn{{ToolCalls: []providertest.ToolCall{
			toolCall("read-denied", "read_file", map[string]string{"path": "secret.txt"}),
			toolCall("read-ok", "read_file", map[string]string{"path": "public.txt"}),
		}}}},
	}
	e := newE2E(t, providertest.WithResponder(fleetResponder(tasks)))
	// bash = "off": the deny rules are checked before any jail, and a
	// whole-workspace writer may run unconfined commands like its parent.
	e.writeConfig("\n[permissions]\ndeny = [\"Bash(touch:*)\", \"Read(secret.txt)\"]\n\n[sandbox]\nbash = \"off\"\n")
	writeWorkFiles(t, e.work, map[string]string{"secret.txt": "the-secret\n", "public.txt": "public\n"})
	r := e.run("run", "--deny", "Edit(denied.txt)", "fan out")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	if out := fleetResult(t, e); !strings.HasPrefix(out, "2 tasks: 2 ok") {
		t.Fatalf("fleet result:\n%s", out)
	}
	w := subagentResults(t, e, "writer")
	wantResult(t, w, "edit-denied", "Blocked: blocked by deny rule Edit(denied.txt)")
	wantResult(t, w, "bash-denied", "Blocked: blocked by deny rule Bash(touch:*)")
	wantResult(t, w, "bash-ok", "exit code: 0")
	wantFile(t, e, "denied.txt", "")
	wantFile(t, e, "touched.txt", "")
	wantFile(t, e, "allowed.txt", "ok")
	wantFile(t, e, "ran.txt", "ran")
	rd := subagentResults(t, e, "reader")
	wantResult(t, rd, "read-denied", "Blocked: blocked by deny rule Read(secret.txt)")
	wantResult(t, rd, "read-ok", "public")
	if strings.Contains(rd["read-denied"], "the-secret") {
		t.Errorf("the denied read returned the file: %q", rd["read-denied"])
	}
}

// TestE2EWritePathsConfineWriters: two writers with disjoint write_paths
// run side by side in the bash jail. Each may write inside its claim with
// the file tools and with bash, and neither can change the other's files
// or the rest of the workspace by either route. A reader has no bash and
// no write tools at all.
func TestE2EWritePathsConfineWriters(t *testing.T) {
	t.Parallel()
	testenv.NeedBwrap(t)
	writer := func(own, other string) confTask {
		return confTask{prompt: "writer " + own, claims: []string{own}, steps: []providertest.Turn{{ToolCalls: []providertest.ToolCall{
			toolCall("file-other", "write_file", map[string]string{"path": other + "/own", "content": "clobbered by " + own}),
			toolCall("bash-other", "bash", map[string]string{"command": "echo clobbered by " + own + " > " + other + "/own"}),
			toolCall("bash-rm-other", "bash", map[string]string{"command": "rm " + other + "/own"}),
			toolCall("bash-top", "bash", map[string]string{"command": "echo " + own + " > top.txt"}),
			toolCall("file-own", "write_file", map[string]string{"path": own + "/new.txt", "content": "file from " + own}),
			toolCall("bash-own", "bash", map[string]string{"command": "printf 'bash from " + own + "' > " + own + "/bash.txt"}),
		}}}}
	}
	tasks := []confTask{
		writer("a", "b"),
		writer("b", "a"),
		{prompt: "reader", steps: []providertest.Turn{{ToolCalls: []providertest.ToolCall{
			toolCall("bash", "bash", map[string]string{"command": "echo reader > reader.txt"}),
			toolCall("file", "write_file", map[string]string{"path": "reader.txt", "content": "reader"}),
		}}}},
	}
	e := newE2E(t, providertest.WithResponder(fleetResponder(tasks)))
	writeWorkFiles(t, e.work, map[string]string{"a/own": "original\n", "b/own": "original\n", "top.txt": "original\n"})
	r := e.run("run", "fan out")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	if out := fleetResult(t, e); !strings.HasPrefix(out, "3 tasks: 3 ok") {
		t.Fatalf("fleet result:\n%s", out)
	}
	for _, own := range []string{"a", "b"} {
		t.Run("writer "+own, func(t *testing.T) {
			res := subagentResults(t, e, "writer "+own)
			wantResult(t, res, "file-other", "outside this task's write_paths ("+own+")")
			wantResult(t, res, "bash-other", "Read-only file system")
			wantResult(t, res, "bash-rm-other", "Read-only file system")
			wantResult(t, res, "bash-top", "Read-only file system")
			wantResult(t, res, "bash-own", "exit code: 0")
			wantFile(t, e, own+"/own", "original\n")
			wantFile(t, e, own+"/new.txt", "file from "+own)
			wantFile(t, e, own+"/bash.txt", "bash from "+own)
		})
	}
	wantFile(t, e, "top.txt", "original\n")
	res := subagentResults(t, e, "reader")
	wantResult(t, res, "bash", `unknown tool "bash"`)
	wantResult(t, res, "file", `unknown tool "write_file"`)
	wantFile(t, e, "reader.txt", "")
}

// TestE2EWriterBashRefusedWithoutJail: with bash = "off" nothing could hold
// a writer's commands to its write_paths, so its bash calls are refused
// with a reason the model can act on, and its file tools still work.
func TestE2EWriterBashRefusedWithoutJail(t *testing.T) {
	t.Parallel()
	tasks := []confTask{{prompt: "writer", claims: []string{"a"}, steps: []providertest.Turn{{ToolCalls: []providertest.ToolCall{
		toolCall("bash", "bash", map[string]string{"command": "echo x > a/bash.txt"}),
		toolCall("file", "write_file", map[string]string{"path": "a/file.txt", "content": "file"}),
	}}}}, {prompt: "other", claims: []string{"b"}}}
	e := newE2E(t, providertest.WithResponder(fleetResponder(tasks)))
	e.writeConfig("\n[sandbox]\nbash = \"off\"\n")
	// a exists, so an unconfined command would succeed.
	writeWorkFiles(t, e.work, map[string]string{"a/keep": ""})
	r := e.run("run", "fan out")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	res := subagentResults(t, e, "writer")
	wantResult(t, res, "bash", "bash cannot be confined to this task's write_paths")
	wantResult(t, res, "bash", "write_file")
	wantFile(t, e, "a/bash.txt", "")
	wantFile(t, e, "a/file.txt", "file")
}

// census follows the subagents of a fleet as the model fake sees them: a
// task runs from its first request to the request it gives its final
// answer in. That span lies inside the task's real run, so more tasks in
// it at once than a cap allows means the cap was broken.
type census struct {
	runCap, writerCap int
	tasks             map[string]confTask
	group             map[string]string // writer prompt → its overlap group

	mu         sync.Mutex
	changed    chan struct{}
	running    map[string]bool
	finished   map[string]bool
	maxRunning int
	maxWriters int
	problems   []string
}

func newCensus(runCap, writerCap int, tasks []confTask, group map[string]string) *census {
	c := &census{runCap: runCap, writerCap: writerCap, tasks: map[string]confTask{}, group: group,
		changed: make(chan struct{}), running: map[string]bool{}, finished: map[string]bool{}}
	for _, t := range tasks {
		c.tasks[t.prompt] = t
	}
	return c
}

// respond is the model fake's responder. A subagent's first request is
// held until every slot the caps allow is taken, so a scheduler that
// admits too many is caught with them all running; its second gets the
// final answer.
func (c *census) respond(parent func(providertest.Request) providertest.Turn) func(providertest.Request) providertest.Turn {
	return func(req providertest.Request) providertest.Turn {
		if !isSubagent(req) {
			return parent(req)
		}
		prompt := req.FirstUser()
		if len(assistantTurns(req)) > 0 {
			c.finish(prompt)
			return providertest.Turn{Text: "done: " + prompt}
		}
		c.start(prompt)
		c.holdUntilFull(prompt)
		if claims := c.tasks[prompt].claims; claims != nil {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{
				toolCall("w", "write_file", map[string]string{"path": claims[0] + "/" + prompt, "content": prompt}),
			}}
		}
		return providertest.Turn{ToolCalls: []providertest.ToolCall{toolCall("ls", "ls", map[string]string{})}}
	}
}

func (c *census) start(prompt string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.group[prompt]; ok {
		for other := range c.running {
			if c.group[other] == g {
				c.problems = append(c.problems, fmt.Sprintf("%q started while %q, whose write_paths overlap, was running", prompt, other))
			}
		}
	}
	c.running[prompt] = true
	writers := 0
	for p := range c.running {
		if c.tasks[p].claims != nil {
			writers++
		}
	}
	c.maxRunning = max(c.maxRunning, len(c.running))
	c.maxWriters = max(c.maxWriters, writers)
	c.broadcast()
}

func (c *census) finish(prompt string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.running, prompt)
	c.finished[prompt] = true
	c.broadcast()
}

func (c *census) broadcast() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// full reports whether as many tasks run as the caps and the overlaps let
// the unfinished ones.
func (c *census) full() bool { return len(c.running) >= c.slots() }

// slots is how many of the unfinished tasks may run at once: every reader,
// and a writer from each overlap group up to the writer cap, up to the
// run cap.
func (c *census) slots() int {
	readers, groups := 0, map[string]bool{}
	for p, t := range c.tasks {
		switch {
		case c.finished[p]:
		case t.claims == nil:
			readers++
		default:
			groups[c.group[p]] = true
		}
	}
	return min(c.runCap, readers+min(c.writerCap, len(groups)))
}

// holdUntilFull blocks until full, or records a problem after
// e2eExitBound: a scheduler that leaves a slot idle with work waiting.
func (c *census) holdUntilFull(prompt string) {
	timer := time.NewTimer(e2eExitBound)
	defer timer.Stop()
	for {
		c.mu.Lock()
		if c.full() {
			c.mu.Unlock()
			return
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			c.mu.Lock()
			c.problems = append(c.problems, fmt.Sprintf("%q waited %s for the free slots to fill", prompt, e2eExitBound))
			c.mu.Unlock()
			return
		}
	}
}

// TestE2EFleetCapsHold sets agent.max_subagent_concurrency and
// agent.max_parallel_writers low and watches, from the model fake, how
// many subagents run at once: never more than the caps, and never two
// writers whose write_paths overlap.
func TestE2EFleetCapsHold(t *testing.T) {
	t.Parallel()
	reader := func(p string) confTask { return confTask{prompt: p} }
	writer := func(p string, claim string) confTask { return confTask{prompt: p, claims: []string{claim}} }
	tests := []struct {
		name              string
		runCap, writerCap int
		tasks             []confTask
		group             map[string]string
	}{
		{
			name: "run and writer slots", runCap: 2, writerCap: 1,
			tasks: []confTask{reader("r1"), writer("w1", "out/1"), reader("r2"), writer("w2", "out/2"),
				reader("r3"), writer("w3", "out/3"), reader("r4")},
			group: map[string]string{"w1": "1", "w2": "2", "w3": "3"},
		},
		{
			name: "overlapping writers", runCap: 4, writerCap: 3,
			tasks: []confTask{writer("dir", "shared"), writer("inside", "shared/x"), writer("deeper", "shared/x/y"),
				writer("solo", "solo"), reader("r1")},
			group: map[string]string{"dir": "shared", "inside": "shared", "deeper": "shared", "solo": "solo"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCensus(tt.runCap, tt.writerCap, tt.tasks, tt.group)
			peak := c.slots()
			e := newE2E(t, providertest.WithResponder(c.respond(fleetResponder(tt.tasks))))
			e.writeConfig(fmt.Sprintf("\n[agent]\nmax_subagent_concurrency = %d\nmax_parallel_writers = %d\n", tt.runCap, tt.writerCap))
			r := e.run("run", "fan out")
			if r.code != 0 {
				t.Fatalf("run failed:\n%s", r)
			}
			if out := fleetResult(t, e); !strings.HasPrefix(out, fmt.Sprintf("%d tasks: %d ok", len(tt.tasks), len(tt.tasks))) {
				t.Fatalf("fleet result:\n%s", out)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			for _, p := range c.problems {
				t.Error(p)
			}
			if c.maxRunning > tt.runCap || c.maxWriters > tt.writerCap {
				t.Errorf("up to %d subagents and %d writers ran at once; caps %d and %d", c.maxRunning, c.maxWriters, tt.runCap, tt.writerCap)
			}
			// The hold fills every slot, so the limits were reached, not
			// merely never tested.
			if c.maxRunning < peak || c.maxWriters < min(tt.writerCap, 2) {
				t.Errorf("at most %d subagents and %d writers ran at once, want %d and %d: the slots were never all taken",
					c.maxRunning, c.maxWriters, peak, min(tt.writerCap, 2))
			}
			for _, task := range tt.tasks {
				if task.claims != nil {
					wantFile(t, e, task.claims[0]+"/"+task.prompt, task.prompt)
				}
			}
		})
	}
}

// TestE2ETaskTimeoutEndsStuckSubagent: agent.task_timeout_seconds ends a
// subagent stuck in a long bash command as timed_out, its process killed,
// while its sibling finishes ok and the parent turn carries on.
func TestE2ETaskTimeoutEndsStuckSubagent(t *testing.T) {
	t.Parallel()
	marker := fmt.Sprintf("600.%09d", rand.IntN(1_000_000_000))
	tasks := []confTask{
		{prompt: "stuck", claims: []string{}, steps: []providertest.Turn{{ToolCalls: []providertest.ToolCall{
			toolCall("sleep", "bash", map[string]string{"command": "sleep " + marker}),
		}}}},
		{prompt: "quick", steps: []providertest.Turn{{ToolCalls: []providertest.ToolCall{toolCall("ls", "ls", map[string]string{})}}}},
	}
	e := newE2E(t, providertest.WithResponder(fleetResponder(tasks)))
	e.writeConfig("\n[agent]\ntask_timeout_seconds = 1\n\n[sandbox]\nbash = \"off\"\n")
	r := e.run("run", "fan out")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	out := fleetResult(t, e)
	if !strings.HasPrefix(out, "2 tasks: 1 ok, 0 failed, 1 timed out, 0 cancelled.") {
		t.Fatalf("fleet result:\n%s", out)
	}
	if !strings.Contains(out, "## Task 1 (f1.1): timed_out") || !strings.Contains(out, "## Task 2 (f1.2): ok") || !strings.Contains(out, "done: quick") {
		t.Errorf("fleet result does not give the stuck task timed_out and its sibling ok:\n%s", out)
	}
	if !strings.Contains(r.stdout, "parent done") {
		t.Errorf("the parent turn did not carry on:\n%s", r)
	}
	if runtime.GOOS == "linux" {
		pollUntil(t, e2eExitBound, "the timed-out task's sleep to be killed", func() bool { return len(sleepersWithArg(marker)) == 0 })
	}
}
