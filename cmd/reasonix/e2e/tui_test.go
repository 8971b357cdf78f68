package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/provider/providertest"
	"reasonix/core/session"
	"reasonix/core/testenv"
)

// The tests in this file drive bare `reasonix`, the chat TUI, in a real
// terminal (tmux_test.go) against the model fake: what the user types
// reaches the model as the session would send it, and what the model and
// the session do shows on the screen.

// The status line names the model and says "idle" once the chat has
// opened its session and waits for input.
const (
	tuiReady = "fake-model"
	tuiIdle  = "idle"
	// tuiQuitArmed is the status hint after one Ctrl-C on an idle chat.
	tuiQuitArmed = "press Ctrl-C again to quit"
	// tuiComposer is the empty composer's placeholder.
	tuiComposer = "Ask anything"
)

// openTUI starts the chat in e's workspace and waits until it is ready for
// input. Keys sent before that would reach a terminal not yet in raw mode.
func openTUI(t *testing.T, e *e2e, args ...string) *tmuxTerm {
	t.Helper()
	return openTUISized(t, e, 120, 40, args...)
}

// openTUISized is openTUI on a terminal of width × height.
func openTUISized(t *testing.T, e *e2e, width, height int, args ...string) *tmuxTerm {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the chat is tested in tmux")
	}
	m := startTUISized(t, e, width, height, args...)
	m.waitFor("the chat to start", func(s string) bool { return strings.Contains(s, tuiReady) && strings.Contains(s, tuiIdle) })
	return m
}

// send types a line and presses Enter.
func (m *tmuxTerm) send(line string) {
	m.t.Helper()
	m.typeText(line)
	m.keys("Enter")
}

// quit presses Ctrl-C twice on an idle chat and checks that the first
// only asks for the second, which quits with exit 0, and that nothing was
// written to stderr: the TUI owns the terminal.
func (m *tmuxTerm) quit() {
	m.t.Helper()
	m.waitFor("the chat to be idle", func(s string) bool { return strings.Contains(s, tuiIdle) })
	m.keys("C-c")
	m.waitFor("the quit hint", func(s string) bool { return strings.Contains(s, tuiQuitArmed) })
	m.keys("C-c")
	if code := m.waitExit(); code != 0 {
		m.t.Fatalf("exit %d after Ctrl-C twice, want 0; the screen:\n%s\n--- stderr\n%s", code, m.scrollback(), m.stderrText())
	}
	if s := m.stderrText(); s != "" {
		m.t.Errorf("reasonix wrote to stderr behind the TUI:\n%s", s)
	}
}

// lastRequest is the fake's last recorded request from the session itself
// (not a subagent's).
func lastRequest(t *testing.T, e *e2e) providertest.Request {
	t.Helper()
	reqs := e.srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if !isSubagent(reqs[i]) {
			return reqs[i]
		}
	}
	t.Fatal("the model got no request")
	return providertest.Request{}
}

// waitRequests waits until the fake has recorded n requests.
func waitRequests(t *testing.T, e *e2e, n int) []providertest.Request {
	t.Helper()
	reqs, err := e.srv.WaitRequests(n, tuiWait)
	if err != nil {
		t.Fatalf("waiting for %d model requests: %v", n, err)
	}
	return reqs
}

// TestE2ETUIOpenErrors: what keeps the first session from opening is
// reported on the plain terminal, before the chat takes the screen, with
// the exit code `reasonix run` would give.
func TestE2ETUIOpenErrors(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the chat is tested in tmux")
	}
	tests := []struct {
		name string
		args []string
		// noKey leaves the API key out of the environment.
		noKey bool
		want  []string
	}{
		{name: "missing key", noKey: true, want: []string{"FAKE_API_KEY", "reasonix setup"}},
		{name: "unknown session", args: []string{"--resume", "20260101-000000-none"}, want: []string{`--resume "20260101-000000-none"`, "reasonix sessions list"}},
		{name: "nothing to continue", args: []string{"-c"}, want: []string{"--continue: this workspace has no session yet"}},
		{name: "unknown model", args: []string{"-m", "nosuch"}, want: []string{`unknown model "nosuch"`, "fake/fake-model"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			if tt.noKey {
				e.env = slices.DeleteFunc(slices.Clone(e.env), func(kv string) bool { return strings.HasPrefix(kv, "FAKE_API_KEY=") })
			}
			m := startTUI(t, e, tt.args...)
			if code := m.waitExit(); code != cmdutil.ExitUsage {
				t.Fatalf("exit %d, want %d\n--- stderr\n%s", code, cmdutil.ExitUsage, m.stderrText())
			}
			for _, w := range tt.want {
				if !strings.Contains(m.stderrText(), w) {
					t.Errorf("stderr does not say %q:\n%s", w, m.stderrText())
				}
			}
			if n := e.srv.Count(); n != 0 {
				t.Errorf("%d request(s) reached the model", n)
			}
		})
	}
}

