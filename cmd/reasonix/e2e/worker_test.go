//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/fleetcmd"
	"reasonix/core/provider/providertest"
)

// The tests in this file are the acceptance of remote workers: a
// scheduler (`reasonix run`) and `reasonix worker` processes of the real
// binary on loopback, all asking one model fake, which tells them apart by
// the path their base URL carries (requestNode).

const (
	// acceptTasks is the fleet's size; every acceptWriterEvery-th task is a
	// writer claiming sub/t<i>, a path only the writer workers and the
	// scheduler itself cover.
	acceptTasks       = 48
	acceptWriterEvery = 12
	// acceptCapacity is each worker's slots; the scheduler runs two tasks
	// itself.
	acceptCapacity = 4
	// victim is the worker the test SIGKILLs once it runs acceptCapacity
	// tasks.
	victim = "w1"
)

func isAcceptWriter(i int) bool { return i%acceptWriterEvery == 5 }

// acceptScript answers the 48-task fleet: the parent calls the fleet tool
// once, then summarises; a reader takes three turns (ls, glob, an answer),
// a writer two (a write_file into its claim naming the node it ran on, an
// answer). Subagent turns go through g.
func acceptScript(g *gate) providertest.Option {
	return providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if !isSubagent(req) {
			if len(toolResults(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: fleetArgs(acceptTasks, func(i int) string {
					if isAcceptWriter(i) {
						return fmt.Sprintf(`,"write_paths":["sub/t%d"]`, i)
					}
					return ""
				})}}}
			}
			return providertest.Turn{Text: "parent summarised the fleet"}
		}
		return g.turn(req, func(node string) providertest.Turn {
			task, steps := req.FirstUser(), len(toolResults(req))
			var i int
			fmt.Sscanf(task, "task %d", &i)
			if isAcceptWriter(i) {
				if steps == 0 {
					args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("sub/t%d/out.txt", i), "content": task + " on " + nodeLabel(node)})
					return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: string(args)}}}
				}
				return providertest.Turn{Text: "done with " + task}
			}
			switch steps {
			case 0:
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "ls", Arguments: `{}`}}}
			case 1:
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "glob", Arguments: `{"pattern":"*"}`}}}
			}
			return providertest.Turn{Text: "done with " + task}
		})
	})
}

func nodeLabel(node string) string {
	if node == "" {
		return "local"
	}
	return node
}

// taskLog is what the stream says about one task.
type taskLog struct {
	started  []evt // task_started, in order
	requeued []evt
	done     []evt
}

func taskLogs(events []evt) map[string]*taskLog {
	logs := map[string]*taskLog{}
	for _, ev := range events {
		id := field(ev, "task")
		switch ev.Type {
		case "task_queued", "task_started", "task_requeued", "task_done":
		default:
			continue
		}
		l := logs[id]
		if l == nil {
			l = &taskLog{}
			logs[id] = l
		}
		switch ev.Type {
		case "task_started":
			l.started = append(l.started, ev)
		case "task_requeued":
			l.requeued = append(l.requeued, ev)
		case "task_done":
			l.done = append(l.done, ev)
		}
	}
	return logs
}

// startedOn counts the task_started lines of the stream so far that name
// worker.
func startedOn(out, worker string) int {
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, `"type":"task_started"`) && strings.Contains(line, `"worker":"`+worker+`"`) {
			n++
		}
	}
	return n
}

