package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

// The tests in this file drive `reasonix run` end to end: the real binary,
// the real tools in a temporary workspace, and the model fake on loopback.
// They assert what SPEC.md promises to users and scripts: files changed on
// disk, results the model reads back, exit codes, signals, and the
// stream-json and json output formats field by field.

// e2eExitBound is how long a run may take to end once it has been told to
// (a signal, a final reply). It is generous for a loaded CI machine and
// still far below any timeout that would hide a hang.
const e2eExitBound = 20 * time.Second

func TestE2EMultiStepEditsFile(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	// The bash step only reads the file back; the jail has tests of its
	// own, so this one runs wherever bubblewrap is missing too.
	e.writeConfig("\n[sandbox]\nbash = \"off\"\n")
	path := filepath.Join(e.work, "notes.txt")
	if err := os.WriteFile(path, []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "read", Name: "read_file", Arguments: `{"path":"notes.txt"}`}}},
		providertest.Turn{Text: "Editing.", ToolCalls: []providertest.ToolCall{{ID: "edit", Name: "edit_file",
			Arguments: `{"path":"notes.txt","old_string":"beta","new_string":"gamma"}`}}},
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "cat", Name: "bash", Arguments: `{"command":"cat notes.txt"}`}}},
		providertest.Turn{Text: "Replaced beta with gamma."},
	)
	r := e.run("run", "replace beta with gamma in notes.txt")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	// Text from every step streams to stdout; the answer is the last step's.
	if !strings.HasSuffix(r.stdout, "Replaced beta with gamma.\n") {
		t.Errorf("stdout does not end with the answer:\n%s", r)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "alpha\ngamma\n" {
		t.Errorf("notes.txt = %q, want %q", got, "alpha\ngamma\n")
	}

	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	for i, want := range []struct {
		id       string
		contains []string
		absent   []string
	}{
		{id: "read", contains: []string{"alpha", "beta"}},
		{id: "edit"},
		{id: "cat", contains: []string{"alpha\ngamma\n", "exit code: 0"}, absent: []string{"beta"}},
	} {
		res := reqs[i+1].Last()
		if res.Role != "tool" || res.ToolCallID != want.id {
			t.Fatalf("request %d: last message is %s %q, want the tool result of %q", i+1, res.Role, res.ToolCallID, want.id)
		}
		if strings.HasPrefix(res.Content, "Error:") || strings.HasPrefix(res.Content, "Blocked:") {
			t.Errorf("result of %s is an error: %q", want.id, res.Content)
		}
		for _, s := range want.contains {
			if !strings.Contains(res.Content, s) {
				t.Errorf("result of %s lacks %q: %q", want.id, s, res.Content)
			}
		}
		for _, s := range want.absent {
			if strings.Contains(res.Content, s) {
				t.Errorf("result of %s still holds %q: %q", want.id, s, res.Content)
			}
		}
	}
	// Text mode announces every call on stderr, in the order they ran.
	var calls []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if name, ok := strings.CutPrefix(line, "• "); ok {
			calls = append(calls, strings.Fields(name)[0])
		}
	}
	if want := []string{"read_file", "edit_file", "bash"}; !slices.Equal(calls, want) {
		t.Errorf("tool lines on stderr = %v, want %v\n%s", calls, want, r.stderr)
	}
}

