//go:build windows

package builtin

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// startInGroup starts the command in a new process group, which keeps
// console Ctrl+C aimed at the agent from reaching it.
func startInGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// terminateGroup has no gentle counterpart on Windows; the tree is killed.
func terminateGroup(cmd *exec.Cmd) {
	killGroup(cmd)
}

// killGroup kills the command's process tree with taskkill /T, which follows
// parent links and so reaches children only while the shell is alive, then
// kills the shell itself in case taskkill is unavailable. Once the shell
// has exited its orphans cannot be found this way; the output drain
// timeout then keeps the call from hanging on them.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	kill := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
	kill.SysProcAttr = &syscall.SysProcAttr{HideWindow: true}
	_ = kill.Run()
	_ = cmd.Process.Kill()
}

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