// acceptRun is the scenario up to the parent's exit: three
// workers, a 48-task fleet, the victim SIGKILLed while it runs
// acceptCapacity tasks (held open at the fake). It checks the parent
// exits 0 and returns the rig, the parent's events and the tasks the fake
// held on the victim ("task <i>", sorted).
func acceptRun(t *testing.T, policy string) (*rig, []evt, []string) {
	t.Helper()
	g := newGate(victim, victim, acceptCapacity)
	r := newRig(t, map[string]string{"README.md": "a checkout\n", "sub/keep.txt": "kept\n", "src/main.go": "package main\n"}, acceptScript(g))

	r.startWorker("w1", acceptCapacity, workerToken)
	r.startWorker("w2", acceptCapacity, workerToken)
	r.startWorker("w3", acceptCapacity, workerToken)
	r.writeParentConfig(
		fmt.Sprintf("max_subagent_concurrency = 2\nresume_running = %q", policy),
		"heartbeat_ms = 200\nmiss_limit = 3",
		workerEntry{name: "w1", capacity: acceptCapacity, writes: []string{"sub"}},
		workerEntry{name: "w2", capacity: acceptCapacity, writes: []string{"sub"}},
		workerEntry{name: "w3", capacity: acceptCapacity},
	)
	parent := r.startParent("run", "--output-format", "stream-json", "fan out")

	// The victim is full: it has been asked by acceptCapacity tasks, whose
	// turns the fake holds, and the scheduler has published each start.
	g.waitReached(t, 2*e2eExitBound, func() string {
		return fmt.Sprintf("asked from w1 %v, w2 %v, w3 %v, local %v\n--- parent stderr\n%s\n--- w1 stderr\n%s",
			g.tasksAsked("w1"), g.tasksAsked("w2"), g.tasksAsked("w3"), g.tasksAsked(""), parent.stderr, r.proc("w1").stderr)
	})
	parent.stdout.waitFor(t, "the victim's task_started events", func(s string) bool { return startedOn(s, victim) >= acceptCapacity })
	held := g.tasksAsked(victim)
	killed := time.Now()
	r.proc(victim).kill(t)

	if _, code := parent.waitExit(t); code != 0 {
		t.Fatalf("parent exit %d\n--- stderr\n%s\n--- stdout (tail)\n%s", code, parent.stderr, tail(parent.stdout.String(), 4000))
	}
	t.Logf("parent exited %s after the kill", time.Since(killed).Round(time.Millisecond))
	events := decodeEvents(t, parent.stdout.String())
	logPlacement(t, events, killed)
	return r, events, held
}

// logPlacement logs where tasks ran and how long after the kill the
// requeues and the fleet's end came, to read a slow or odd run by.
func logPlacement(t *testing.T, events []evt, killed time.Time) {
	t.Helper()
	ran := map[string]int{}
	first := map[string]time.Duration{}
	var queued time.Time
	for _, ev := range events {
		switch ev.Type {
		case "task_queued":
			if queued.IsZero() {
				queued = eventTime(t, ev)
			}
		case "task_started":
			node := nodeLabel(field(ev, "worker"))
			if ran[node] == 0 {
				first[node] = eventTime(t, ev).Sub(queued).Round(time.Millisecond)
			}
			ran[node]++
		case "task_requeued", "task_done":
			if ev.Type == "task_requeued" || field(ev, "status") != "ok" {
				t.Logf("%s %s +%s after the kill: %s", ev.Type, field(ev, "task"), eventTime(t, ev).Sub(killed).Round(time.Millisecond), ev.line)
			}
		case "turn_done":
			t.Logf("turn_done +%s after the kill", eventTime(t, ev).Sub(killed).Round(time.Millisecond))
		}
	}
	t.Logf("starts per node: %v; first start after the fleet was queued: %v", ran, first)
}

