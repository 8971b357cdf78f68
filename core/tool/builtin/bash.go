package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"reasonix/core/panics"
	"reasonix/core/proc"
	"reasonix/core/tool"
)

func init() {
	tool.RegisterBuiltin("bash", func(env tool.Env) tool.Tool { return &bash{env: env} })
}

// bash runs one shell command in the workspace and reports its combined
// output and exit code.
type bash struct{ env tool.Env }

type bashArgs struct {
	Command        string `json:"command" arg:"required"`
	TimeoutSeconds int    `json:"timeout_seconds"`
}

// Timing of the kill sequence. They bound how long a call can outlive its
// deadline; they are not waits for work to happen.
const (
	// bashTermGrace is how long the group gets between SIGTERM and SIGKILL.
	bashTermGrace = 500 * time.Millisecond
	// bashDrainGrace bounds the wait for the output pipe to close once
	// the group is dead; a process that left the group (setsid) may still
	// hold it, and we stop reading rather than hang.
	bashDrainGrace = 2 * time.Second
	// bashWaitDelay is exec.Cmd.WaitDelay. Output goes to our own pipe, so
	// Wait has no copying goroutines for a grandchild to hold up and the
	// drain above is what is bounded; the delay keeps Wait bounded should
	// the output ever be routed through exec's pipes instead.
	bashWaitDelay = 5 * time.Second
)

func (*bash) Name() string { return "bash" }

func (t *bash) Description() string {
	limit := t.env.Limits.WithDefaults().OutputBytes
	timeout := "There is no default time limit; timeout_seconds sets one."
	if t.env.BashTimeout > 0 {
		timeout = fmt.Sprintf("The command is killed after %s s by default, and timeout_seconds cannot raise that "+
			"(larger values are reduced to it).", formatSeconds(t.env.BashTimeout))
	}
	return "Run a shell command with bash -c (sh -c where bash is missing) in the workspace root and return its output. " +
		"Each call starts a fresh shell: cd and variables do not carry over. stdin is empty, so interactive prompts fail. " +
		fmt.Sprintf("stdout and stderr are combined in the order written; beyond %d bytes only the beginning and end are kept, "+
			"with a marker saying how many bytes were dropped. ", limit) +
		"The result always ends with \"exit code: N\"; a non-zero exit is reported there, not as a failure. " +
		timeout + " " +
		"On timeout the command and every process it started are killed and the result says so. " +
		"Background processes do not outlive the command. Fails only if the shell cannot be started or the sandbox refuses the command. " +
		"Prefer read_file, grep, glob and ls for reading and searching files."
}

func (t *bash) Schema() json.RawMessage {
	timeout := "Seconds before the command is killed. Optional; default: no limit."
	if t.env.BashTimeout > 0 {
		timeout = fmt.Sprintf("Seconds before the command is killed. Optional; default and maximum %s.", formatSeconds(t.env.BashTimeout))
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"command": map[string]any{
				"type":        "string",
				"description": "The shell command line to run, e.g. \"go test ./...\". Pipes, redirections and && work.",
			},
			"timeout_seconds": map[string]any{
				"type":        "integer",
				"minimum":     1,
				"description": timeout,
			},
		},
		"required":             []string{"command"},
		"additionalProperties": false,
	}
	out, _ := json.Marshal(schema) // a fixed map of plain values cannot fail
	return out
}

func (*bash) ReadOnly() bool { return false }

