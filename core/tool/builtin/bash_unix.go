//go:build unix

package builtin

import (
	"os"
	"os/exec"
	"syscall"
)

// startInGroup makes the command the leader of a new process group, so one
// signal to the group reaches everything it starts.
func startInGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminateGroup sends SIGTERM to the command's process group.
func terminateGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
}

// killGroup sends SIGKILL to the command's process group. The group outlives
// its leader while any member is alive, so this also reaches what the shell
// left behind after it exited; an empty group is not an error.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

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