// checkEnds checks what holds under either policy: one task_done per task,
// the result complete and in input order with ok for every task not in
// failed, and the victim started exactly the held tasks.
func checkEnds(t *testing.T, r *rig, events []evt, held []string, failed map[string]bool) map[string]*taskLog {
	t.Helper()
	logs := taskLogs(events)
	if len(logs) != acceptTasks {
		t.Errorf("%d task ids in the stream, want %d", len(logs), acceptTasks)
	}
	var onVictim []string
	for i := 1; i <= acceptTasks; i++ {
		id := fmt.Sprintf("f1.%d", i)
		l := logs[id]
		if l == nil {
			t.Errorf("%s: no events", id)
			continue
		}
		if len(l.done) != 1 || len(l.started) == 0 {
			t.Errorf("%s: %d task_done and %d task_started events, want exactly 1 and at least 1", id, len(l.done), len(l.started))
			continue
		}
		for _, s := range l.started {
			if field(s, "worker") == victim {
				onVictim = append(onVictim, fmt.Sprintf("task %d", i))
			}
		}
		done, last := l.done[0], l.started[len(l.started)-1]
		if w, lw := field(done, "worker"), field(last, "worker"); w != lw || attemptOf(done) != attemptOf(last) {
			t.Errorf("%s: task_done on %q attempt %d, last start on %q attempt %d", id, w, attemptOf(done), lw, attemptOf(last))
		}
		want := "ok"
		if failed[id] {
			want = "failed"
		}
		if st := field(done, "status"); st != want {
			t.Errorf("%s: status %s (%s), want %s", id, st, field(done, "error"), want)
		}
	}
	slices.Sort(onVictim)
	if !slices.Equal(onVictim, held) {
		t.Errorf("tasks started on %s: %v; the fake held %v", victim, onVictim, held)
	}

	out := parentResult(t, r.e.srv, "fan")
	summary := fmt.Sprintf("%d tasks: %d ok, %d failed", acceptTasks, acceptTasks-len(failed), len(failed))
	if !strings.HasPrefix(out, summary) {
		t.Errorf("fleet result does not start %q:\n%s", summary, tail(out, 2000))
	}
	at := 0
	for i := 1; i <= acceptTasks; i++ {
		id := fmt.Sprintf("f1.%d", i)
		head := fmt.Sprintf("## Task %d (%s): ", i, id)
		next := strings.Index(out[at:], head)
		if next < 0 {
			t.Errorf("task %d missing from the fleet result or out of order", i)
			break
		}
		at += next
		line := out[at : at+strings.IndexByte(out[at:], '\n')]
		switch {
		case failed[id] && !strings.Contains(line, "failed"):
			t.Errorf("task %d: %s, want failed", i, line)
		case !failed[id] && !strings.Contains(line, ": ok"):
			t.Errorf("task %d: %s, want ok", i, line)
		case !failed[id] && !strings.Contains(out[at:], fmt.Sprintf("done with task %d", i)):
			t.Errorf("task %d: its answer is missing", i)
		}
	}

	// Every live worker ran tasks: placement used them all.
	for _, w := range []string{"w2", "w3"} {
		if startedOn(r.proc("parent").stdout.String(), w) == 0 {
			t.Errorf("no task ran on %s", w)
		}
	}

	// The journal agrees: the fleet is done with every task finished.
	res := r.e.run("fleet", "list", "--json")
	var list []fleetcmd.FleetJSON
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &list) != nil || len(list) != 1 {
		t.Errorf("fleet list:\n%s", res)
	} else if fl := list[0]; fl.State != "done" || fl.Tasks != acceptTasks || fl.Finished != acceptTasks {
		t.Errorf("journaled fleet: %+v", fl)
	}
	return logs
}

