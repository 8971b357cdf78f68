//go:build windows

package builtin

import "os"

// signalled is always false: Windows processes end with an exit code.
func signalled(*os.ProcessState) (int, string, bool) {
	return 0, "", false
}

// abandonOutput stops reading output that a surviving process still holds
// open. Windows pipes are not pollable: closing the read end waits for the
// blocked read, which ends only when the last writer exits. The close and
// the reader are left to finish on their own then; the result is taken
// from what was captured so far.
func abandonOutput(pr *os.File, drained <-chan struct{}) {
	go func() {
		<-drained
		pr.Close()
	}()
}