// sessionLine matches the chat's line naming the session it opened.
var sessionLine = regexp.MustCompile(`· session (\S+) · `)

// TestE2ETUIContinue: a chat quit and started again with -c, or with
// --resume and the session's id, continues the same session: it opens
// with the earlier conversation drawn, and the model's next request
// carries it.
func TestE2ETUIContinue(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"continue", "resume"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			e.srv.Push(providertest.Turn{Text: "Noted: seven."}, providertest.Turn{Text: "It was seven."})
			first := openTUI(t, e)
			first.send("remember seven")
			s := first.waitText("Noted: seven.")
			id := sessionLine.FindStringSubmatch(s)
			if id == nil {
				t.Fatalf("no session line on screen:\n%s", s)
			}
			first.quit()

			args := []string{"-c"}
			if how == "resume" {
				args = []string{"--resume", id[1]}
			}
			again := openTUI(t, e, args...)
			// The earlier conversation is drawn where the chat opens.
			again.waitText("earlier in this session:", "› remember seven", "Noted: seven.", "── continued ──")
			opened := again.waitFor("the session line", sessionLine.MatchString)
			if got := sessionLine.FindStringSubmatch(opened); got[1] != id[1] {
				t.Errorf("the second chat opened session %v, want %s", got, id[1])
			}
			again.send("which number?")
			again.waitText("It was seven.")
			reqs := waitRequests(t, e, 2)
			if body := string(reqs[1].Body); !strings.Contains(body, "remember seven") || !strings.Contains(body, "Noted: seven.") {
				t.Errorf("the continued request does not carry the first chat's turn:\n%s", body)
			}
			again.quit()
			if ts := e.transcripts(); len(ts) != 1 {
				t.Errorf("transcripts = %v, want the one session", ts)
			}
		})
	}
}

// TestE2ETUIPromptAndAnswer types a prompt and sees the answer stream
// onto the screen: the first reply stops mid-stream with the connection
// held open, so what is on screen is what has streamed so far; Ctrl-C
// cancels that turn and the chat stays. The second reply streams whole.
// After quitting, the transcript holds the conversation.
func TestE2ETUIPromptAndAnswer(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	const partial = "Let me count: one, two,"
	const answer = "Forty-two, counted twice over."
	e.srv.Push(
		// One event is the role, one each piece of ChunkBytes: the stream
		// stops after the first two pieces, the rest never comes.
		providertest.Turn{Text: partial + " and the rest never arrives.", ChunkBytes: 12, FaultAfterEvents: 3, Stall: true},
		providertest.Turn{Text: answer, ChunkDelay: 20 * time.Millisecond},
	)
	m := openTUI(t, e)
	m.send("count for me")
	s := m.waitFor("the answer so far", func(s string) bool { return strings.Contains(s, partial) })
	if strings.Contains(s, "never arrives") || !strings.Contains(s, "running") {
		t.Fatalf("the screen should show the answer so far while the turn runs:\n%s", s)
	}
	m.keys("C-c")
	m.waitFor("the turn cancelled", func(s string) bool { return strings.Contains(s, tuiIdle) })

	m.send("what is the answer?")
	m.waitText("what is the answer?", answer)
	if got := lastRequest(t, e).LastUser(); got != "what is the answer?" {
		t.Errorf("the model got %q", got)
	}
	t.Logf("the chat after the turns:\n%s", m.scrollback())
	m.quit()
	ts := e.transcripts()
	if len(ts) != 1 {
		t.Fatalf("transcripts = %v, want one", ts)
	}
	b, err := os.ReadFile(ts[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"count for me", "what is the answer?", answer} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the transcript lacks %q:\n%s", want, b)
		}
	}
}