// checkWriters: each writer's file is where the writer ran last, on a node
// whose claims cover sub/, and nowhere else.
func checkWriters(t *testing.T, r *rig, logs map[string]*taskLog, failed map[string]bool) {
	t.Helper()
	roots := map[string]string{"local": r.e.work}
	for _, w := range []string{"w1", "w2", "w3"} {
		roots[w] = r.proc(w).checkout
	}
	for i := 1; i <= acceptTasks; i++ {
		if !isAcceptWriter(i) {
			continue
		}
		id := fmt.Sprintf("f1.%d", i)
		l := logs[id]
		if l == nil || len(l.started) == 0 {
			continue // reported by checkEnds
		}
		ranOn := nodeLabel(field(l.started[len(l.started)-1], "worker"))
		t.Logf("writer %s ran on %s", id, ranOn)
		if ranOn == "w3" {
			t.Errorf("writer %s was placed on w3, whose claims do not cover sub/", id)
		}
		for node, root := range roots {
			b, err := os.ReadFile(filepath.Join(root, "sub", fmt.Sprintf("t%d", i), "out.txt"))
			switch {
			case node == ranOn && !failed[id] && string(b) != fmt.Sprintf("task %d on %s", i, node):
				t.Errorf("writer %s ran on %s, its file there: %q (%v)", id, node, b, err)
			case node != ranOn && err == nil:
				t.Errorf("writer %s ran on %s, but %s has its file: %q", id, ranOn, node, b)
			}
		}
	}
}

// finish stops the surviving workers (exit 0 on SIGTERM) and checks that
// no process of the test is left.
func finish(t *testing.T, r *rig, workers ...string) {
	t.Helper()
	codes, took := r.terminateAll(t, workers...)
	for _, w := range workers {
		t.Logf("worker %s exited %d %s after SIGTERM", w, codes[w], took[w].Round(time.Millisecond))
		if codes[w] != 0 {
			t.Errorf("worker %s exited %d on SIGTERM, want 0\n--- stderr\n%s", w, codes[w], r.proc(w).stderr)
		}
	}
	r.noLeftovers(t)
}

// TestE2EWorkersSurviveSIGKILL is the acceptance: a scheduler and
// three workers on loopback run a 48-task fleet (readers, and writers with
// disjoint claims under sub/ that two of the workers cover); the first
// worker is SIGKILLed while it runs four tasks. Each task ends exactly once
// and ok, the four ran again elsewhere after a task_requeued, the fleet's
// result is complete and in input order, the parent exits 0, the other
// workers exit 0 on SIGTERM, and no process is left.
func TestE2EWorkersSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	r, events, held := acceptRun(t, "rerun")
	logs := checkEnds(t, r, events, held, nil)
	for id, l := range logs {
		wasHeld := slices.Contains(held, "task "+strings.TrimPrefix(id, "f1."))
		switch {
		case !wasHeld && len(l.requeued) != 0:
			t.Errorf("%s was requeued, though it never ran on %s", id, victim)
		case wasHeld && (len(l.requeued) != 1 || field(l.requeued[0], "worker") != victim):
			t.Errorf("%s ran on %s: requeued %d times (%v), want once from %s", id, victim, len(l.requeued), l.requeued, victim)
		case wasHeld && (len(l.started) != 2 || field(l.started[1], "worker") == victim || attemptOf(l.started[1]) != 2):
			t.Errorf("%s: starts %v, want a second attempt on another node", id, l.started)
		case wasHeld && len(l.done) == 1 && attemptOf(l.done[0]) != 2:
			t.Errorf("%s: done at attempt %d, want 2", id, attemptOf(l.done[0]))
		}
	}
	checkWriters(t, r, logs, nil)
	finish(t, r, "w2", "w3")
}

// TestE2EWorkersLostTasksFail is the acceptance with agent.resume_running
// = "fail": exactly the tasks the killed worker was running fail, with an
// error saying the worker was lost; every other task is ok.
func TestE2EWorkersLostTasksFail(t *testing.T) {
	t.Parallel()
	r, events, held := acceptRun(t, "fail")
	failed := map[string]bool{}
	for _, task := range held {
		failed["f1."+strings.TrimPrefix(task, "task ")] = true
	}
	logs := checkEnds(t, r, events, held, failed)
	for id, l := range logs {
		if len(l.requeued) != 0 {
			t.Errorf("%s was requeued under resume_running = fail", id)
		}
		if failed[id] && len(l.done) == 1 && !strings.Contains(field(l.done[0], "error"), "lost") {
			t.Errorf("%s failed with %q, want an error saying the worker was lost", id, field(l.done[0], "error"))
		}
	}
	checkWriters(t, r, logs, failed)
	finish(t, r, "w2", "w3")
}