func TestE2EParallelReadOnlyBatch(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	writeWorkFiles(t, e.work, map[string]string{
		"a.txt":      "content of A\n",
		"b.txt":      "content of B with the needle\n",
		"c.txt":      "content of C\n",
		"sub/pkg.go": "package sub\n",
	})
	calls := []providertest.ToolCall{
		{ID: "r_a", Name: "read_file", Arguments: `{"path":"a.txt"}`},
		{ID: "r_b", Name: "read_file", Arguments: `{"path":"b.txt"}`},
		{ID: "r_c", Name: "read_file", Arguments: `{"path":"c.txt"}`},
		{ID: "grep", Name: "grep", Arguments: `{"pattern":"needle"}`},
		{ID: "glob", Name: "glob", Arguments: `{"pattern":"**/*.go"}`},
		{ID: "ls", Name: "ls", Arguments: `{}`},
	}
	// Interleaved argument pieces make the client reassemble six calls at
	// once, as a real model streaming a batch does.
	e.srv.Push(providertest.Turn{ToolCalls: calls, Interleave: true}, providertest.Turn{Text: "Looked at everything."})
	r := e.run("run", "survey the workspace")
	if r.code != 0 || r.stdout != "Looked at everything.\n" {
		t.Fatalf("unexpected result:\n%s", r)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	msgs := reqs[1].Messages
	if len(msgs) < len(calls)+1 {
		t.Fatalf("second request has %d messages", len(msgs))
	}
	asst := msgs[len(msgs)-len(calls)-1]
	if asst.Role != "assistant" || len(asst.ToolCalls) != len(calls) {
		t.Fatalf("assistant message before the results = %+v", asst)
	}
	wants := map[string][]string{
		"r_a":  {"content of A"},
		"r_b":  {"content of B"},
		"r_c":  {"content of C"},
		"grep": {"b.txt", "needle"},
		"glob": {"sub/pkg.go"},
		"ls":   {"a.txt", "b.txt", "c.txt", "sub"},
	}
	for i, c := range calls {
		if got := asst.ToolCalls[i]; got.ID != c.ID || got.Name != c.Name || got.Arguments != c.Arguments {
			t.Errorf("assistant call %d = %+v, want %+v", i, got, c)
		}
		res := msgs[len(msgs)-len(calls)+i]
		if res.Role != "tool" || res.ToolCallID != c.ID {
			t.Errorf("result %d is %s for %q, want the tool result of %q", i, res.Role, res.ToolCallID, c.ID)
			continue
		}
		if strings.HasPrefix(res.Content, "Error:") || strings.HasPrefix(res.Content, "Blocked:") {
			t.Errorf("result of %s is an error: %q", c.ID, res.Content)
		}
		for _, s := range wants[c.ID] {
			if !strings.Contains(res.Content, s) {
				t.Errorf("result of %s lacks %q: %q", c.ID, s, res.Content)
			}
		}
	}
	// Each read_file result holds its own file only: results were not
	// swapped between the parallel calls.
	for i, other := range []string{"content of B", "content of C", "content of A"} {
		if res := msgs[len(msgs)-len(calls)+i]; strings.Contains(res.Content, other) {
			t.Errorf("result of %s holds %q: %q", calls[i].ID, other, res.Content)
		}
	}
}

func TestE2EPanickingTool(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	// The panicking call shares its parallel group with a healthy one,
	// which must still deliver its result.
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{
			{ID: "boom", Name: "e2e_panic", Arguments: `{}`},
			{ID: "list", Name: "ls", Arguments: `{}`},
		}},
		providertest.Turn{Text: "Survived the crash."},
	)
	writeWorkFiles(t, e.work, map[string]string{"present.txt": "x\n"})
	r := e.run("run", "call the panicking tool")
	if r.code != 0 || r.stdout != "Survived the crash.\n" {
		t.Fatalf("unexpected result:\n%s", r)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2: the process must carry on after the panic", len(reqs))
	}
	msgs := reqs[1].Messages
	if len(msgs) < 2 {
		t.Fatalf("second request has %d messages", len(msgs))
	}
	boom, list := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if boom.Role != "tool" || boom.ToolCallID != "boom" {
		t.Fatalf("first result = %+v, want the result of boom", boom)
	}
	if !strings.HasPrefix(boom.Content, "Error:") || !strings.Contains(boom.Content, "crashed") || !strings.Contains(boom.Content, "e2e_panic tool exploded") {
		t.Errorf("panic result = %q, want an error naming the crash and its reason", boom.Content)
	}
	if list.Role != "tool" || list.ToolCallID != "list" || strings.HasPrefix(list.Content, "Error:") || !strings.Contains(list.Content, "present.txt") {
		t.Errorf("sibling result = %+v, want a normal ls listing", list)
	}
	if !strings.Contains(r.stderr, "e2e_panic failed") || !strings.Contains(r.stderr, "crashed") {
		t.Errorf("stderr does not report the crash:\n%s", r.stderr)
	}
}

func TestE2ERateLimitStormRecovers(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	for i := 0; i < 3; i++ {
		e.srv.Push(providertest.Turn{Status: 429, RetryAfter: "0"})
	}
	e.srv.Push(providertest.Turn{Text: "Through the storm."})
	r := e.run("run", "hello")
	if r.code != 0 || r.stdout != "Through the storm.\n" {
		t.Fatalf("unexpected result:\n%s", r)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4 (three 429 then the answer)", len(reqs))
	}
	// A retry resends the same request, not a grown conversation.
	for i := 1; i < len(reqs); i++ {
		if !bytes.Equal(reqs[i].Body, reqs[0].Body) {
			t.Errorf("retry %d sent a different body", i)
		}
	}
}

func TestE2EServerErrorRetriesRunOut(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeConfig("max_retries = 1\n")
	// Two 500s use up one try and one retry; the third turn would succeed
	// and must never be asked for.
	e.srv.Push(
		providertest.Turn{Status: 500},
		providertest.Turn{Status: 500},
		providertest.Turn{Text: "too late"},
	)
	start := time.Now()
	r := e.run("run", "hello")
	elapsed := time.Since(start)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", r.code, r)
	}
	if !strings.Contains(r.stderr, "500") {
		t.Errorf("stderr does not name the status:\n%s", r.stderr)
	}
	if strings.Contains(r.stdout, "too late") {
		t.Errorf("stdout holds the reply after the retries ran out:\n%s", r.stdout)
	}
	if n := e.srv.Count(); n != 2 {
		t.Errorf("%d requests, want 2 (max_retries = 1)", n)
	}
	if elapsed > e2eExitBound {
		t.Errorf("gave up after %s", elapsed)
	}
}

