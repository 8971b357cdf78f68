//go:build !unix && !windows

package proc

import "os/exec"

// SetGroup does nothing where process groups are unknown.
func SetGroup(*exec.Cmd) {}

// TerminateGroup kills cmd itself.
func TerminateGroup(cmd *exec.Cmd) { KillGroup(cmd) }

// KillGroup kills cmd itself.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// SweepGroup does nothing once cmd has exited.
func SweepGroup(*exec.Cmd) {}
