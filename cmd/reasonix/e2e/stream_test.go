package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
)

// streamSession is a `reasonix run --input-format stream-json` process
// driven line by line: commands go to its stdin, events come off stdout.
type streamSession struct {
	t      *testing.T
	stdin  io.WriteCloser
	events chan map[string]any
	exited chan result
	seen   []map[string]any
}

func (e *e2e) stream(args ...string) *streamSession {
	e.t.Helper()
	t := e.t.(*testing.T)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cmd, _, stderr := e.command(ctx, append([]string{"run", "--input-format", "stream-json", "--output-format", "stream-json"}, args...)...)
	cmd.Stdout = nil // a pipe instead, read as the events come
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	s := &streamSession{t: t, stdin: stdin, events: make(chan map[string]any, 1024), exited: make(chan result, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			var ev map[string]any
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				ev = map[string]any{"type": "unparsable", "line": sc.Text()}
			}
			s.events <- ev
		}
		close(s.events)
		err := cmd.Wait()
		s.exited <- result{stderr: stderr.String(), code: exitStatus(t, err)}
	}()
	return s
}

// send writes one command line.
func (s *streamSession) send(cmd string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, cmd+"\n"); err != nil {
		s.t.Fatalf("send %s: %v", cmd, err)
	}
}

// expect reads events until one of type typ for which match (may be nil)
// holds, and returns it.
func (s *streamSession) expect(typ string, match func(map[string]any) bool) map[string]any {
	s.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatalf("stdout closed while waiting for %s; seen %v", typ, s.types())
			}
			s.seen = append(s.seen, ev)
			if ev["type"] == typ && (match == nil || match(ev)) {
				return ev
			}
		case <-timeout:
			s.t.Fatalf("no %s event within 30s; seen %v", typ, s.types())
		}
	}
}

// finish closes stdin, reads the remaining events and returns the exit.
func (s *streamSession) finish() result {
	s.t.Helper()
	must(s.t, s.stdin.Close())
	for ev := range s.events {
		s.seen = append(s.seen, ev)
	}
	select {
	case r := <-s.exited:
		return r
	case <-time.After(30 * time.Second):
		s.t.Fatal("reasonix did not exit after its input ended")
		return result{}
	}
}

func (s *streamSession) types() []string {
	var out []string
	for _, ev := range s.seen {
		out = append(out, ev["type"].(string))
	}
	return out
}