func TestE2EZeroRetries(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeConfig("max_retries = 0\n")
	e.srv.Push(providertest.Turn{Status: 500}, providertest.Turn{Text: "retried"})
	r := e.run("run", "hello")
	if r.code != 1 || e.srv.Count() != 1 {
		t.Fatalf("max_retries = 0 made %d requests:\n%s", e.srv.Count(), r)
	}
}

func TestE2ESigintMidStream(t *testing.T) {
	t.Parallel()
	skipWithoutSignals(t)
	// SIGTERM is documented to stop a run exactly as SIGINT does.
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			testSignalMidStream(t, sig)
		})
	}
}

func testSignalMidStream(t *testing.T, sig os.Signal) {
	e := newE2E(t)
	// Three events (role, two text pieces) arrive, then the stream holds
	// the connection open without a byte: only the signal can end it.
	e.srv.Push(providertest.Turn{Text: "Partial answer that never ends", Stall: true, FaultAfterEvents: 3})
	p := startLive(t, e, "run", "--output-format", "stream-json", "tell me a story")
	p.stdout.waitFor(t, "a text_delta event", func(s string) bool { return strings.Contains(s, `"type":"text_delta"`) })
	p.signal(t, sig)
	if code := p.wait(t); code != 130 {
		t.Fatalf("exit %d, want 130\n--- stdout\n%s\n--- stderr\n%s", code, p.stdout, p.stderr)
	}

	events := decodeStream(t, p.stdout.String())
	last := events[len(events)-1]
	if last.Type != "turn_done" || last.str(t, "status") != "cancelled" {
		t.Fatalf("last event = %s, want turn_done with status cancelled", last.line)
	}
	var text strings.Builder
	for _, ev := range events {
		if ev.Type == "text_delta" {
			text.WriteString(ev.str(t, "text"))
		}
	}
	if text.Len() == 0 || !strings.HasPrefix("Partial answer that never ends", text.String()) {
		t.Errorf("streamed text %q is not a prefix of the scripted one", text.String())
	}
	if got := last.str(t, "text"); got != text.String() {
		t.Errorf("turn_done text = %q, want the partial text %q", got, text.String())
	}

	recs := readTranscript(t, e)
	if recs[0].Type != "header" || recs[0].Header == nil || recs[0].Header.ID != last.Session {
		t.Errorf("first transcript record = %+v, want the header of session %q", recs[0], last.Session)
	}
	var user, partial bool
	for _, rec := range recs[1:] {
		if rec.Type != "message" || rec.Message == nil {
			continue
		}
		switch m := rec.Message; {
		case m.Role == "user" && m.Content == "tell me a story":
			user = true
		case m.Role == "assistant" && m.Content == text.String():
			partial = true
		}
	}
	if !user {
		t.Error("transcript lacks the user message")
	}
	if !partial {
		t.Errorf("transcript lacks the partial answer %q the user saw", text.String())
	}
}

func TestE2ESigintKillsChildProcesses(t *testing.T) {
	t.Parallel()
	skipWithoutSignals(t)
	tests := []struct {
		name   string
		config string
		// mayRefuse skips the case where this platform has no sandbox
		// backend, so bash is refused. Linux has one, bubblewrap, so
		// there the case needs it (testenv) rather than skipping quietly.
		mayRefuse bool
	}{
		// The default enforces the bash sandbox (bubblewrap on Linux).
		{name: "default sandbox", mayRefuse: true},
		{name: "sandbox off", config: "\n[sandbox]\nbash = \"off\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.mayRefuse && runtime.GOOS == "linux" {
				testenv.NeedBwrap(t)
			}
			testSigintKillsChildProcesses(t, tt.config, tt.mayRefuse)
		})
	}
}