func (t *bash) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args bashArgs
	if err := tool.DecodeArgs("bash", raw, &args); err != nil {
		return "", err
	}
	if strings.TrimSpace(args.Command) == "" {
		return "", errors.New("bash: command is empty")
	}
	if args.TimeoutSeconds < 0 {
		return "", fmt.Errorf("bash: timeout_seconds must be 1 or more, got %d", args.TimeoutSeconds)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}

	timeout := t.env.BashTimeout
	var note string
	if args.TimeoutSeconds > 0 {
		asked := time.Duration(args.TimeoutSeconds) * time.Second
		if timeout > 0 && asked > timeout {
			note = fmt.Sprintf("note: timeout_seconds %d exceeds the %s s cap; using %s s\n",
				args.TimeoutSeconds, formatSeconds(timeout), formatSeconds(timeout))
		} else {
			timeout = asked
		}
	}

	argv := []string{shellName(), "-c", args.Command}
	if t.env.Shell != nil {
		wrapped, err := t.env.Shell.Wrap(t.env.Root, argv)
		if err != nil {
			return "", fmt.Errorf("bash: command refused: %w", err)
		}
		if len(wrapped) == 0 {
			return "", errors.New("bash: command refused: the sandbox produced an empty command")
		}
		argv = wrapped
	}

	run, err := runCommand(ctx, t.env.Root, argv, timeout, newHeadTail(t.env.Limits.WithDefaults().OutputBytes))
	if err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}
	if run.cancelled {
		return "", fmt.Errorf("bash: stopped before the command finished, its processes were killed: %w", context.Cause(ctx))
	}

	var b strings.Builder
	b.WriteString(note)
	out := run.output
	if len(out) == 0 {
		b.WriteString("(no output)\n")
	} else {
		b.Write(out)
		if out[len(out)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	if run.timedOut {
		fmt.Fprintf(&b, "timed out: killed after %s s\n", formatSeconds(timeout))
	}
	b.WriteString("exit code: ")
	b.WriteString(run.exit)
	return b.String(), nil
}

// shellName picks bash, or sh on systems without it. The name, not a path,
// goes into argv so a sandbox wrapper resolves it inside its own jail.
func shellName() string {
	if _, err := exec.LookPath("bash"); err == nil {
		return "bash"
	}
	return "sh"
}

// formatSeconds renders d in seconds without trailing zeros ("120", "0.5").
func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// commandRun is what one command left behind.
type commandRun struct {
	output    []byte // combined output, head and tail kept
	exit      string // "N" or "N (signal)"
	timedOut  bool
	cancelled bool
}

// outputSink holds a command's output as it is read.
type outputSink interface {
	io.Writer
	Bytes() []byte
}

// runCommand runs argv in dir in its own process group with stdin empty,
// capturing stdout and stderr through one pipe into capture so their order
// survives. When the shell exits, when timeout (if non-zero) passes, or
// when ctx ends, the whole group is killed, so nothing the command started
// outlives it. The group is tracked by proc from start to wait, so a
// process that exits without waiting for the call still kills it. A panic
// in the goroutines that read the output or wait for the shell becomes the
// returned error.
func runCommand(ctx context.Context, dir string, argv []string, timeout time.Duration, capture outputSink) (commandRun, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return commandRun{}, fmt.Errorf("create output pipe: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdin = nil // the null device
	// One *os.File for both streams: the child gets a single pipe on fds 1
	// and 2 and exec starts no copying goroutines, so Wait returns as soon
	// as the shell exits even if a grandchild still holds the pipe.
	cmd.Stdout = pw
	cmd.Stderr = pw
	cmd.WaitDelay = bashWaitDelay
	if err := proc.Start(cmd); err != nil {
		pr.Close()
		pw.Close()
		return commandRun{}, fmt.Errorf("start %s: %w", argv[0], err)
	}
	pw.Close() // the child holds the only write ends now

	drained := make(chan struct{})
	// A reader that panicked no longer empties the pipe, so the shell
	// could block on it forever: copyFailed makes the call kill it.
	copyFailed := make(chan struct{})
	var copyPanic error // set before copyFailed and drained are closed
	go func() {
		defer close(drained)
		defer panics.Recover(func(err error) {
			copyPanic = err
			close(copyFailed)
		})
		_, _ = io.Copy(capture, pr) // ends at EOF, or with an error once pr is closed
	}()
	exited := make(chan error, 1)
	go func() {
		var err error
		defer func() { exited <- err }()
		defer panics.Catch(&err)
		err = proc.Wait(cmd)
	}()

	var deadline <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		deadline = timer.C
	}
	var run commandRun
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-deadline:
		run.timedOut = true
		waitErr = stopGroup(cmd, exited)
	case <-ctx.Done():
		run.cancelled = true
		waitErr = stopGroup(cmd, exited)
	case <-copyFailed:
		proc.KillGroup(cmd)
		waitErr = <-exited
	}
	// Whatever the shell left running in its group goes with it. On
	// Windows the tree is found through the shell, so orphans of a shell
	// that has exited escape; the drain grace below keeps the call from
	// hanging on them.
	proc.KillGroup(cmd)

	grace := time.NewTimer(bashDrainGrace)
	defer grace.Stop()
	var copyErr error
	select {
	case <-drained:
		pr.Close()
		copyErr = copyPanic
	case <-grace.C:
		abandonOutput(pr, drained)
	}
	// A wait that panicked may have left the shell unreaped; the group
	// kill above has stopped it, and proc still tracks it.
	var pe *panics.Error
	if errors.As(waitErr, &pe) {
		return commandRun{}, fmt.Errorf("wait for %s: %w", argv[0], waitErr)
	}
	if copyErr != nil {
		return commandRun{}, fmt.Errorf("read output: %w", copyErr)
	}

	run.output = capture.Bytes()
	run.exit = exitStatus(cmd.ProcessState, waitErr)
	return run, nil
}

