//go:build windows

package mcp

import (
	"os/exec"
	"strconv"
	"syscall"
)

// startInGroup starts the server in a new process group, which keeps
// console Ctrl+C aimed at the agent from reaching it.
func startInGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// terminateGroup has no gentle counterpart for a console-less child on
// Windows; the tree is killed.
func terminateGroup(cmd *exec.Cmd) {
	killGroup(cmd)
}

// killGroup kills the server's process tree with taskkill /T, which
// follows parent links, then the server itself in case taskkill is
// unavailable.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	kill := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
	kill.SysProcAttr = &syscall.SysProcAttr{HideWindow: true}
	_ = kill.Run()
	_ = cmd.Process.Kill()
}

// sweepGroup does nothing: once the server has been waited for, its pid
// may belong to an unrelated process, and taskkill /T would follow it.
func sweepGroup(*exec.Cmd) {}
