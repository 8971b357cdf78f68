//go:build windows

package proc

import (
	"os/exec"
	"strconv"
	"syscall"
)

// SetGroup starts cmd in a new process group, which keeps console Ctrl+C
// aimed at the agent from reaching it.
func SetGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// TerminateGroup kills the tree: Windows has no gentle counterpart for a
// console-less child.
func TerminateGroup(cmd *exec.Cmd) {
	KillGroup(cmd)
}

// KillGroup kills cmd's process tree with taskkill /T, which follows parent
// links and so reaches children only while cmd is alive, then kills cmd
// itself in case taskkill is unavailable.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	kill := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
	kill.SysProcAttr = &syscall.SysProcAttr{HideWindow: true}
	_ = kill.Run()
	_ = cmd.Process.Kill()
}

// SweepGroup does nothing: once cmd has been waited for, its pid may belong
// to an unrelated process, and taskkill /T would follow it.
func SweepGroup(*exec.Cmd) {}