// TestE2EWorkerRefusedNeverUsed: a worker whose token differs from the
// scheduler's, and one that serves another workspace, are never given a
// task (the fake never hears from them), while a good worker and the
// scheduler itself run the whole fleet; `reasonix workers` says why each
// is not up.
func TestE2EWorkerRefusedNeverUsed(t *testing.T) {
	t.Parallel()
	const tasks = 12
	g := newGate("", "good", 1)
	r := newRig(t, map[string]string{"README.md": "a checkout\n"}, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if !isSubagent(req) {
			if len(toolResults(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: fleetArgs(tasks, nil)}}}
			}
			return providertest.Turn{Text: "parent summarised the fleet"}
		}
		return g.turn(req, func(string) providertest.Turn {
			if len(toolResults(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "ls", Arguments: `{}`}}}
			}
			return providertest.Turn{Text: "done with " + req.FirstUser()}
		})
	}))
	r.startWorker("good", 4, workerToken)
	r.startWorker("bad", 4, "not-the-scheduler-token")
	r.startWorkerServing("elsewhere", 4, workerToken, "other")
	r.writeParentConfig("max_subagent_concurrency = 2", "heartbeat_ms = 200\nmiss_limit = 3",
		workerEntry{name: "good", capacity: 4}, workerEntry{name: "bad", capacity: 4}, workerEntry{name: "elsewhere", capacity: 4})
	parent := r.startParent("run", "--output-format", "stream-json", "fan out")
	if _, code := parent.waitExit(t); code != 0 {
		t.Fatalf("parent exit %d\n--- stderr\n%s\n--- stdout (tail)\n%s", code, parent.stderr, tail(parent.stdout.String(), 4000))
	}
	events := decodeEvents(t, parent.stdout.String())
	logs := taskLogs(events)
	for i := 1; i <= tasks; i++ {
		id := fmt.Sprintf("f1.%d", i)
		l := logs[id]
		if l == nil || len(l.done) != 1 || field(l.done[0], "status") != "ok" {
			t.Errorf("%s: %+v", id, l)
		}
	}
	for _, w := range []string{"bad", "elsewhere"} {
		if n := startedOn(parent.stdout.String(), w); n != 0 {
			t.Errorf("%d tasks started on %s", n, w)
		}
		if asked := g.tasksAsked(w); len(asked) != 0 {
			t.Errorf("%s ran %v", w, asked)
		}
	}
	if startedOn(parent.stdout.String(), "good") == 0 {
		t.Errorf("no task ran on the good worker")
	}
	if out := parentResult(t, r.e.srv, "fan"); !strings.HasPrefix(out, fmt.Sprintf("%d tasks: %d ok", tasks, tasks)) {
		t.Errorf("fleet result:\n%s", tail(out, 2000))
	}
	res := r.e.run("workers", "--json")
	var listed []struct{ Name, State string }
	if err := json.Unmarshal([]byte(res.stdout), &listed); err != nil || res.code != 1 {
		t.Errorf("reasonix workers --json, want exit 1 (a worker is not up): %v\n%s", err, res)
	}
	states := map[string]string{}
	for _, w := range listed {
		states[w.Name] = w.State
	}
	if want := map[string]string{"good": "up", "bad": "bad token", "elsewhere": "wrong workspace"}; !maps.Equal(states, want) {
		t.Errorf("reasonix workers states %v, want %v", states, want)
	}
	finish(t, r, "good", "bad", "elsewhere")
}