// stopGroup asks the group to terminate, then kills it if the shell has not
// exited within bashTermGrace, and returns the shell's Wait result.
func stopGroup(cmd *exec.Cmd, exited <-chan error) error {
	proc.TerminateGroup(cmd)
	grace := time.NewTimer(bashTermGrace)
	defer grace.Stop()
	select {
	case err := <-exited:
		return err
	case <-grace.C:
	}
	proc.KillGroup(cmd)
	return <-exited
}

// exitStatus renders how the shell ended.
func exitStatus(ps *os.ProcessState, waitErr error) string {
	if ps == nil {
		if waitErr != nil {
			return fmt.Sprintf("-1 (%v)", waitErr)
		}
		return "-1"
	}
	if code, sig, ok := signalled(ps); ok {
		return fmt.Sprintf("%d (killed by signal: %s)", code, sig)
	}
	return strconv.Itoa(ps.ExitCode())
}

// headTail is an io.Writer that keeps the first and last bytes written and
// counts the rest, so a command printing gigabytes costs a fixed amount of
// memory.
type headTail struct {
	mu    sync.Mutex // a reader abandoned after the drain grace may still write
	head  []byte     // the first hcap bytes written
	ring  []byte     // the latest rcap bytes after those; allocated on demand
	start int        // index in ring of the oldest byte held
	n     int        // bytes held in ring
	total int64      // bytes written overall
	hcap  int
	rcap  int
}

func newHeadTail(limit int) *headTail {
	if limit < 2 {
		limit = 2
	}
	// The ring holds one byte more than the tail shows: the byte before
	// the tail, which says whether the tail starts at a line.
	return &headTail{hcap: limit / 2, rcap: limit - limit/2 + 1}
}

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total += int64(len(p))
	written := len(p)
	if room := h.hcap - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return written, nil
	}
	if h.ring == nil {
		h.ring = make([]byte, h.rcap)
	}
	if len(p) >= h.rcap {
		copy(h.ring, p[len(p)-h.rcap:])
		h.start, h.n = 0, h.rcap
		return written, nil
	}
	for len(p) > 0 {
		// Writing at the end of the held bytes; when the ring is full that
		// is the oldest byte, which the write overwrites and start skips.
		w := (h.start + h.n) % h.rcap
		k := copy(h.ring[w:], p)
		p = p[k:]
		h.n += k
		if h.n > h.rcap {
			h.start = (h.start + h.n - h.rcap) % h.rcap
			h.n = h.rcap
		}
	}
	return written, nil
}

// Bytes returns everything written when it fitted, otherwise the head, a
// marker with the number of bytes dropped, and the tail. The cut points
// move to line breaks when one is near, and never split a UTF-8 sequence.
func (h *headTail) Bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	tail := make([]byte, 0, h.n)
	if h.n > 0 {
		first := h.ring[h.start:min(h.rcap, h.start+h.n)]
		tail = append(tail, first...)
		tail = append(tail, h.ring[:h.n-len(first)]...)
	}
	if h.n < h.rcap {
		// Nothing was dropped.
		return append(append([]byte(nil), h.head...), tail...)
	}
	before, tail := tail[0], tail[1:]
	head := h.head
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 && i >= len(head)-len(head)/4 {
		head = head[:i+1]
	} else {
		// Drop a rune the cut left incomplete.
		i := len(head) - 1
		for i > 0 && len(head)-i < utf8.UTFMax && !utf8.RuneStart(head[i]) {
			i--
		}
		if i >= 0 && !utf8.FullRune(head[i:]) {
			head = head[:i]
		}
	}
	switch i := bytes.IndexByte(tail, '\n'); {
	case before == '\n':
		// The tail already starts a line.
	case i >= 0 && i < len(tail)/4:
		tail = tail[i+1:]
	default:
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
			tail = tail[1:]
		}
	}
	dropped := h.total - int64(len(head)+len(tail))
	out := make([]byte, 0, len(head)+len(tail)+64)
	out = append(out, head...)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		out = append(out, '\n')
	}
	out = fmt.Appendf(out, "[... %d bytes truncated ...]\n", dropped)
	return append(out, tail...)
}
