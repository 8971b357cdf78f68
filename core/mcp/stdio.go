package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"reasonix/core/panics"
	"reasonix/core/proc"
)

const (
	// maxStdioMessage caps one line of server output. A larger message
	// ends the connection rather than leave a call waiting forever.
	maxStdioMessage = 32 << 20
	// maxStderrLine caps one logged stderr line; the rest is dropped.
	maxStderrLine = 4 << 10
	// stderrTailLines is how many stderr lines an ExitError keeps.
	stderrTailLines = 10
	// defaultGrace is how long a server may take to exit at each step
	// of a shutdown before it is signalled harder.
	defaultGrace = 2 * time.Second
	// drainTimeout bounds the wait for the output pipes to reach EOF
	// once the process is gone.
	drainTimeout = 2 * time.Second
)

// StdioCommand describes a local server process.
type StdioCommand struct {
	// Command is the program, found in PATH when it has no separator;
	// Args are its arguments.
	Command string
	Args    []string
	// Env is laid over the current environment: a variable named here
	// replaces the inherited one.
	Env map[string]string
	// Dir is the working directory; empty means the current one.
	Dir string
	// Grace is how long the server gets to exit after its stdin is
	// closed, and again after SIGTERM, before it is killed; zero means
	// two seconds.
	Grace time.Duration
}

// ExitError reports a stdio server that exited while the connection was
// open. Every call pending at that moment fails with it.
type ExitError struct {
	// Status is the exit status as the OS reports it, such as
	// "exit status 3" or "signal: killed".
	Status string
	// Code is the exit code, or -1 when a signal ended the process.
	Code int
	// Stderr holds the last lines the server wrote to stderr.
	Stderr []string
}

// Error names the status and quotes the stderr tail.
func (e *ExitError) Error() string {
	msg := "mcp server exited (" + e.Status + ")"
	if len(e.Stderr) > 0 {
		msg += "; last stderr: " + strings.Join(e.Stderr, " | ")
	}
	return msg
}

// Stdio is the stdio transport: a server subprocess, in its own process
// group, exchanging one JSON message per line on stdin and stdout. Its
// stderr goes to the logger line by line.
type Stdio struct {
	cmd   *exec.Cmd
	log   *slog.Logger
	grace time.Duration

	stdin          *os.File
	stdout, stderr *os.File

	writeMu  sync.Mutex
	incoming chan jsonrpc.Message
	tail     stderrTail

	closeOnce  sync.Once
	closeCause error         // why closing was closed; nil for Close
	closing    chan struct{} // closed when a shutdown is requested
	done       chan struct{} // closed when the process and readers are gone
	err        error         // the error Receive reports; set before done

	stopCtx func() bool
	wg      sync.WaitGroup
}