// TestE2EWorkerComesBack: a worker SIGKILLed while it runs four tasks of
// a fleet that only workers run ([remote] run_local = false) is started
// again on the same address; the scheduler links to it again and places
// tasks there, and the fleet completes with every task ending once and ok.
// The other worker's turns wait until the restarted one has been asked, so
// the fleet cannot finish without it.
func TestE2EWorkerComesBack(t *testing.T) {
	t.Parallel()
	const tasks = 16
	var (
		mu      sync.Mutex
		dead    bool // the first w1 was killed: its turns are no longer held
		back    = make(chan struct{})
		once    sync.Once
		firstW1 = map[string]bool{}
		full    = make(chan struct{})
	)
	r := newRig(t, map[string]string{"README.md": "a checkout\n"}, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if !isSubagent(req) {
			if len(toolResults(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: fleetArgs(tasks, nil)}}}
			}
			return providertest.Turn{Text: "parent summarised the fleet"}
		}
		reply := providertest.Turn{Text: "done with " + req.FirstUser()}
		if len(toolResults(req)) == 0 {
			reply = providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "ls", Arguments: `{}`}}}
		}
		mu.Lock()
		defer mu.Unlock()
		switch requestNode(req) {
		case "w1":
			if !dead {
				firstW1[req.FirstUser()] = true
				if len(firstW1) == acceptCapacity {
					close(full)
				}
				return providertest.Turn{Text: "holding", Stall: true, FaultAfterEvents: 2}
			}
			once.Do(func() { close(back) })
		default:
			select {
			case <-back:
			default:
				if reply.Text == "" {
					reply.Text = "waiting"
				}
				reply.Hold, reply.FaultAfterEvents = back, 2
			}
		}
		return reply
	}))
	r.startWorker("w1", acceptCapacity, workerToken)
	r.startWorker("w2", acceptCapacity, workerToken)
	r.writeParentConfig("max_subagent_concurrency = 2", "heartbeat_ms = 200\nmiss_limit = 3\nrun_local = false",
		workerEntry{name: "w1", capacity: acceptCapacity}, workerEntry{name: "w2", capacity: acceptCapacity})
	parent := r.startParent("run", "--output-format", "stream-json", "fan out")

	select {
	case <-full:
	case err := <-parent.exited:
		parent.exited <- err
		t.Fatalf("parent exited (%v) before w1 ran %d tasks\n%s", err, acceptCapacity, parent.stderr)
	}
	parent.stdout.waitFor(t, "w1's task_started events", func(s string) bool { return startedOn(s, "w1") >= acceptCapacity })
	mu.Lock()
	dead = true
	mu.Unlock()
	r.proc("w1").kill(t)
	parent.stdout.waitFor(t, "w1 lost", func(s string) bool { return strings.Count(s, `"type":"task_requeued"`) >= acceptCapacity })
	r.restartWorker("w1", acceptCapacity, workerToken)
	parent.stdout.waitFor(t, "a task started on w1 again", func(s string) bool { return startedOn(s, "w1") > acceptCapacity })

	if _, code := parent.waitExit(t); code != 0 {
		t.Fatalf("parent exit %d\n--- stderr\n%s\n--- stdout (tail)\n%s", code, parent.stderr, tail(parent.stdout.String(), 4000))
	}
	logs := taskLogs(decodeEvents(t, parent.stdout.String()))
	for i := 1; i <= tasks; i++ {
		id := fmt.Sprintf("f1.%d", i)
		if l := logs[id]; l == nil || len(l.done) != 1 || field(l.done[0], "status") != "ok" {
			t.Errorf("%s: want exactly one task_done, ok: %+v", id, l)
		}
	}
	// The first w1 could start no more than its capacity (its tasks never
	// ended), so every later start on w1 is the restarted one's.
	t.Logf("%d starts on w1 after it came back", startedOn(parent.stdout.String(), "w1")-acceptCapacity)
	if out := parentResult(t, r.e.srv, "fan"); !strings.HasPrefix(out, fmt.Sprintf("%d tasks: %d ok", tasks, tasks)) {
		t.Errorf("fleet result:\n%s", tail(out, 2000))
	}
	finish(t, r, "w1", "w2")
}

