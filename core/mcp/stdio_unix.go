//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// startInGroup makes the server the leader of a new process group, so one
// signal reaches everything it starts.
func startInGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminateGroup sends SIGTERM to the server's process group.
func terminateGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
}

// killGroup sends SIGKILL to the server's process group. The group outlives
// its leader while any member is alive, so this also reaches what the
// server left behind; an empty group is not an error.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// sweepGroup kills what is left of the group once the leader has exited.
// The group id cannot be reused while any member lives, so this reaches
// only the server's own descendants.
func sweepGroup(cmd *exec.Cmd) { killGroup(cmd) }
