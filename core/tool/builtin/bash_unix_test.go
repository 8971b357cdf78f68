//go:build unix

package builtin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"reasonix/core/tool"
)

// argvWrapper is a tool.CommandWrapper built from a function.
type argvWrapper func(dir string, argv []string) ([]string, error)

func (w argvWrapper) Wrap(dir string, argv []string) ([]string, error) { return w(dir, argv) }

// runBash executes the bash tool once with the given arguments.
func runBash(ctx context.Context, t *testing.T, env tool.Env, args map[string]any) (string, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return (&bash{env: env}).Execute(ctx, raw)
}

func TestBash(t *testing.T) {
	t.Parallel()
	seq := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "%d\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name    string
		env     tool.Env
		args    map[string]any
		want    string // exact result, when set
		has     []string
		wantErr string
		check   func(t *testing.T, out string)
	}{
		{
			name: "echo",
			args: map[string]any{"command": "echo hello"},
			want: "hello\nexit code: 0",
		},
		{
			name: "runs in the root",
			args: map[string]any{"command": "cat marker.txt"},
			want: "in root\nexit code: 0",
		},
		{
			name: "non-zero exit is a result",
			args: map[string]any{"command": "echo out; exit 3"},
			want: "out\nexit code: 3",
		},
		{
			name: "stdout and stderr interleave in order",
			args: map[string]any{"command": "echo a; echo b >&2; echo c; echo d >&2"},
			want: "a\nb\nc\nd\nexit code: 0",
		},
		{
			name: "stdin is empty",
			args: map[string]any{"command": "cat; echo done"},
			want: "done\nexit code: 0",
		},
		{
			name: "no output",
			args: map[string]any{"command": "true"},
			want: "(no output)\nexit code: 0",
		},
		{
			name: "missing final newline is added",
			args: map[string]any{"command": "printf abc"},
			want: "abc\nexit code: 0",
		},
		{
			name: "killed by a signal",
			args: map[string]any{"command": "kill -KILL $$"},
			want: "(no output)\nexit code: 137 (killed by signal: killed)",
		},
		{
			name: "output capped keeping head and tail",
			env:  tool.Env{Limits: tool.Limits{OutputBytes: 1000}},
			args: map[string]any{"command": "seq 1 10000"},
			check: func(t *testing.T, out string) {
				full := seq(10000)
				if !strings.HasPrefix(out, "1\n2\n3\n") || !strings.HasSuffix(out, "9999\n10000\nexit code: 0") {
					t.Errorf("head or tail lost:\n%s", out)
				}
				body := strings.TrimSuffix(out, "exit code: 0")
				head, tail, ok := strings.Cut(body, "[... ")
				if !ok {
					t.Fatalf("no truncation marker:\n%s", out)
				}
				n, rest, _ := strings.Cut(tail, " bytes truncated ...]\n")
				dropped, err := strconv.Atoi(n)
				if err != nil {
					t.Fatalf("marker count %q: %v", n, err)
				}
				if len(head)+dropped+len(rest) != len(full) {
					t.Errorf("head %d + dropped %d + tail %d != %d bytes printed", len(head), dropped, len(rest), len(full))
				}
				if !strings.HasPrefix(full, head) || !strings.HasSuffix(full, rest) {
					t.Errorf("kept parts are not the real head and tail")
				}
			},
		},
		{
			name: "a hundred megabytes stay small",
			env:  tool.Env{Limits: tool.Limits{OutputBytes: 4096}},
			args: map[string]any{"command": "head -c 100000000 /dev/zero | tr '\\0' x"},
			check: func(t *testing.T, out string) {
				if len(out) > 4096+200 {
					t.Errorf("result is %d bytes", len(out))
				}
				if !strings.Contains(out, "bytes truncated") || !strings.HasSuffix(out, "exit code: 0") {
					t.Errorf("unexpected result: %.200q", out)
				}
			},
		},
		{
			name: "timeout is reported",
			args: map[string]any{"command": "echo before; sleep 30", "timeout_seconds": 1},
			has:  []string{"before\n", "timed out: killed after 1 s\n", "exit code: 143 (killed by signal: terminated)"},
		},
		{
			name: "timeout cannot exceed the cap",
			env:  tool.Env{BashTimeout: 1 * time.Second},
			args: map[string]any{"command": "sleep 30", "timeout_seconds": 600},
			has:  []string{"note: timeout_seconds 600 exceeds the 1 s cap; using 1 s\n", "timed out: killed after 1 s\n"},
		},
		{
			name: "wrapper rewrites argv",
			env: tool.Env{Shell: argvWrapper(func(_ string, argv []string) ([]string, error) {
				return append([]string{"env", "FOO=wrapped"}, argv...), nil
			})},
			args: map[string]any{"command": "echo $FOO"},
			want: "wrapped\nexit code: 0",
		},
		{
			name: "wrapper sees the root and the shell argv",
			env: tool.Env{Shell: argvWrapper(func(dir string, argv []string) ([]string, error) {
				if len(argv) != 3 || argv[1] != "-c" || argv[2] != "echo hi" || dir == "" {
					return nil, fmt.Errorf("unexpected wrap(%q, %q)", dir, argv)
				}
				return argv, nil
			})},
			args: map[string]any{"command": "echo hi"},
			want: "hi\nexit code: 0",
		},
		{
			name: "wrapper refuses",
			env: tool.Env{Shell: argvWrapper(func(string, []string) ([]string, error) {
				return nil, errors.New("sandbox unavailable: install bubblewrap")
			})},
			args:    map[string]any{"command": "echo never"},
			wantErr: "bash: command refused: sandbox unavailable: install bubblewrap",
		},
		{
			name: "command that cannot start",
			env: tool.Env{Shell: argvWrapper(func(string, []string) ([]string, error) {
				return []string{"/nonexistent/jail"}, nil
			})},
			args:    map[string]any{"command": "echo never"},
			wantErr: "bash: start /nonexistent/jail:",
		},
		{
			name:    "missing command",
			args:    map[string]any{},
			wantErr: `bash: "command" is required`,
		},
		{
			name:    "blank command",
			args:    map[string]any{"command": "  "},
			wantErr: "bash: command is empty",
		},
		{
			name:    "negative timeout",
			args:    map[string]any{"command": "true", "timeout_seconds": -1},
			wantErr: "bash: timeout_seconds must be 1 or more",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := tc.env
			env.Root = t.TempDir()
			if err := os.WriteFile(filepath.Join(env.Root, "marker.txt"), []byte("in root\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := runBash(context.Background(), t, env, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q (output %q)", err, tc.wantErr, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if tc.want != "" && out != tc.want {
				t.Errorf("got  %q\nwant %q", out, tc.want)
			}
			for _, h := range tc.has {
				if !strings.Contains(out, h) {
					t.Errorf("result lacks %q:\n%s", h, out)
				}
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

// holderPipe makes a FIFO that the command under test opens on fd 3 before
// starting children, which inherit it. lines yields what is written to it;
// gone is closed at EOF, which the kernel delivers only once every process
// holding a write end has exited: the proof that none survived.
func holderPipe(t *testing.T) (path string, lines <-chan string, gone <-chan struct{}) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "holder")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	ln := make(chan string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ln)
		f, err := os.Open(path) // blocks until the command opens it
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			ln <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		// Release a reader still waiting in open because the command never
		// got as far as opening the FIFO.
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	return path, ln, done
}

// waitGone fails the test unless every holder of the pipe exits before a
// generous deadline; it returns as soon as they have.
func waitGone(t *testing.T, gone <-chan struct{}) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("processes started by the command still hold the pipe")
	}
}

// groupScript opens the holder FIFO on fd 3, starts two background sleepers
// and a foreground one, all inheriting it, and reports readiness through it.
func groupScript(fifo string) string {
	return fmt.Sprintf(`exec 3>%q; sleep 100 & sleep 100 & echo started; echo ready >&3; sleep 100; wait`, fifo)
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	fifo, lines, gone := holderPipe(t)
	out, err := runBash(context.Background(), t, tool.Env{Root: t.TempDir()},
		map[string]any{"command": groupScript(fifo), "timeout_seconds": 1})
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if !strings.Contains(out, "started\n") || !strings.Contains(out, "timed out: killed after 1 s") {
		t.Errorf("unexpected result:\n%s", out)
	}
	if first := <-lines; first != "ready" {
		t.Fatalf("children never started (got %q)", first)
	}
	waitGone(t, gone)
}

func TestBashCancelKillsGroup(t *testing.T) {
	t.Parallel()
	fifo, lines, gone := holderPipe(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		out string
		err error
	}
	res := make(chan result, 1)
	go func() {
		out, err := runBash(ctx, t, tool.Env{Root: t.TempDir()}, map[string]any{"command": groupScript(fifo)})
		res <- result{out, err}
	}()
	if first := <-lines; first != "ready" {
		t.Fatalf("children never started (got %q)", first)
	}
	cancel()
	var r result
	select {
	case r = <-res:
	case <-time.After(10 * time.Second):
		t.Fatal("Execute did not return after cancel")
	}
	if r.err == nil || !errors.Is(r.err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", r.err)
	}
	waitGone(t, gone)
}

// TestBashBackgroundDoesNotOutlive checks that a job the command leaves
// running is killed when the shell exits, and that the call returns without
// waiting for it.
func TestBashBackgroundDoesNotOutlive(t *testing.T) {
	t.Parallel()
	fifo, lines, gone := holderPipe(t)
	cmd := fmt.Sprintf(`exec 3>%q; sleep 100 & echo ready >&3; echo leaving`, fifo)
	out, err := runBash(context.Background(), t, tool.Env{Root: t.TempDir()}, map[string]any{"command": cmd})
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if out != "leaving\nexit code: 0" {
		t.Errorf("got %q", out)
	}
	if first := <-lines; first != "ready" {
		t.Fatalf("background job never started (got %q)", first)
	}
	waitGone(t, gone)
}

func TestBashCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := runBash(ctx, t, tool.Env{Root: t.TempDir()}, map[string]any{"command": "echo never"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestBashEscapedHolderDoesNotHang runs a command whose child leaves the
// process group (setsid) while keeping the output pipe open: the group kill
// cannot reach it, and the call must still return after the drain grace.
func TestBashEscapedHolderDoesNotHang(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cmd := fmt.Sprintf(`setsid sh -c 'echo $$ > %q; exec sleep 60' & while [ ! -s %q ]; do :; done; echo leaving`, pidFile, pidFile)
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	start := time.Now()
	out, err := runBash(context.Background(), t, tool.Env{Root: dir}, map[string]any{"command": cmd})
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if out != "leaving\nexit code: 0" {
		t.Errorf("got %q", out)
	}
	if d := time.Since(start); d > bashDrainGrace+5*time.Second {
		t.Errorf("took %v; the drain should give up after %v", d, bashDrainGrace)
	}
}