// workerLine is the line `reasonix worker` prints once it serves.
var workerLine = regexp.MustCompile(`^reasonix worker (\S+) listening on (\S+):(\d+)\n$`)

// startWorkerBinary runs `reasonix worker` with args in e's workspace and
// environment plus env, returning the command and its stderr.
func startWorkerBinary(t *testing.T, e *e2e, env []string, args ...string) (*exec.Cmd, *watchedBuffer, chan error) {
	t.Helper()
	cmd := exec.Command(e2eBinary, append([]string{"worker"}, args...)...)
	cmd.Dir, cmd.Env = e.work, append(append([]string{}, e.env...), env...)
	stderr := newWatchedBuffer()
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err := <-exited
		exited <- err
	})
	return cmd, stderr, exited
}

// exitOf waits for the process to exit and returns its code.
func exitOf(t *testing.T, exited chan error, stderr *watchedBuffer) int {
	t.Helper()
	select {
	case err := <-exited:
		exited <- err
		return exitStatus(t, err)
	case <-time.After(e2eExitBound):
		t.Fatalf("the worker did not exit within %s; stderr:\n%s", e2eExitBound, stderr.String())
		return -1
	}
}

func TestE2EWorkerListensAndDrains(t *testing.T) {
	t.Parallel()
	skipWithoutSignals(t)
	e := newE2E(t)
	cmd, stderr, exited := startWorkerBinary(t, e, []string{"REASONIX_WORKER_TOKEN=secret"},
		"--listen", "127.0.0.1:0", "--name", "w1", "--capacity", "2")
	stderr.waitFor(t, "listening line", func(s string) bool { return strings.HasSuffix(s, "\n") })
	m := workerLine.FindStringSubmatch(stderr.String())
	if m == nil || m[1] != "w1" || m[2] != "127.0.0.1" || m[3] == "0" {
		t.Fatalf("stderr = %q, want exactly the listening line with the port chosen", stderr.String())
	}
	// The port is really served.
	conn, err := net.DialTimeout("tcp", m[2]+":"+m[3], 5*time.Second)
	if err != nil {
		t.Fatalf("dial the announced address: %v", err)
	}
	_ = conn.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, exited, stderr); code != cmdutil.ExitOK {
		t.Fatalf("exit %d after SIGTERM; stderr:\n%s", code, stderr.String())
	}
	if s := stderr.String(); s != m[0] {
		t.Errorf("stderr after the drain = %q, want only the listening line", s)
	}
}

func TestE2EWorkerRefusesToStart(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = taken.Close() })
	bad := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(loose, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	token := []string{"REASONIX_WORKER_TOKEN=secret"}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no token", nil, []string{"--listen", "127.0.0.1:0"}, "REASONIX_WORKER_TOKEN"},
		{"a token file others can read", nil, []string{"--listen", "127.0.0.1:0", "--token-file", loose}, "token"},
		{"the port taken", token, []string{"--listen", taken.Addr().String()}, taken.Addr().String()},
		{"bad TLS files", token, []string{"--listen", "127.0.0.1:0", "--tls-cert", bad, "--tls-key", bad}, "tls"},
		{"a workspace that is not there", token, []string{"--listen", "127.0.0.1:0", "--workspace", "ws=" + filepath.Join(e.work, "gone")}, "gone"},
		{"no listen", token, nil, "--listen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd, _, stderr := e.command(ctx, append([]string{"worker"}, tc.args...)...)
			cmd.Env = append(append([]string{}, e.env...), tc.env...)
			code := exitStatus(t, cmd.Run())
			if code != cmdutil.ExitUsage || !strings.Contains(strings.ToLower(stderr.String()), strings.ToLower(tc.want)) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming %q", code, stderr.String(), tc.want)
			}
			if strings.Contains(stderr.String(), "listening on") {
				t.Errorf("a worker that did not start announced itself: %q", stderr.String())
			}
		})
	}
}