func testSigintKillsChildProcesses(t *testing.T, config string, mayRefuse bool) {
	e := newE2E(t)
	if config != "" {
		e.writeConfig(config)
	}
	// The sleep durations double as markers: with the bash sandbox the PIDs
	// the shell writes are those of its own PID namespace, so on Linux the
	// processes are found by their exact argv in /proc instead.
	n := rand.IntN(1_000_000_000)
	bg, fg := fmt.Sprintf("300.%09d", n), fmt.Sprintf("301.%09d", n)
	command := fmt.Sprintf("sleep %s & echo $! > bg.pid; sh -c 'echo $$ > fg.pid; exec sleep %s'", bg, fg)
	args, _ := json.Marshal(map[string]string{"command": command})
	e.srv.Push(providertest.Turn{Text: "Starting.", ToolCalls: []providertest.ToolCall{{ID: "sleepers", Name: "bash", Arguments: string(args)}}})

	p := startLive(t, e, "run", "start two sleepers")
	pidFile := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(e.work, name))
		return strings.TrimSpace(string(b))
	}
	refused := false
	pollUntil(t, e2eExitBound, "both sleepers running", func() bool {
		if strings.Contains(p.stderr.String(), "bash failed") {
			refused = true
			return true
		}
		if pidFile("bg.pid") == "" || pidFile("fg.pid") == "" {
			return false
		}
		return runtime.GOOS != "linux" || (len(sleepersWithArg(bg)) == 1 && len(sleepersWithArg(fg)) == 1)
	})
	if refused {
		if mayRefuse {
			t.Skipf("bash cannot run here:\n%s", p.stderr)
		}
		t.Fatalf("bash failed:\n%s", p.stderr)
	}
	p.signal(t, os.Interrupt)
	if code := p.wait(t); code != 130 {
		t.Fatalf("exit %d, want 130\n--- stdout\n%s\n--- stderr\n%s", code, p.stdout, p.stderr)
	}
	if runtime.GOOS == "linux" {
		pollUntil(t, e2eExitBound, "no sleeper left", func() bool {
			return len(sleepersWithArg(bg)) == 0 && len(sleepersWithArg(fg)) == 0
		})
	} else {
		for _, name := range []string{"bg.pid", "fg.pid"} {
			pid, err := strconv.Atoi(pidFile(name))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			pollUntil(t, e2eExitBound, name+" gone", func() bool { return !processAlive(pid) })
		}
	}
	if !strings.Contains(p.stderr.String(), "interrupted; transcript saved to") {
		t.Errorf("stderr does not report the interruption:\n%s", p.stderr)
	}
	if n := e.srv.Count(); n != 1 {
		t.Errorf("%d requests, want 1: a cancelled turn asks the model nothing more", n)
	}

	var sawCall, sawResult bool
	for _, rec := range readTranscript(t, e) {
		m := rec.Message
		if rec.Type != "message" || m == nil {
			continue
		}
		if m.Role == "assistant" && len(m.ToolCalls) == 1 && m.ToolCalls[0].ID == "sleepers" && m.ToolCalls[0].Name == "bash" {
			sawCall = true
		}
		if m.Role == "tool" && m.ToolCallID == "sleepers" {
			sawResult = true
			if !strings.HasPrefix(m.Content, "Error:") || !strings.Contains(m.Content, "cancelled") {
				t.Errorf("bash result = %q, want an error saying it was cancelled", m.Content)
			}
		}
	}
	if !sawCall || !sawResult {
		t.Errorf("transcript: assistant bash call %v, its result %v; want both", sawCall, sawResult)
	}
}