// StartStdio starts the server c describes. Cancelling ctx shuts the
// server down as Close does, so ctx must live as long as the connection.
func StartStdio(ctx context.Context, c StdioCommand, log *slog.Logger) (*Stdio, error) {
	if c.Command == "" {
		return nil, errors.New("start stdio server: no command")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start stdio server: %w", err)
	}
	cmd := exec.Command(c.Command, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = mergeEnv(os.Environ(), c.Env)

	// Our own pipes, handed to the child as files, keep exec from
	// starting copy goroutines whose end would depend on every process
	// that inherited the pipe.
	var opened []*os.File
	closeAll := func() {
		for _, f := range opened {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			opened = append(opened, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("start stdio server: %w", err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("start stdio server: %w", err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("start stdio server: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	// proc.Start puts the server in its own group and tracks it until
	// proc.Wait, so a process exiting in a hurry still kills it.
	if err := proc.Start(cmd); err != nil {
		closeAll()
		return nil, fmt.Errorf("start stdio server %q: %w", c.Command, err)
	}
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()

	s := &Stdio{
		cmd:      cmd,
		log:      logger(log),
		grace:    c.Grace,
		stdin:    inW,
		stdout:   outR,
		stderr:   errR,
		incoming: make(chan jsonrpc.Message, 64),
		closing:  make(chan struct{}),
		done:     make(chan struct{}),
	}
	if s.grace <= 0 {
		s.grace = defaultGrace
	}
	exited := make(chan struct{})
	stdoutDone := make(chan struct{})
	stderrDone := make(chan struct{})
	var waitErr error
	s.wg.Go(func() {
		waitErr = proc.Wait(cmd)
		close(exited)
	})
	s.wg.Go(func() { s.readStdout(stdoutDone) })
	s.wg.Go(func() { s.readStderr(stderrDone) })
	s.wg.Go(func() { s.supervise(exited, stdoutDone, stderrDone, &waitErr) })
	s.stopCtx = context.AfterFunc(ctx, func() { s.shutdown(context.Cause(ctx)) })
	return s, nil
}

// Pid is the process ID of the server, the leader of its process group.
func (s *Stdio) Pid() int { return s.cmd.Process.Pid }

// Connect implements the SDK's Transport: the process is already running,
// and the Stdio itself is the connection.
func (s *Stdio) Connect(context.Context) (sdk.Connection, error) { return s, nil }

// SessionID implements the SDK's Connection; stdio has no sessions.
func (s *Stdio) SessionID() string { return "" }

// Write sends msg as one line. A write that ctx interrupts half-way leaves
// the stream unusable, so the connection is shut down.
func (s *Stdio) Write(ctx context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode json-rpc message: %w", err)
	}
	b = append(b, '\n')
	select {
	case <-s.closing:
		return s.closedError()
	default:
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = s.stdin.SetWriteDeadline(time.Unix(1, 0))
		close(fired)
	})
	n, err := s.stdin.Write(b)
	if !stop() {
		<-fired
		_ = s.stdin.SetWriteDeadline(time.Time{})
	}
	if err == nil {
		return nil
	}
	if n > 0 {
		s.shutdown(fmt.Errorf("message to server cut short after %d of %d bytes: %w", n, len(b), err))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return s.writeError(err)
}

// writeError explains a failed write. A broken pipe usually means the
// server is exiting; its exit status says more than the pipe error, so
// wait a bounded time for it.
func (s *Stdio) writeError(err error) error {
	t := time.NewTimer(s.grace + drainTimeout)
	defer t.Stop()
	select {
	case <-s.done:
		return s.err
	case <-t.C:
		return fmt.Errorf("write to mcp server: %w", err)
	}
}

func (s *Stdio) closedError() error {
	select {
	case <-s.done:
		return s.err
	default:
		if s.closeCause != nil {
			return fmt.Errorf("%w: %w", ErrClosed, s.closeCause)
		}
		return ErrClosed
	}
}

// Read returns the next message the server wrote; once the server is
// gone, its failure (an *ExitError) or ErrClosed.
func (s *Stdio) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m, ok := <-s.incoming:
		if !ok {
			return nil, s.err
		}
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// failure is why the server's connection ended, once it has; nil while
// it runs or after an ordinary Close.
func (s *Stdio) failure() error {
	select {
	case <-s.done:
		if s.err == ErrClosed {
			return nil
		}
		return s.err
	default:
		return nil
	}
}

// Close shuts the server down: it closes its stdin, sends SIGTERM to its
// process group after the grace period and SIGKILL after another, then
// waits for the process and the readers.
func (s *Stdio) Close() error {
	s.stopCtx()
	s.shutdown(nil)
	<-s.done
	s.wg.Wait()
	return nil
}

// shutdown asks the supervisor to stop the server; cause is nil for an
// ordinary Close.
func (s *Stdio) shutdown(cause error) {
	s.closeOnce.Do(func() {
		s.closeCause = cause
		close(s.closing)
	})
}

// supervise owns the process's end: whichever comes first of its exit, a
// shutdown request, or the end of its output, it makes sure the process
// group is gone, lets the readers finish, and records the error Receive
// reports.
func (s *Stdio) supervise(exited, stdoutDone, stderrDone <-chan struct{}, waitErr *error) {
	defer close(s.done)
	defer panics.Recover(func(err error) { s.abandon(exited, stdoutDone, stderrDone, err) })
	if testHookSupervise != nil {
		testHookSupervise()
	}
	requested := false
	select {
	case <-exited:
	case <-s.closing:
		requested = true
		s.stop(exited)
	case <-stdoutDone:
		// Nothing more can arrive. Let the server exit by itself so that
		// its own status is what gets reported.
		t := time.NewTimer(s.grace)
		select {
		case <-exited:
		case <-s.closing:
			requested = true
			s.stop(exited)
		case <-t.C:
			proc.KillGroup(s.cmd)
			<-exited
		}
		t.Stop()
	}
	// Whatever the leader left behind in its group would hold the pipes
	// open.
	proc.SweepGroup(s.cmd)
	_ = s.stdin.Close()
	s.drain(stdoutDone, stderrDone)

	select {
	case <-s.closing:
		requested = requested || s.closeCause != nil
	default:
	}
	switch {
	case requested && s.closeCause != nil:
		s.err = fmt.Errorf("%w: %w", ErrClosed, s.closeCause)
	case requested:
		s.err = ErrClosed
	default:
		s.err = exitError(*waitErr, s.tail.snapshot())
	}
	close(s.incoming)
}

// testHookSupervise, when set by a test, is called as the supervisor
// starts, so a test can make it panic.
var testHookSupervise func()

// abandon is the supervisor's way out when it panicked part-way: it does
// the least that lets Receive and Close return (the process group killed,
// the readers ended, the panic recorded as the error Receive reports) and
// none of the gentler steps, which may be what failed.
func (s *Stdio) abandon(exited, stdoutDone, stderrDone <-chan struct{}, err error) {
	err = fmt.Errorf("mcp stdio supervisor: %w", err)
	s.shutdown(err)
	proc.KillGroup(s.cmd)
	<-exited
	_ = s.stdin.Close()
	_ = s.stdout.Close()
	_ = s.stderr.Close()
	<-stdoutDone
	<-stderrDone
	s.err = fmt.Errorf("%w: %w", ErrClosed, err)
	close(s.incoming)
}

// stop ends the process the gentle way first: EOF on stdin, then SIGTERM,
// then SIGKILL, each after the grace period.
func (s *Stdio) stop(exited <-chan struct{}) {
	// Closing under a blocked Write is safe: the Write fails. Taking
	// writeMu here could wait forever on a server that stopped reading.
	_ = s.stdin.Close()
	t := time.NewTimer(s.grace)
	defer t.Stop()
	select {
	case <-exited:
		return
	case <-t.C:
	}
	proc.TerminateGroup(s.cmd)
	t.Reset(s.grace)
	select {
	case <-exited:
		return
	case <-t.C:
	}
	proc.KillGroup(s.cmd)
	<-exited
}

// drain waits for both readers to reach EOF. A process outside the group
// that inherited a pipe could hold it open forever, so after drainTimeout
// the read ends are closed under the readers.
func (s *Stdio) drain(stdoutDone, stderrDone <-chan struct{}) {
	t := time.NewTimer(drainTimeout)
	defer t.Stop()
	for _, done := range []<-chan struct{}{stdoutDone, stderrDone} {
		select {
		case <-done:
		case <-t.C:
			_ = s.stdout.Close()
			_ = s.stderr.Close()
			<-stdoutDone
			<-stderrDone
			return
		}
	}
	_ = s.stdout.Close()
	_ = s.stderr.Close()
}

func exitError(waitErr error, tail []string) *ExitError {
	e := &ExitError{Status: "exit status 0", Stderr: tail}
	var ee *exec.ExitError
	switch {
	case errors.As(waitErr, &ee):
		e.Status = ee.ProcessState.String()
		e.Code = ee.ProcessState.ExitCode()
	case waitErr != nil:
		e.Status = waitErr.Error()
		e.Code = -1
	}
	return e
}

// readStdout decodes one message per line. Lines that are not JSON-RPC
// (some servers print banners to stdout) are logged and skipped.
func (s *Stdio) readStdout(done chan<- struct{}) {
	defer close(done)
	defer panics.Recover(s.readerCrashed("read mcp server stdout"))
	r := bufio.NewReaderSize(s.stdout, 64<<10)
	for {
		line, err := readLine(r, maxStdioMessage)
		if errors.Is(err, errLineTooLong) {
			s.shutdown(fmt.Errorf("server sent a message longer than %d bytes", maxStdioMessage))
			return
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			msgs, derr := decodeLine(line)
			if derr != nil {
				s.log.Warn("mcp server wrote a line that is not JSON-RPC", "err", derr, "line", truncate(string(line), 200))
			}
			for _, m := range msgs {
				select {
				case s.incoming <- m:
				case <-s.closing:
					return
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				s.log.Debug("mcp server stdout", "err", err)
			}
			return
		}
	}
}

// readStderr forwards stderr to the logger line by line and keeps the
// last lines for an ExitError.
func (s *Stdio) readStderr(done chan<- struct{}) {
	defer close(done)
	defer panics.Recover(s.readerCrashed("read mcp server stderr"))
	r := bufio.NewReaderSize(s.stderr, maxStderrLine)
	for {
		line, err := readLine(r, maxStderrLine)
		if errors.Is(err, errLineTooLong) {
			err = nil
		}
		if text := strings.TrimRight(string(line), "\r\n"); text != "" {
			s.tail.add(text)
			s.log.Info("mcp server stderr", "line", text)
		}
		if err != nil {
			return
		}
	}
}

// readerCrashed is the report of a pipe reader that panicked (a logger's
// handler, a decoding bug): the server is shut down with the panic as the
// cause, which Receive then reports. It runs before the reader's done is
// closed, so the supervisor always sees the cause.
func (s *Stdio) readerCrashed(what string) func(error) {
	return func(err error) { s.shutdown(fmt.Errorf("%s: %w", what, err)) }
}

var errLineTooLong = errors.New("line too long")

// readLine reads up to and excluding the next '\n'. A line longer than
// limit yields its first limit bytes with errLineTooLong; the reader then
// resumes after that line's end.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		content := frag
		if err == nil {
			content = frag[:len(frag)-1]
		}
		if len(line)+len(content) > limit {
			line = append(line, content[:limit-len(line)]...)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return line, err
			}
			return line, errLineTooLong
		}
		line = append(line, content...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// mergeEnv lays extra over base. exec.Cmd keeps the last of duplicate
// names, so appending is enough; names are sorted for a stable result.
func mergeEnv(base []string, extra map[string]string) []string {
	env := slices.Clone(base)
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// stderrTail keeps the last stderrTailLines lines.
type stderrTail struct {
	mu    sync.Mutex
	lines []string
}

func (t *stderrTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > stderrTailLines {
		t.lines = slices.Delete(t.lines, 0, len(t.lines)-stderrTailLines)
	}
}

func (t *stderrTail) snapshot() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.lines)
}

// decodeLine decodes one line of server output: a JSON-RPC message, or a
// batch of them (older servers send batches).
func decodeLine(line []byte) ([]jsonrpc.Message, error) {
	if line[0] != '[' {
		m, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return nil, fmt.Errorf("invalid json-rpc message: %w", err)
		}
		return []jsonrpc.Message{m}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, fmt.Errorf("invalid json-rpc batch: %w", err)
	}
	var out []jsonrpc.Message
	var errs []error
	for _, r := range raws {
		m, err := jsonrpc.DecodeMessage(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, m)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("invalid json-rpc message in batch: %w", errors.Join(errs...))
	}
	return out, nil
}
