//go:build unix

package proc

import (
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestGroupReachesGrandchildren starts a shell whose background child
// holds the output pipe: the pipe reaches EOF only once the whole group is
// gone, which killing the shell alone would not achieve.
func TestGroupReachesGrandchildren(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		stop func(*exec.Cmd)
	}{
		{"terminate", TerminateGroup},
		{"kill", KillGroup},
		{"sweep after the leader is gone", func(cmd *exec.Cmd) {
			_ = cmd.Process.Kill()
			_, _ = cmd.Process.Wait()
			SweepGroup(cmd)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			cmd := exec.Command("sh", "-c", "sleep 30 & echo started; wait")
			cmd.Stdout = pw
			SetGroup(cmd)
			if err := cmd.Start(); err != nil {
				pw.Close()
				t.Fatal(err)
			}
			pw.Close()
			buf := make([]byte, len("started\n"))
			if _, err := io.ReadFull(pr, buf); err != nil {
				t.Fatalf("read: %v", err)
			}
			tt.stop(cmd)
			_ = cmd.Wait()
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
				t.Fatal("the background child survived: the pipe is still open")
			}
		})
	}
}
