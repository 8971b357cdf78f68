package proc

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDeathSignal kills a parent with SIGKILL, which leaves it no chance
// to clean up, and checks that the child it started dies with it.
func TestDeathSignal(t *testing.T) {
	t.Parallel()
	parent := exec.Command(os.Args[0], "-test.run=^TestDeathSignalHelper$")
	parent.Env = append(os.Environ(), "PROC_DEATH_HELPER=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = parent.Process.Kill()
		_ = parent.Wait()
		t.Fatalf("read the child's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("child pid %q: %v", line, err)
	}
	// The group kill is the test's safety net, should the child survive.
	defer syscall.Kill(-pid, syscall.SIGKILL)
	_ = parent.Process.Kill()
	_ = parent.Wait()
	// The orphan is reaped by init, so its /proc entry goes; polling is
	// the only way to watch a process that is not our child.
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d outlived its parent", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid runs a process that has not exited; a zombie
// waiting for its reaper counts as gone.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestDeathSignalHelper is not a test: TestDeathSignal runs the test binary
// in this mode to get a parent it can kill. It starts sleep through Start,
// prints its pid and waits to be killed.
func TestDeathSignalHelper(t *testing.T) {
	if os.Getenv("PROC_DEATH_HELPER") != "1" {
		t.Skip("helper process for TestDeathSignal")
	}
	cmd := exec.Command("sleep", "30")
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString(strconv.Itoa(cmd.Process.Pid) + "\n")
	_ = Wait(cmd)
}
