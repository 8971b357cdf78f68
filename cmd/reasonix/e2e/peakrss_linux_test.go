package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

var peakrssBuild struct {
	once sync.Once
	path string
	err  error
}

// peakRSSLauncher builds internal/peakrss next to the e2e binary, once
// per process, and returns its path.
func peakRSSLauncher(tb testing.TB) string {
	tb.Helper()
	peakrssBuild.once.Do(func() {
		path := filepath.Join(filepath.Dir(e2eBinary), "peakrss")
		cmd := exec.Command("go", "build", "-o", path, "./internal/peakrss")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			peakrssBuild.err = fmt.Errorf("%w\n%s", err, out)
			return
		}
		peakrssBuild.path = path
	})
	if peakrssBuild.err != nil {
		tb.Fatalf("build the peakrss launcher: %v", peakrssBuild.err)
	}
	return peakrssBuild.path
}

// measuredCommand is e.command started through the peakrss launcher;
// peakKB, called after the command has been waited for, returns the
// binary's own peak RSS in kilobytes (see internal/peakrss for why the
// child's rusage cannot be read directly).
func (e *e2e) measuredCommand(ctx context.Context, args ...string) (cmd *exec.Cmd, stdout, stderr *bytes.Buffer, peakKB func() int64) {
	launcher := peakRSSLauncher(e.t)
	out := filepath.Join(e.t.TempDir(), "peak-rss")
	cmd, stdout, stderr = e.command(ctx, args...)
	cmd.Path = launcher
	cmd.Args = append([]string{launcher, out, e2eBinary}, args...)
	return cmd, stdout, stderr, func() int64 {
		e.t.Helper()
		b, err := os.ReadFile(out)
		if err != nil {
			e.t.Fatalf("read the peak RSS: %v", err)
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			e.t.Fatalf("peak RSS %q: %v", b, err)
		}
		return kb
	}
}

// TestPeakRSSIsTheBinarysOwn holds the reason the benchmarks go through
// the launcher: once this process has held 128 MB, a child it starts
// directly reports at least that in its rusage, and one started through
// peakrss reports what it used itself.
func TestPeakRSSIsTheBinarysOwn(t *testing.T) {
	const held = 128 << 20
	ballast := make([]byte, held)
	for i := range ballast {
		ballast[i] = byte(i) | 1
	}
	e := newE2E(t)

	cmd, _, stderr := e.command(t.Context(), "version")
	if err := cmd.Run(); err != nil {
		t.Fatalf("version: %v\n%s", err, stderr)
	}
	direct := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if direct < held>>10 {
		t.Logf("a directly started child reported %d KB, under this process's %d KB: the launcher is not needed on this kernel", direct, held>>10)
	}

	cmd, _, stderr, peak := e.measuredCommand(t.Context(), "version")
	if err := cmd.Run(); err != nil {
		t.Fatalf("version through peakrss: %v\n%s", err, stderr)
	}
	own := peak()
	if own <= 0 || own >= held>>11 {
		t.Fatalf("peakrss reported %d KB for `reasonix version` after this process held %d KB; want its own few tens of MB", own, held>>10)
	}
	runtime.KeepAlive(ballast)
}
