package proc

import (
	"os/exec"
	"testing"
)

// TestNotStarted checks that signalling a command that never started is
// a no-op rather than a nil dereference.
func TestNotStarted(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("does-not-matter")
	SetGroup(cmd)
	TerminateGroup(cmd)
	KillGroup(cmd)
	SweepGroup(cmd)
}
