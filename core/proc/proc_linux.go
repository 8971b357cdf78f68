package proc

import "syscall"

// setDeathSignal asks the kernel to SIGKILL the child when its parent
// dies. The kernel's parent is the thread that forked, and the Go runtime
// ends a thread only when a goroutine locked to it with
// runtime.LockOSThread returns still locked; nothing in this program or its
// dependencies does that, so the signal comes when the process exits.
// Should that change, a child dies early and its call fails visibly,
// rather than outliving us; locking a thread per child instead would cost
// one OS thread for every running command.
func setDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
