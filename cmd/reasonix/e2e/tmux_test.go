package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"reasonix/core/testenv"
)

// The chat TUI is tested in a real terminal: the binary runs in a pane of
// a tmux server private to the test, keys go in with send-keys and the
// screen comes out with capture-pane.

// tuiWait bounds every wait for the screen or the process. It is generous
// because the machine running the tests is shared; a healthy TUI answers
// in a fraction of it.
const tuiWait = 45 * time.Second

// screenPoll is how often the screen is captured while waiting on it.
const screenPoll = 50 * time.Millisecond

var tmuxSockets atomic.Int64

// tmuxTerm is one reasonix process in a 120×40 tmux pane.
type tmuxTerm struct {
	t      *testing.T
	tmux   string
	socket string
	// target names the pane for tmux commands.
	target string
	// env is the e2e environment the server, and so the pane, gets.
	env []string
	// pid is the reasonix process.
	pid int
	// stderr is the file the process's stderr goes to, so that anything
	// written behind the TUI's back is caught rather than drawn over.
	stderr string
	// status is the file its exit status is written to.
	status string
	// log is reasonix's log file, shown when a wait fails.
	log string
}

// startTUI starts the binary with args in a detached 120×40 tmux pane, in
// e's workspace and environment, and finds its pid (0 when it has already
// ended). The tmux server (and with it anything still running in the
// pane) is killed when the test ends.
//
// The pane runs a shell that runs reasonix in the foreground, with the
// terminal as its stdin and stdout, and writes its exit status to a file
// when it ends: tmux's own record of a pane's exit status (and its reaping
// of the pane's process) is not reliable when the process exits soon
// after the pane starts.
func startTUI(t *testing.T, e *e2e, args ...string) *tmuxTerm {
	t.Helper()
	return startTUISized(t, e, 120, 40, args...)
}

// startTUISized is startTUI on a terminal of width × height.
func startTUISized(t *testing.T, e *e2e, width, height int, args ...string) *tmuxTerm {
	t.Helper()
	path := testenv.Need(t, "tmux")
	dir := t.TempDir()
	m := &tmuxTerm{
		t:      t,
		tmux:   path,
		socket: fmt.Sprintf("rx-%d-%d", os.Getpid(), tmuxSockets.Add(1)),
		target: "chat",
		env:    e.env,
		stderr: filepath.Join(dir, "stderr"),
		status: filepath.Join(dir, "status"),
		log:    filepath.Join(e.home, "logs", "reasonix.log"),
	}
	t.Cleanup(m.kill)
	script := fmt.Sprintf(`"$0" "$@" 2>%s; echo $? >%s.tmp && mv %[2]s.tmp %[2]s`, shellQuote(m.stderr), shellQuote(m.status))
	cmdline := append([]string{"new-session", "-d", "-s", m.target, "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), "-c", e.work, "--", "sh", "-c", script, e2eBinary}, args...)
	// The pane stays when the shell ends, so the screen can still be
	// shown; options set in the same command list as the session take
	// effect before that.
	cmdline = append(cmdline, ";", "set-option", "-t", m.target, "remain-on-exit", "on",
		";", "set-option", "-t", m.target, "status", "off")
	if out, err := m.run(cmdline...); err != nil {
		t.Fatalf("start tmux: %v\n%s", err, out)
	}
	shell, err := strconv.Atoi(strings.TrimSpace(m.display("#{pane_pid}")))
	if err != nil {
		t.Fatalf("pane pid: %v", err)
	}
	deadline := time.Now().Add(tuiWait)
	for m.pid == 0 {
		for _, pid := range descendants(shell) {
			if isProgram(e2eBinary)(pid) {
				m.pid = pid
			}
		}
		if m.pid != 0 {
			break
		}
		if _, err := os.Stat(m.status); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reasonix did not start under the pane's shell (pid %d); the screen:\n%s\n--- stderr\n%s", shell, m.screen(), m.stderrText())
		}
		time.Sleep(screenPoll)
	}
	return m
}

// isProgram reports whether pid runs the executable at path.
func isProgram(path string) func(pid int) bool {
	return func(pid int) bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			return false
		}
		argv0, _, _ := strings.Cut(string(b), "\x00")
		return argv0 == path
	}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// stderrText is what the process wrote to stderr so far.
func (m *tmuxTerm) stderrText() string {
	b, _ := os.ReadFile(m.stderr)
	return string(b)
}

// goroutines makes a process that will not end dump its goroutines (Go
// does on SIGQUIT, to stderr) and returns the dump.
func (m *tmuxTerm) goroutines() string {
	if m.pid == 0 || !running(m.pid) {
		return fmt.Sprintf("(pid %d is gone)", m.pid)
	}
	_ = syscall.Kill(m.pid, syscall.SIGQUIT)
	deadline := time.Now().Add(5 * time.Second)
	for running(m.pid) && time.Now().Before(deadline) {
		time.Sleep(screenPoll)
	}
	return m.stderrText()
}

// logTail is the end of reasonix's log, for failure messages.
func (m *tmuxTerm) logTail() string {
	b, _ := os.ReadFile(m.log)
	return string(b[max(0, len(b)-4000):])
}