func TestE2EStreamJSONFields(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	writeWorkFiles(t, e.work, map[string]string{"hello.txt": "hello from disk\n"})
	const (
		reasoning = "The user wants the file; read it first."
		text1     = "Reading it."
		text2     = "The file says hello."
		args      = `{"path":"hello.txt"}`
	)
	e.srv.Push(
		providertest.Turn{Reasoning: reasoning, Text: text1,
			ToolCalls: []providertest.ToolCall{{ID: "call_read", Name: "read_file", Arguments: args}},
			Usage:     &providertest.Usage{PromptTokens: 120, CompletionTokens: 30, CacheHitTokens: 100, ReasoningTokens: 7}},
		providertest.Turn{Text: text2,
			Usage: &providertest.Usage{PromptTokens: 200, CompletionTokens: 10, CacheHitTokens: 150}},
	)
	r := e.run("run", "--output-format", "stream-json", "what does hello.txt say?")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	events := decodeStream(t, r.stdout)
	ts := e.transcripts()
	if len(ts) != 1 {
		t.Fatalf("transcripts = %v", ts)
	}
	session := strings.TrimSuffix(filepath.Base(ts[0]), ".jsonl")

	// Fields SPEC.md documents for each type (besides the common ones).
	// turn_done's error is checked apart: it is only meaningful on failure.
	documented := map[string][]string{
		"session_started": {"model", "cwd", "transcript", "tools"},
		"text_delta":      {"text"},
		"reasoning_delta": {"text"},
		"tool_started":    {"call_id", "tool", "args"},
		"tool_finished":   {"call_id", "tool", "is_error", "duration_ms", "output", "output_bytes"},
		"usage":           {"usage", "total"},
		"notice":          {"level", "message"},
		"error":           {"message"},
		"turn_done":       {"status", "text", "steps", "usage"},
		"turn_started":    {"prompt"},
	}
	var prevSeq int64
	counts := map[string]int{}
	for i, ev := range events {
		counts[ev.Type]++
		want, known := documented[ev.Type]
		if !known {
			t.Errorf("event %d has undocumented type %q", i, ev.Type)
		}
		for _, k := range append([]string{"seq", "time", "session"}, want...) {
			if _, ok := ev.fields[k]; !ok {
				t.Errorf("event %d (%s) lacks %q: %s", i, ev.Type, k, ev.line)
			}
		}
		if ev.Seq <= prevSeq {
			t.Errorf("event %d: seq %d after %d", i, ev.Seq, prevSeq)
		}
		prevSeq = ev.Seq
		if _, err := time.Parse(time.RFC3339Nano, ev.Time); err != nil {
			t.Errorf("event %d: time %q: %v", i, ev.Time, err)
		}
		if ev.Session != session {
			t.Errorf("event %d: session %q, want %q (the transcript's name)", i, ev.Session, session)
		}
		if _, ok := ev.fields["task"]; ok {
			t.Errorf("event %d carries a task in the main session: %s", i, ev.line)
		}
	}
	if events[0].Seq != 1 {
		t.Errorf("first seq = %d, want 1", events[0].Seq)
	}
	for typ, n := range map[string]int{"session_started": 1, "tool_started": 1, "tool_finished": 1, "usage": 2, "turn_done": 1, "error": 0} {
		if counts[typ] != n {
			t.Errorf("%d %s events, want %d", counts[typ], typ, n)
		}
	}

	start := events[0]
	if start.Type != "session_started" {
		t.Fatalf("first event = %s, want session_started", start.line)
	}
	if got := start.str(t, "model"); got != "fake-model" {
		t.Errorf("session_started model = %q", got)
	}
	if got := start.str(t, "cwd"); !samePath(got, e.work) {
		t.Errorf("session_started cwd = %q, want %q", got, e.work)
	}
	if got := start.str(t, "transcript"); got != ts[0] {
		t.Errorf("session_started transcript = %q, want %q", got, ts[0])
	}
	var tools []string
	start.decode(t, "tools", &tools)
	if !slices.Contains(tools, "read_file") {
		t.Errorf("session_started tools = %v, want read_file among them", tools)
	}

	var gotReasoning, gotText strings.Builder
	var startedAt, finishedAt, lastTextAt, firstReasoningAt, firstTextAt int
	firstReasoningAt, firstTextAt = -1, -1
	var usages []evt
	for i, ev := range events {
		switch ev.Type {
		case "reasoning_delta":
			gotReasoning.WriteString(ev.str(t, "text"))
			if firstReasoningAt < 0 {
				firstReasoningAt = i
			}
		case "text_delta":
			gotText.WriteString(ev.str(t, "text"))
			if firstTextAt < 0 {
				firstTextAt = i
			}
			if gotText.Len() <= len(text1) {
				lastTextAt = i
			}
		case "tool_started":
			startedAt = i
			if ev.str(t, "call_id") != "call_read" || ev.str(t, "tool") != "read_file" || ev.str(t, "args") != args {
				t.Errorf("tool_started = %s", ev.line)
			}
		case "tool_finished":
			finishedAt = i
			var isErr bool
			var dur, size int64
			ev.decode(t, "is_error", &isErr)
			ev.decode(t, "duration_ms", &dur)
			ev.decode(t, "output_bytes", &size)
			out := ev.str(t, "output")
			if ev.str(t, "call_id") != "call_read" || ev.str(t, "tool") != "read_file" || isErr || dur < 0 {
				t.Errorf("tool_finished = %s", ev.line)
			}
			if !strings.Contains(out, "hello from disk") || size != int64(len(out)) {
				t.Errorf("tool_finished output %q with output_bytes %d", out, size)
			}
		case "usage":
			usages = append(usages, ev)
		}
	}
	if gotReasoning.String() != reasoning {
		t.Errorf("reasoning deltas = %q, want %q", gotReasoning.String(), reasoning)
	}
	if gotText.String() != text1+text2 {
		t.Errorf("text deltas = %q, want %q", gotText.String(), text1+text2)
	}
	if !(firstReasoningAt >= 0 && firstReasoningAt < firstTextAt && lastTextAt < startedAt && startedAt < finishedAt) {
		t.Errorf("order: reasoning at %d, text at %d..%d, tool_started at %d, tool_finished at %d",
			firstReasoningAt, firstTextAt, lastTextAt, startedAt, finishedAt)
	}

	step1 := usageCounts{PromptTokens: 120, CompletionTokens: 30, TotalTokens: 150, CacheHitTokens: 100, CacheMissTokens: 20, ReasoningTokens: 7}
	step2 := usageCounts{PromptTokens: 200, CompletionTokens: 10, TotalTokens: 210, CacheHitTokens: 150, CacheMissTokens: 50}
	sum := step1.plus(step2)
	if len(usages) == 2 {
		for i, want := range []struct{ usage, total usageCounts }{{step1, step1}, {step2, sum}} {
			if got := decodeUsage(t, usages[i], "usage"); got != want.usage {
				t.Errorf("usage %d: usage = %+v, want %+v", i, got, want.usage)
			}
			if got := decodeUsage(t, usages[i], "total"); got != want.total {
				t.Errorf("usage %d: total = %+v, want %+v", i, got, want.total)
			}
		}
	}

	done := events[len(events)-1]
	if done.Type != "turn_done" {
		t.Fatalf("last event = %s, want turn_done", done.line)
	}
	var steps int
	done.decode(t, "steps", &steps)
	if done.str(t, "status") != "ok" || steps != 2 || done.str(t, "text") != text2 {
		t.Errorf("turn_done = %s", done.line)
	}
	if raw, ok := done.fields["error"]; ok && string(raw) != `""` {
		t.Errorf("turn_done of a successful turn carries an error: %s", done.line)
	}
	if got := decodeUsage(t, done, "usage"); got != sum {
		t.Errorf("turn_done usage = %+v, want %+v", got, sum)
	}
}

