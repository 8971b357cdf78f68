package session

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider"
)

// newTranscript writes a closed transcript with one message and returns
// its path.
func newTranscript(t *testing.T, dir, id string) string {
	t.Helper()
	s, err := Create(dir, Header{ID: id, Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(provider.Message{Role: provider.RoleUser, Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return s.Path()
}

func TestReopen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		tail    string // appended to a whole transcript before Reopen
		wantErr string
		msgs    int // messages after appending one more
	}{
		{name: "whole", msgs: 2},
		{name: "torn tail is cut off", tail: `{"type":"message","message":{"role":"us`, msgs: 2},
		{name: "zeros are cut off", tail: "\x00\x00\x00", msgs: 2},
		{name: "corrupt middle is refused", tail: "{oops\n" + testMsg, wantErr: "line 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := newTranscript(t, t.TempDir(), "r")
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(tt.tail); err != nil {
				t.Fatal(err)
			}
			f.Close()
			before, _ := os.ReadFile(path)
			s, err := Reopen(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Reopen = %v, want %q", err, tt.wantErr)
				}
				if after, _ := os.ReadFile(path); string(after) != string(before) {
					t.Fatal("a refused Reopen changed the file")
				}
				if _, err := os.Stat(lockPath(path)); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a refused Reopen left its lock: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Append(provider.Message{Role: provider.RoleAssistant, Content: "again"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			h, msgs, warn, err := Load(path)
			if err != nil || warn != nil {
				t.Fatalf("Load = %v, warning %v", err, warn)
			}
			if h.ID != "r" || len(msgs) != tt.msgs || msgs[len(msgs)-1].Content != "again" {
				t.Fatalf("header %+v, messages %+v", h, msgs)
			}
			if _, err := os.Stat(lockPath(path)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("Close left the lock file: %v", err)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "none.jsonl")
		if _, err := Reopen(path); err == nil {
			t.Fatal("Reopen of a missing file succeeded")
		}
		if _, err := os.Stat(lockPath(path)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("lock left behind: %v", err)
		}
	})
}

// TestLockInProcess holds a transcript and tries every way of writing it
// again from the same process.
func TestLockInProcess(t *testing.T) {
	t.Parallel()
	if !locking() {
		t.Skip("no transcript locks on " + runtime.GOOS)
	}
	dir := t.TempDir()
	s, err := Create(dir, Header{ID: "held"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Reopen(s.Path()); !errors.Is(err, ErrBusy) {
		t.Fatalf("Reopen of a live session = %v, want ErrBusy", err)
	}
	if _, err := Create(dir, Header{ID: "held"}); !errors.Is(err, ErrBusy) {
		t.Fatalf("Create over a live session = %v, want ErrBusy", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Reopen(s.Path())
	if err != nil {
		t.Fatalf("Reopen after Close: %v", err)
	}
	if _, err := Reopen(s.Path()); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Reopen = %v, want ErrBusy", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStaleLockFileTakenOver leaves a lock file as a killed process does
// and checks that Reopen takes it over.
func TestStaleLockFileTakenOver(t *testing.T) {
	t.Parallel()
	path := newTranscript(t, t.TempDir(), "stale")
	if err := os.WriteFile(lockPath(path), []byte("999999999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Reopen(path)
	if err != nil {
		t.Fatalf("Reopen over a stale lock: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// lockHelperEnv names the transcript the helper process holds.
const lockHelperEnv = "REASONIX_TEST_LOCK_HOLDER"

// TestLockHolderProcess is not a test: run by TestLockAcrossProcesses
// with lockHelperEnv set, it reopens the transcript, says "locked" and
// holds it until its stdin closes or it is killed.
func TestLockHolderProcess(t *testing.T) {
	path := os.Getenv(lockHelperEnv)
	if path == "" {
		t.Skip("helper process only")
	}
	s, err := Reopen(path)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	if err := s.Close(); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// TestLockAcrossProcesses holds a transcript in a second process: this
// one is refused with the holder's pid while it lives, and takes the lock
// over once it has been killed with SIGKILL (no chance to clean up).
func TestLockAcrossProcesses(t *testing.T) {
	t.Parallel()
	if !locking() {
		t.Skip("no transcript locks on " + runtime.GOOS)
	}
	path := newTranscript(t, t.TempDir(), "shared")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper said %q (%v)", line, err)
	}

	_, err = Reopen(path)
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("Reopen while another process holds it = %v, want ErrBusy", err)
	}
	if runtime.GOOS != "windows" && !strings.Contains(err.Error(), fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Errorf("error %q does not name the holder, pid %d", err, cmd.Process.Pid)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if _, err := os.Stat(lockPath(path)); runtime.GOOS != "windows" && err != nil {
		t.Fatalf("the killed holder's lock file is gone (%v): nothing stale to take over", err)
	}
	s, err := Reopen(path)
	if err != nil {
		t.Fatalf("Reopen after the holder was killed: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// locking reports whether this platform has transcript locks.
func locking() bool {
	switch runtime.GOOS {
	case "darwin", "dragonfly", "freebsd", "linux", "netbsd", "openbsd", "windows", "android", "ios":
		return true
	}
	return false
}