// TestE2ETUIDeniedWrite: under the default ask posture the model's
// write_file waits for the user; `n` denies it, the screen says so, the
// file is never written and the model is told the call was blocked.
func TestE2ETUIDeniedWrite(t *testing.T) {
	t.Parallel()
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if len(toolResults(req)) == 0 {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "w", Name: "write_file",
				Arguments: `{"path":"out.txt","content":"must not be written"}`}}}
		}
		return providertest.Turn{Text: "Understood, I left out.txt alone."}
	}))
	m := openTUI(t, e)
	m.send("write out.txt")
	s := m.waitFor("the approval question", func(s string) bool {
		low := strings.ToLower(s)
		return strings.Contains(s, "write_file") && strings.Contains(s, "out.txt") &&
			(strings.Contains(low, "allow") || strings.Contains(low, "approve"))
	})
	t.Logf("the approval question:\n%s", s)
	// The question owns the keyboard: no composer is drawn under it.
	if strings.Contains(s, tuiComposer) {
		t.Errorf("the composer is shown under the approval question:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(e.work, "out.txt")); !os.IsNotExist(err) {
		t.Fatalf("out.txt exists before the user answered (%v)", err)
	}
	m.typeText("n")
	m.waitLog(`"denied" or "blocked"`, func(s string) bool {
		low := strings.ToLower(s)
		return strings.Contains(low, "denied") || strings.Contains(low, "blocked")
	})
	s = m.waitFor("the answer after the denial", func(s string) bool {
		return strings.Contains(s, "Understood, I left out.txt alone.") && strings.Contains(s, tuiIdle)
	})
	if !strings.Contains(s, tuiComposer) {
		t.Errorf("the composer is not back after the question:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(e.work, "out.txt")); !os.IsNotExist(err) {
		t.Errorf("out.txt was written (%v)", err)
	}
	res := toolResults(lastRequest(t, e))
	if len(res) != 1 || res[0].ToolCallID != "w" || !strings.Contains(res[0].Content, "Blocked: denied by the user") {
		t.Errorf("the model was not told the write was denied: %+v", res)
	}
	m.quit()
}

// reviewCommand is a project command with frontmatter and $ARGUMENTS.
const reviewCommand = `---
description: Review the staged diff
argument-hint: [focus-area]
---
Review the staged diff. Focus on $ARGUMENTS, list bugs with file:line.
`

// TestE2ETUIHelp: /help lists the built-in commands and the project's
// custom command with its description, and never reaches the model.
func TestE2ETUIHelp(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	testenv.WriteFile(t, filepath.Join(e.work, ".reasonix", "commands", "review.md"), reviewCommand, 0o644)
	m := openTUI(t, e)
	m.send("/help")
	m.waitText("/compact", "/new", "/clear", "/help", "/review", "Review the staged diff")
	if n := e.srv.Count(); n != 0 {
		t.Errorf("/help sent %d request(s) to the model", n)
	}
	m.quit()
}

// TestE2ETUICustomCommand: /review's body, with $ARGUMENTS filled in, is
// the user turn the model gets.
func TestE2ETUICustomCommand(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	testenv.WriteFile(t, filepath.Join(e.work, ".reasonix", "commands", "review.md"), reviewCommand, 0o644)
	e.srv.Push(providertest.Turn{Text: "No bugs in the diff."})
	m := openTUI(t, e)
	m.send("/review error handling")
	m.waitText("No bugs in the diff.")
	got := lastRequest(t, e).LastUser()
	if !strings.Contains(got, "Review the staged diff. Focus on error handling, list bugs with file:line.") ||
		strings.Contains(got, "$ARGUMENTS") || strings.Contains(got, "description:") {
		t.Errorf("the model got %q, want the rendered body of review.md", got)
	}
	m.quit()
}

// TestE2ETUIFileReference: @note.txt reaches the model as the file's
// contents in a <file> block, with the message it was part of.
func TestE2ETUIFileReference(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	testenv.WriteFile(t, filepath.Join(e.work, "note.txt"), "remember the milk\n", 0o644)
	e.srv.Push(providertest.Turn{Text: "Milk, noted."})
	m := openTUI(t, e)
	m.typeText("summarise @note.txt")
	// The @ menu completes the path; a space ends the reference.
	m.typeText(" please")
	m.keys("Enter")
	m.waitText("Milk, noted.")
	got := lastRequest(t, e).LastUser()
	if !strings.Contains(got, `<file path="note.txt">`) || !strings.Contains(got, "remember the milk") || !strings.Contains(got, "summarise") {
		t.Errorf("the model got %q, want note.txt in a <file> block and the message", got)
	}
	m.quit()
}

// fleetRow matches a row of the fleet panel: the state, then the task id.
var fleetRow = regexp.MustCompile(`(?m)^[> ]*(queued|running|ok|failed|cancelled)\s+f1\.(\d+)\s`)

// fleetRows adds the rows on screen to rows, task number to state.
func fleetRows(screen string, rows map[int]string) {
	for _, row := range fleetRow.FindAllStringSubmatch(screen, -1) {
		n, _ := strconv.Atoi(row[2])
		rows[n] = row[1]
	}
}

// heldUntil is a gate for the model fake's answers: they wait on release
// until the test calls free, or the test ends (a handler must return
// before the fake closes).
func heldUntil(t *testing.T) (release <-chan struct{}, free func()) {
	ch := make(chan struct{})
	var once sync.Once
	free = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(free)
	return ch, free
}

// TestE2ETUIFleetPanel: a 16-task fleet, allowed with y, shows all 16 of
// its rows at once on a 160×50 terminal while its tasks run (each held
// until the test has seen them all); walking the focused panel selects
// each; once the last task ends the panel folds to one summary line in the
// scrollback, and a second fleet gets a panel of its own.
func TestE2ETUIFleetPanel(t *testing.T) {
	t.Parallel()
	release, free := heldUntil(t)
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if isSubagent(req) {
			if strings.Contains(req.FirstUser(), "second") {
				return providertest.Turn{Text: "second done"}
			}
			select {
			case <-release:
			case <-time.After(tuiWait):
			}
			return providertest.Turn{Text: "done with " + req.FirstUser()}
		}
		switch len(toolResults(req)) {
		case 0:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: fleetArgs(16, nil)}}}
		case 1:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "two", Name: "fleet", Arguments: `{"tasks":[{"prompt":"second fleet a"},{"prompt":"second fleet b"}]}`}}}
		}
		return providertest.Turn{Text: "Both fleets came back."}
	}))
	e.writeConfig("\n[agent]\nmax_subagent_concurrency = 16\n")
	m := openTUISized(t, e, 160, 50)
	m.send("fan out")
	// A fleet can write, so under the default posture it is asked first.
	m.waitFor("the fleet's approval", func(s string) bool {
		return strings.Contains(s, "wants to run fleet") && strings.Contains(s, "16 tasks:") && strings.Contains(s, "[y] Allow once")
	})
	m.typeText("y")
	const header = "Fleet  16 tasks"
	running := m.waitFor("16 rows of running tasks", func(s string) bool {
		rows := map[int]string{}
		fleetRows(s, rows)
		return strings.Contains(s, header) && len(rows) == 16
	})
	t.Logf("the fleet panel:\n%s", running)
	m.keys("C-f")
	for i := 2; i <= 16; i++ {
		m.keys("Down")
		m.waitFor(fmt.Sprintf("row %d selected", i), func(s string) bool {
			return strings.Contains(s, fmt.Sprintf("[%d/16]", i))
		})
	}
	m.keys("Escape")
	m.waitFor("the panel left", func(s string) bool { return !strings.Contains(s, "esc leave") })
	free()
	m.waitText("fleet f1: 16 tasks, 16 ok")
	m.waitFor("the second fleet's approval", func(s string) bool { return strings.Contains(s, "2. second fleet b") })
	m.typeText("y")
	s := m.waitFor("both fleets back, the chat idle", func(s string) bool {
		return strings.Contains(s, "Both fleets came back.") && strings.Contains(s, "fleet f2: 2 tasks, 2 ok") && strings.Contains(s, tuiIdle)
	})
	if strings.Contains(s, header) {
		t.Errorf("the first fleet's panel is still drawn after it folded:\n%s", s)
	}
	res := toolResults(lastRequest(t, e))
	if len(res) != 2 || !strings.HasPrefix(res[0].Content, "16 tasks: 16 ok") {
		t.Errorf("the parent's fleet results = %+v", res)
	}
	m.quit()
}