// TestE2EStreamApprovalDeniedThenSecondPrompt: a write is asked for on the
// stream, denied over stdin, the model sees Blocked, a second prompt is
// answered, and the end of input ends the run with exit 0.
func TestE2EStreamApprovalDeniedThenSecondPrompt(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"x.txt","content":"no"}`}}},
		providertest.Turn{Text: "understood, not writing"},
		providertest.Turn{Text: "second answer"},
	)
	s := e.stream()
	s.send(`{"type":"prompt","text":"write x.txt"}`)
	ask := s.expect("approval_requested", nil)
	if ask["tool"] != "write_file" || !strings.Contains(ask["request_id"].(string), "/") {
		t.Fatalf("approval_requested = %v", ask)
	}
	s.send(`{"type":"approve","id":` + quote(ask["request_id"].(string)) + `,"decision":"deny"}`)
	res := s.expect("approval_resolved", nil)
	if res["decision"] != "deny" || res["request_id"] != ask["request_id"] {
		t.Fatalf("approval_resolved = %v", res)
	}
	first := s.expect("turn_done", func(ev map[string]any) bool { return ev["task"] == nil })
	if first["status"] != "ok" || first["text"] != "understood, not writing" {
		t.Fatalf("first turn_done = %v", first)
	}
	s.send(`{"type":"prompt","text":"and now?"}`)
	second := s.expect("turn_done", func(ev map[string]any) bool { return ev["task"] == nil })
	if second["text"] != "second answer" {
		t.Fatalf("second turn_done = %v", second)
	}
	r := s.finish()
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.work, "x.txt")); err == nil {
		t.Fatal("the denied write happened")
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	tm := reqs[1].Last()
	if tm.Role != "tool" || !strings.HasPrefix(tm.Content, "Blocked: denied by the user") {
		t.Fatalf("the model saw %+v", tm)
	}
	if reqs[2].LastUser() != "and now?" || len(reqs[2].Messages) <= len(reqs[1].Messages) {
		t.Fatalf("second turn did not continue the session: %d messages", len(reqs[2].Messages))
	}
}

// TestE2EStreamPromptsQueueInOrder: prompts sent while a turn runs are
// queued (prompt_queued) and answered in order; a bad command line is an
// error event, not the end of the run.
func TestE2EStreamPromptsQueueInOrder(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(open) // a failed expectation must not leave the fake blocked
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if req.LastUser() == "first" {
			<-release
		}
		return providertest.Turn{Text: "answer to " + req.LastUser()}
	}))
	s := e.stream()
	s.send(`{"type":"prompt","text":"first"}`)
	s.expect("turn_started", nil)
	s.send(`{"type":"prompt","text":"second"}`)
	s.send(`{"type":"bogus"}`)
	s.send(`{"type":"prompt","text":"third"}`)
	q := s.expect("prompt_queued", nil)
	if q["prompt"] != "second" || q["position"] != float64(1) {
		t.Fatalf("prompt_queued = %v", q)
	}
	q = s.expect("prompt_queued", nil)
	if q["prompt"] != "third" || q["position"] != float64(2) {
		t.Fatalf("prompt_queued = %v", q)
	}
	open()
	r := s.finish()
	badLine := false
	for _, ev := range s.seen {
		badLine = badLine || ev["type"] == "error" && strings.Contains(ev["message"].(string), "line 3")
	}
	if !badLine {
		t.Errorf("no error event for the bad command on line 3; events %v", s.types())
	}
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var answers []string
	for _, ev := range s.seen {
		if ev["type"] == "turn_done" && ev["task"] == nil {
			answers = append(answers, ev["text"].(string))
		}
	}
	if strings.Join(answers, "|") != "answer to first|answer to second|answer to third" {
		t.Fatalf("answers = %q", answers)
	}
}

// TestE2EStreamSubagentApproval: a subagent's write is asked for on the
// parent's stream with the task in its id, and the parent's answer lets
// it run.
func TestE2EStreamSubagentApproval(t *testing.T) {
	t.Parallel()
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		sub := strings.Contains(req.FirstUser(), "write the report")
		tools := 0
		for _, m := range req.Messages {
			if m.Role == "tool" {
				tools++
			}
		}
		switch {
		case sub && tools == 0:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"out/report.txt","content":"done\n"}`}}}
		case sub:
			return providertest.Turn{Text: "report written"}
		case tools == 0:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "task", Arguments: `{"prompt":"write the report","write_paths":["out"]}`}}}
		default:
			return providertest.Turn{Text: "parent done"}
		}
	}))
	must(t, os.MkdirAll(filepath.Join(e.work, "out"), 0o755))
	s := e.stream()
	s.send(`{"type":"prompt","text":"delegate the report"}`)
	parent := s.expect("approval_requested", nil)
	if parent["tool"] != "task" || parent["task"] != nil {
		t.Fatalf("first approval = %v", parent)
	}
	s.send(`{"type":"approve","id":` + quote(parent["request_id"].(string)) + `,"decision":"once"}`)
	sub := s.expect("approval_requested", func(ev map[string]any) bool { return ev["task"] != nil })
	if sub["tool"] != "write_file" || !strings.Contains(sub["request_id"].(string), "/"+sub["task"].(string)+"/") {
		t.Fatalf("subagent approval = %v", sub)
	}
	s.send(`{"type":"approve","id":` + quote(sub["request_id"].(string)) + `,"decision":"once"}`)
	done := s.expect("turn_done", func(ev map[string]any) bool { return ev["task"] == nil })
	if done["status"] != "ok" {
		t.Fatalf("turn_done = %v", done)
	}
	r := s.finish()
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	data, err := os.ReadFile(filepath.Join(e.work, "out", "report.txt"))
	if err != nil || string(data) != "done\n" {
		t.Fatalf("report = %q, %v", data, err)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
