//go:build linux

// Command peakrss runs a command and writes the command's peak resident
// set size, in kilobytes, to a file. The start-up and fleet benchmarks
// start the binary through it.
//
// They cannot read the figure from their own child's rusage: Go starts
// children with vfork, so until it execs, a child runs in its parent's
// address space, and Linux carries that address space's high-water mark
// into the child's ru_maxrss at exec. A child of a benchmark process that
// once held 60 MB reports at least 60 MB, whatever it used. A child of this
// small program inherits only this program's few megabytes.
//
// Usage: peakrss OUT COMMAND [ARG...]. Standard streams, the environment
// and the working directory pass through; the exit status is the
// command's. The command is killed if this program dies first.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: peakrss OUT COMMAND [ARG...]")
		return 2
	}
	// Pdeathsig fires when the thread that started the child ends, so the
	// start and the wait stay on this one thread.
	runtime.LockOSThread()
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		return 127
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "peakrss: no rusage")
		return 127
	}
	if werr := os.WriteFile(args[0], []byte(strconv.FormatInt(ru.Maxrss, 10)), 0o644); werr != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", werr)
		return 127
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}