// TestE2ETUICtrlC: Ctrl-C on a running turn cancels it, and the chat
// stays; Ctrl-C twice on the idle chat quits: exit 0, and neither
// reasonix nor anything it started (a sleep its tool abandoned on
// cancellation, an MCP server) is left.
func TestE2ETUICtrlC(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("finds the processes through /proc")
	}
	marker := sleepMarker(402)
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		return providertest.Turn{ToolCalls: []providertest.ToolCall{e2eSleep(marker, false)}}
	}))
	plugin := pluginBinary(t)
	e.writeConfig(fmt.Sprintf("\n[[plugins]]\nname = \"example\"\ncommand = %q\n", plugin))
	m := openTUI(t, e)
	m.send("sleep a while")
	var children []int
	pollUntil(t, tuiWait, "the sleep and the MCP server under reasonix", func() bool {
		children = descendants(m.pid)
		sleeps := sleepersWithArg(marker)
		return len(sleeps) == 1 && slices.Contains(children, sleeps[0]) && slices.ContainsFunc(children, isProgram(plugin))
	})
	m.waitFor("the turn running", func(s string) bool { return strings.Contains(s, "running") })
	m.keys("C-c")
	m.waitFor("the turn cancelled", func(s string) bool { return strings.Contains(s, tuiIdle) })
	if dead, code := m.exited(); dead {
		t.Fatalf("Ctrl-C on a running turn ended the chat (exit %d)", code)
	}
	m.quit()
	if running(m.pid) {
		t.Errorf("reasonix (pid %d) is still alive", m.pid)
	}
	pollUntil(t, tuiWait, "no process reasonix started", func() bool {
		return !slices.ContainsFunc(children, running) && len(sleepersWithArg(marker)) == 0
	})
}

