//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

// SetGroup makes cmd, once started, the leader of a new process group, so
// one signal reaches everything it starts. On Linux cmd also gets SIGKILL
// should this process die first (see the package doc).
func SetGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

// TerminateGroup sends SIGTERM to cmd's process group.
func TerminateGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
}

// KillGroup sends SIGKILL to cmd's process group; an empty group is not an
// error.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// SweepGroup kills what is left of the group once cmd has been waited for.
// The group id cannot be reused while any member lives, so this reaches
// only cmd's own descendants.
func SweepGroup(cmd *exec.Cmd) { KillGroup(cmd) }
