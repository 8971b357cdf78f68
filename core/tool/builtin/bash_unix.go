//go:build unix

package builtin

import (
	"os"
	"syscall"
)

// signalled reports the shell-style exit code (128+n) and the signal name
// when the process was ended by a signal.
func signalled(ps *os.ProcessState) (int, string, bool) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, "", false
	}
	return 128 + int(ws.Signal()), ws.Signal().String(), true
}

// abandonOutput stops reading output that a process outside the group
// still holds open. Pipes are pollable on Unix, so closing the read end
// wakes the blocked reader, which is then waited for.
func abandonOutput(pr *os.File, drained <-chan struct{}) {
	pr.Close()
	<-drained
}
