//go:build !unix && !windows

package mcp

import "os/exec"

// startInGroup does nothing where process groups are unknown.
func startInGroup(*exec.Cmd) {}

// terminateGroup kills the server itself.
func terminateGroup(cmd *exec.Cmd) { killGroup(cmd) }

// killGroup kills the server itself.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// sweepGroup does nothing once the server has exited.
func sweepGroup(*exec.Cmd) {}