// TestE2ETUISignalClosesSession: SIGTERM or SIGHUP while a turn runs, or
// the terminal itself going away (the tmux server killed: the pty hangs
// up), closes the session: exit 130 where the status can be seen, the
// transcript keeps the prompt with the cancelled call answered, and the
// process the turn's tool started is killed.
func TestE2ETUISignalClosesSession(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("finds the processes through /proc")
	}
	tests := []struct {
		name string
		sig  syscall.Signal
	}{
		{"SIGTERM", syscall.SIGTERM},
		{"SIGHUP", syscall.SIGHUP},
		// The shell that would report the status dies with the terminal.
		{"terminal closed", 0},
	}
	for _, tt := range tests {
		sig := tt.sig
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := sleepMarker(403)
			e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{e2eSleep(marker, false)}}
			}))
			m := openTUI(t, e)
			m.send("sleep until told")
			pollUntil(t, tuiWait, "the sleep under reasonix", func() bool {
				s := sleepersWithArg(marker)
				return len(s) == 1 && slices.Contains(descendants(m.pid), s[0])
			})
			if sig == 0 {
				pid := m.pid
				m.kill()
				if running(pid) {
					t.Fatalf("reasonix (pid %d) outlived its terminal by %s", pid, tuiWait)
				}
			} else {
				if err := syscall.Kill(m.pid, sig); err != nil {
					t.Fatal(err)
				}
				if code := m.waitExit(); code != cmdutil.ExitInterrupted {
					t.Fatalf("exit %d after %v, want %d; the screen:\n%s", code, sig, cmdutil.ExitInterrupted, m.scrollback())
				}
			}
			pollUntil(t, tuiWait, "no sleep left", func() bool { return len(sleepersWithArg(marker)) == 0 })
			ts := e.transcripts()
			if len(ts) != 1 {
				t.Fatalf("transcripts = %v, want one", ts)
			}
			b, err := os.ReadFile(ts[0])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "sleep until told") {
				t.Errorf("the transcript lacks the prompt:\n%s", b)
			}
			// Closed, not killed: the cancelled call has its result, so
			// the session continues without a repair.
			_, msgs, warn, err := session.Load(ts[0])
			if err != nil || warn != nil {
				t.Fatalf("load the transcript: %v (warning %v)", err, warn)
			}
			if open := session.OpenCalls(msgs); len(open) != 0 {
				t.Errorf("the transcript has %d call(s) without a result: the session was not closed\n%s", len(open), b)
			}
		})
	}
}