// run runs one tmux client command against the test's server. The server
// inherits the client's environment, which is the e2e one, so the pane
// sees only the test's HOME, REASONIX_HOME, PATH and key.
func (m *tmuxTerm) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.tmux, append([]string{"-L", m.socket, "-f", "/dev/null"}, args...)...)
	cmd.Env = append([]string{"TERM=xterm-256color"}, m.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (m *tmuxTerm) display(format string) string {
	m.t.Helper()
	out, err := m.run("display-message", "-p", "-t", m.target, format)
	if err != nil {
		m.t.Fatalf("tmux display %s: %v\n%s", format, err, out)
	}
	return out
}

// screen is the pane's visible contents, one line per row, without
// colours.
func (m *tmuxTerm) screen() string {
	m.t.Helper()
	out, err := m.run("capture-pane", "-p", "-t", m.target)
	if err != nil {
		m.t.Fatalf("tmux capture-pane: %v\n%s", err, out)
	}
	return out
}

// scrollback is the pane's whole contents: what scrolled off the top (the
// chat prints finished messages into the terminal's scrollback) and then
// the visible screen.
func (m *tmuxTerm) scrollback() string {
	m.t.Helper()
	out, err := m.run("capture-pane", "-p", "-J", "-S", "-", "-t", m.target)
	if err != nil {
		m.t.Fatalf("tmux capture-pane: %v\n%s", err, out)
	}
	return out
}

// waitFor captures the screen until cond holds for it and returns that
// screen; at the deadline, or should reasonix exit first, it fails the
// test, showing the last screen.
func (m *tmuxTerm) waitFor(what string, cond func(screen string) bool) string {
	m.t.Helper()
	return m.waitOn(m.screen, what, cond)
}

// waitLog is waitFor on the scrollback and the screen together.
func (m *tmuxTerm) waitLog(what string, cond func(all string) bool) string {
	m.t.Helper()
	return m.waitOn(m.scrollback, what, cond)
}

func (m *tmuxTerm) waitOn(capture func() string, what string, cond func(string) bool) string {
	m.t.Helper()
	deadline := time.Now().Add(tuiWait)
	for {
		s := capture()
		if cond(s) {
			return s
		}
		if dead, code := m.exited(); dead {
			m.t.Fatalf("reasonix exited %d while the test waited for %s; the screen:\n%s\n--- stderr\n%s", code, what, capture(), m.stderrText())
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("timed out after %s waiting for %s; the screen:\n%s", tuiWait, what, s)
		}
		time.Sleep(screenPoll)
	}
}

// waitText waits until the scrollback or the screen shows every one of
// texts, and returns them.
func (m *tmuxTerm) waitText(texts ...string) string {
	m.t.Helper()
	return m.waitLog(fmt.Sprintf("%q on screen", texts), func(s string) bool {
		for _, x := range texts {
			if !strings.Contains(s, x) {
				return false
			}
		}
		return true
	})
}

// typeText types text literally, as a user would, without pressing Enter.
func (m *tmuxTerm) typeText(text string) {
	m.t.Helper()
	if out, err := m.run("send-keys", "-t", m.target, "-l", text); err != nil {
		m.t.Fatalf("tmux send-keys %q: %v\n%s", text, err, out)
	}
}

// keys presses named keys: Enter, Escape, C-c, Up...
func (m *tmuxTerm) keys(keys ...string) {
	m.t.Helper()
	if out, err := m.run(append([]string{"send-keys", "-t", m.target}, keys...)...); err != nil {
		m.t.Fatalf("tmux send-keys %v: %v\n%s", keys, err, out)
	}
}

// exited reports whether reasonix has ended, and its exit status (as
// the shell reports it: 128+n for a process killed by signal n).
func (m *tmuxTerm) exited() (bool, int) {
	m.t.Helper()
	b, err := os.ReadFile(m.status)
	if err != nil {
		return false, 0
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		m.t.Fatalf("exit status %q: %v", b, err)
	}
	return true, code
}

// waitExit waits for the process to end and returns its exit status.
func (m *tmuxTerm) waitExit() int {
	m.t.Helper()
	var code int
	deadline := time.Now().Add(tuiWait)
	for {
		var dead bool
		if dead, code = m.exited(); dead {
			return code
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("reasonix still runs %s after it was told to quit; the screen:\n%s\n--- log\n%s\n--- goroutines\n%s",
				tuiWait, m.screen(), m.logTail(), m.goroutines())
		}
		time.Sleep(screenPoll)
	}
}

// kill ends the tmux server, which hangs up on the pane's process, and
// waits (bounded) for that process to be gone, so the test's directories
// are not removed under it.
func (m *tmuxTerm) kill() {
	_, _ = m.run("kill-server")
	if m.pid == 0 {
		return
	}
	deadline := time.Now().Add(tuiWait)
	for running(m.pid) && time.Now().Before(deadline) {
		time.Sleep(screenPoll)
	}
}

// running reports whether pid is a live process: a zombie, which only
// waits for its parent (or, orphaned, for init) to reap it, is not.
func running(pid int) bool {
	return processAlive(pid) && procState(pid) != "Z"
}

// procState is the state letter of pid in /proc (R, S, T, Z...), or "".
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// descendants returns the PIDs of the live processes below pid, read from
// /proc (Linux).
func descendants(pid int) []int {
	parents := map[int][]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		// The command name in parentheses may hold spaces; the fields
		// after its closing parenthesis are state, then ppid.
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		child, _ := strconv.Atoi(filepath.Base(dir))
		parent, _ := strconv.Atoi(f[1])
		parents[parent] = append(parents[parent], child)
	}
	var out []int
	next := []int{pid}
	for len(next) > 0 {
		p := next[0]
		next = next[1:]
		for _, c := range parents[p] {
			out = append(out, c)
			next = append(next, c)
		}
	}
	return out
}
