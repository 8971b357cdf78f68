//go:build unix

package builtin

import (
	"context"
	"errors"
	"testing"
	"time"

	"reasonix/core/panics"
)

// panickingSink is an outputSink whose first write panics, standing in for
// a bug in the output capture.
type panickingSink struct{}

func (panickingSink) Write([]byte) (int, error) { panic("capture exploded") }
func (panickingSink) Bytes() []byte             { return nil }

// TestRunCommandCopierPanic checks that a panic while reading the output
// becomes the call's error at once, and that the shell, which would
// otherwise sleep on, is killed rather than waited for.
func TestRunCommandCopierPanic(t *testing.T) {
	t.Parallel()
	type outcome struct {
		run commandRun
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		run, err := runCommand(context.Background(), t.TempDir(), []string{"sh", "-c", "echo hi; sleep 30"}, 0, panickingSink{})
		done <- outcome{run, err}
	}()
	select {
	case o := <-done:
		var pe *panics.Error
		if !errors.As(o.err, &pe) || pe.Value != "capture exploded" {
			t.Fatalf("runCommand = %+v, %v; want the panic as its error", o.run, o.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("runCommand waited for the shell after its output reader panicked")
	}
}
