//go:build unix && !linux

package proc

import "syscall"

// setDeathSignal does nothing: only Linux has a parent-death signal, so
// elsewhere KillAll is what stops children of a process that exits.
func setDeathSignal(*syscall.SysProcAttr) {}