func TestE2EJSONOutput(t *testing.T) {
	t.Parallel()
	lsForever := func(providertest.Request) providertest.Turn {
		return providertest.Turn{Text: "Looking.", ToolCalls: []providertest.ToolCall{{Name: "ls", Arguments: `{}`}}}
	}
	tests := []struct {
		name   string
		turns  []providertest.Turn
		opts   []providertest.Option
		args   []string
		code   int
		status string
		text   string
		err    string
		steps  int
	}{
		{name: "ok", turns: []providertest.Turn{{Text: "The answer."}}, code: 0, status: "ok", text: "The answer.", steps: 1},
		// An in-stream error arrives after the first byte, so it is not
		// retried: the run fails at once and says why.
		{name: "failed", turns: []providertest.Turn{{Text: "Half", StreamError: "model overloaded", FaultAfterEvents: 2}},
			code: 1, status: "failed", text: "Half", err: "model overloaded", steps: 1},
		{name: "max steps", opts: []providertest.Option{providertest.WithResponder(lsForever)}, args: []string{"--max-steps", "2"},
			code: 1, status: "max_steps", text: "Looking.", err: "max steps", steps: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, tt.opts...)
			e.srv.Push(tt.turns...)
			r := e.run(append(append([]string{"run", "-o", "json"}, tt.args...), "answer please")...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d:\n%s", r.code, tt.code, r)
			}
			if strings.Count(r.stdout, "\n") != 1 || !strings.HasSuffix(r.stdout, "\n") {
				t.Fatalf("stdout is not exactly one line:\n%s", r.stdout)
			}
			dec := json.NewDecoder(strings.NewReader(r.stdout))
			var fields map[string]json.RawMessage
			if err := dec.Decode(&fields); err != nil {
				t.Fatalf("stdout is not a JSON object: %v\n%s", err, r.stdout)
			}
			if _, err := dec.Token(); !errors.Is(err, io.EOF) {
				t.Fatalf("more than one JSON value on stdout:\n%s", r.stdout)
			}
			for _, k := range []string{"session", "status", "text", "steps", "usage", "transcript"} {
				if _, ok := fields[k]; !ok {
					t.Errorf("result lacks %q: %s", k, r.stdout)
				}
			}
			var out struct {
				Session    string      `json:"session"`
				Status     string      `json:"status"`
				Text       string      `json:"text"`
				Error      string      `json:"error"`
				Steps      int         `json:"steps"`
				Usage      usageCounts `json:"usage"`
				Transcript string      `json:"transcript"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatal(err)
			}
			if out.Status != tt.status || out.Text != tt.text || out.Steps != tt.steps {
				t.Errorf("status %q text %q steps %d, want %q %q %d", out.Status, out.Text, out.Steps, tt.status, tt.text, tt.steps)
			}
			if (tt.err == "" && out.Error != "") || !strings.Contains(out.Error, tt.err) {
				t.Errorf("error = %q, want one containing %q", out.Error, tt.err)
			}
			// Usage comes with the stream's last chunk, so only a finished
			// stream has any.
			if tt.status != "failed" && (out.Usage.PromptTokens <= 0 || out.Usage.TotalTokens != out.Usage.PromptTokens+out.Usage.CompletionTokens) {
				t.Errorf("usage = %+v", out.Usage)
			}
			ts := e.transcripts()
			if len(ts) != 1 || out.Transcript != ts[0] {
				t.Errorf("transcript = %q, files %v", out.Transcript, ts)
			}
			if out.Session == "" || out.Session != strings.TrimSuffix(filepath.Base(out.Transcript), ".jsonl") {
				t.Errorf("session %q does not name transcript %q", out.Session, out.Transcript)
			}
		})
	}
}

func TestE2EMaxSteps(t *testing.T) {
	t.Parallel()
	// A model that never stops calling tools.
	e := newE2E(t, providertest.WithResponder(func(providertest.Request) providertest.Turn {
		return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "ls", Arguments: `{}`}}}
	}))
	r := e.run("run", "--max-steps", "3", "loop forever")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", r.code, r)
	}
	if n := e.srv.Count(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	if !strings.Contains(r.stderr, "max steps") {
		t.Errorf("stderr does not mention max steps:\n%s", r.stderr)
	}
}

func TestE2EUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// config, when set, replaces the extra TOML of the user config.
		config string
		args   func(e *e2e) []string
		stderr func(e *e2e) []string
	}{
		{
			name:   "unknown model",
			args:   func(*e2e) []string { return []string{"run", "--model", "nope", "hi"} },
			stderr: func(*e2e) []string { return []string{`"nope"`, "choices", "fake"} },
		},
		{
			name:   "unknown output format",
			args:   func(*e2e) []string { return []string{"run", "--output-format", "xml", "hi"} },
			stderr: func(*e2e) []string { return []string{`"xml"`, "text, json, stream-json"} },
		},
		{
			name:   "negative max steps",
			args:   func(*e2e) []string { return []string{"run", "--max-steps", "-1", "hi"} },
			stderr: func(*e2e) []string { return []string{"--max-steps"} },
		},
		{
			// writeConfig puts the extra TOML on line 10.
			name:   "malformed user config",
			config: "broken = = 1\n",
			args:   func(*e2e) []string { return []string{"run", "hi"} },
			stderr: func(e *e2e) []string { return []string{filepath.Join(e.home, "config.toml") + ":10"} },
		},
		{
			name:   "missing cwd",
			args:   func(e *e2e) []string { return []string{"run", "--cwd", filepath.Join(e.work, "nonexistent"), "hi"} },
			stderr: func(e *e2e) []string { return []string{"--cwd", filepath.Join(e.work, "nonexistent")} },
		},
		{
			name:   "no prompt",
			args:   func(*e2e) []string { return []string{"run"} },
			stderr: func(*e2e) []string { return []string{"no prompt"} },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			if tt.config != "" {
				e.writeConfig(tt.config)
			}
			e.srv.Push(providertest.Turn{Text: "must not be asked"})
			r := e.run(tt.args(e)...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2:\n%s", r.code, r)
			}
			for _, s := range tt.stderr(e) {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
			if n := e.srv.Count(); n != 0 {
				t.Errorf("%d requests reached the model", n)
			}
		})
	}
}

// writeWorkFiles creates files (relative path → content) under dir.
func writeWorkFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func skipWithoutSignals(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("SIGINT cannot be delivered to a child process on windows")
	}
}

// watchedBuffer is an output stream a test can wait on: every write wakes
// the waiters, so nothing polls or sleeps.
type watchedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newWatchedBuffer() *watchedBuffer {
	return &watchedBuffer{changed: make(chan struct{})}
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	close(w.changed)
	w.changed = make(chan struct{})
	return n, err
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitFor returns once ok holds for the contents written so far, failing
// the test after e2eExitBound.
func (w *watchedBuffer) waitFor(t *testing.T, what string, ok func(string) bool) {
	t.Helper()
	timer := time.NewTimer(e2eExitBound)
	defer timer.Stop()
	for {
		w.mu.Lock()
		s, changed := w.buf.String(), w.changed
		w.mu.Unlock()
		if ok(s) {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("no %s after %s; output so far:\n%s", what, e2eExitBound, s)
		}
	}
}

// liveProc is a reasonix process the test interacts with while it runs.
type liveProc struct {
	cmd            *exec.Cmd
	stdout, stderr *watchedBuffer
	exited         chan error
}

// startLive starts the binary with args and kills it when the test ends,
// should it still run.
func startLive(t *testing.T, e *e2e, args ...string) *liveProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	cmd, _, _ := e.command(ctx, args...)
	p := &liveProc{cmd: cmd, stdout: newWatchedBuffer(), stderr: newWatchedBuffer(), exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-p.exited
	})
	return p
}

func (p *liveProc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("send %v: %v", sig, err)
	}
}

// wait returns the exit code, failing the test if the process does not
// end within e2eExitBound.
func (p *liveProc) wait(t *testing.T) int {
	t.Helper()
	timer := time.NewTimer(e2eExitBound)
	defer timer.Stop()
	select {
	case err := <-p.exited:
		p.exited <- err // for the cleanup
		return exitStatus(t, err)
	case <-timer.C:
		t.Fatalf("still running %s after the signal\n--- stdout\n%s\n--- stderr\n%s", e2eExitBound, p.stdout, p.stderr)
		return -1
	}
}

// pollUntil checks cond until it holds, failing the test after timeout.
// It is for state outside the test's reach (files, other processes) that
// sends no notification.
func pollUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sleepersWithArg returns the PIDs of live `sleep arg` processes, read from
// /proc (Linux). A zombie's cmdline is empty, so only running ones count.
func sleepersWithArg(arg string) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(argv) == 2 && filepath.Base(argv[0]) == "sleep" && argv[1] == arg {
			pid, _ := strconv.Atoi(filepath.Base(dir))
			pids = append(pids, pid)
		}
	}
	return pids
}

func processAlive(pid int) bool {
	proc, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return proc.Signal(syscall.Signal(0)) == nil
}

// event is one stream-json line: the common fields decoded, every field
// kept raw for presence checks.
type evt struct {
	Type    string `json:"type"`
	Seq     int64  `json:"seq"`
	Time    string `json:"time"`
	Session string `json:"session"`
	fields  map[string]json.RawMessage
	line    string
}

// decodeStream parses stream-json output, failing on any line that is not
// one JSON object with a type.
func decodeStream(t *testing.T, out string) []evt {
	t.Helper()
	var events []evt
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		ev := evt{line: sc.Text()}
		if err := json.Unmarshal(sc.Bytes(), &ev.fields); err != nil {
			t.Fatalf("stream-json line is not a JSON object: %v\n%s", err, ev.line)
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Type == "" {
			t.Fatalf("stream-json line without a valid type and common fields (%v): %s", err, ev.line)
		}
		events = append(events, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 {
		t.Fatal("no stream-json events")
	}
	return events
}

func (ev evt) decode(t *testing.T, key string, v any) {
	t.Helper()
	raw, ok := ev.fields[key]
	if !ok {
		t.Errorf("%s event lacks %q: %s", ev.Type, key, ev.line)
		return
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Errorf("%s event field %q: %v", ev.Type, key, err)
	}
}

func (ev evt) str(t *testing.T, key string) string {
	t.Helper()
	var s string
	ev.decode(t, key, &s)
	return s
}

// usageCounts is the documented usage object; decodeUsage insists on every
// key being present.
type usageCounts struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CacheHitTokens   int `json:"cache_hit_tokens"`
	CacheMissTokens  int `json:"cache_miss_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens"`
}

func (u usageCounts) plus(o usageCounts) usageCounts {
	return usageCounts{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
		CacheHitTokens:   u.CacheHitTokens + o.CacheHitTokens,
		CacheMissTokens:  u.CacheMissTokens + o.CacheMissTokens,
		ReasoningTokens:  u.ReasoningTokens + o.ReasoningTokens,
	}
}

func decodeUsage(t *testing.T, ev evt, key string) usageCounts {
	t.Helper()
	var raw map[string]json.RawMessage
	ev.decode(t, key, &raw)
	for _, k := range []string{"prompt_tokens", "completion_tokens", "total_tokens", "cache_hit_tokens", "cache_miss_tokens", "reasoning_tokens"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("%s.%s lacks %q: %s", ev.Type, key, k, ev.line)
		}
	}
	var u usageCounts
	ev.decode(t, key, &u)
	return u
}

// transcriptRecord is one transcript line as SPEC.md describes it.
type transcriptRecord struct {
	Type   string `json:"type"`
	Header *struct {
		Version int    `json:"version"`
		ID      string `json:"id"`
	} `json:"header"`
	Message *struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"message"`
}

// readTranscript reads the run's only transcript, failing on any line that
// is not a complete JSON record.
func readTranscript(t *testing.T, e *e2e) []transcriptRecord {
	t.Helper()
	ts := e.transcripts()
	if len(ts) != 1 {
		t.Fatalf("transcripts = %v, want one", ts)
	}
	data, err := os.ReadFile(ts[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		t.Errorf("transcript does not end with a complete line")
	}
	var recs []transcriptRecord
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var rec transcriptRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("transcript line %d is not JSON: %v\n%s", i+1, err, line)
		}
		recs = append(recs, rec)
	}
	if len(recs) == 0 || recs[0].Type != "header" || recs[0].Header == nil || recs[0].Header.Version != 1 {
		t.Fatalf("transcript does not start with a version 1 header:\n%s", data)
	}
	return recs
}

// samePath compares two directory names after resolving symlinks, since
// a temporary directory may be reached through one (macOS /var).
func samePath(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}
