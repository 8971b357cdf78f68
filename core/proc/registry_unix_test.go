//go:build unix

package proc

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// startHolder starts, through r, a shell whose background child holds the
// returned pipe: its EOF says the whole group is gone, not just the shell.
func startHolder(t *testing.T, r *registry) (*exec.Cmd, *os.File) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close() })
	cmd := exec.Command("sh", "-c", "sleep 30 & echo started; wait")
	cmd.Stdout = pw
	err = r.start(cmd)
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("started\n"))
	if _, err := io.ReadFull(pr, buf); err != nil {
		t.Fatalf("read: %v", err)
	}
	return cmd, pr
}

// waitEOF fails the test unless pr reaches EOF within a bound far above
// any kill's latency.
func waitEOF(t *testing.T, pr *os.File) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(pr)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("read: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a background child survived: the pipe is still open")
	}
}

func TestKillAll(t *testing.T) {
	t.Parallel()
	t.Run("kills every group and refuses new starts", func(t *testing.T) {
		t.Parallel()
		r := newRegistry()
		var pipes []*os.File
		waited := make(chan error, 3)
		for range 3 {
			cmd, pr := startHolder(t, r)
			pipes = append(pipes, pr)
			go func() { waited <- r.wait(cmd) }()
		}
		if err := r.killAll(10 * time.Second); err != nil {
			t.Fatalf("killAll: %v", err)
		}
		for range 3 {
			if err := <-waited; err == nil {
				t.Error("a killed shell exited cleanly")
			}
		}
		for _, pr := range pipes {
			waitEOF(t, pr)
		}
		if err := r.start(exec.Command("true")); !errors.Is(err, ErrStopping) {
			t.Errorf("start after killAll = %v, want ErrStopping", err)
		}
	})
	t.Run("nothing to kill once waited for", func(t *testing.T) {
		t.Parallel()
		r := newRegistry()
		cmd := exec.Command("true")
		if err := r.start(cmd); err != nil {
			t.Fatal(err)
		}
		if err := r.wait(cmd); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := r.killAll(10 * time.Second); err != nil {
			t.Errorf("killAll with nothing running = %v", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("killAll with nothing running took %s", took)
		}
	})
	t.Run("returns by the deadline when nobody waits", func(t *testing.T) {
		t.Parallel()
		r := newRegistry()
		cmd, pr := startHolder(t, r)
		start := time.Now()
		err := r.killAll(200 * time.Millisecond)
		if err == nil || !strings.Contains(err.Error(), "1 process groups") {
			t.Errorf("killAll = %v, want one group not reaped", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("killAll took %s past a 200ms deadline", took)
		}
		_ = r.wait(cmd)
		waitEOF(t, pr)
	})
}
