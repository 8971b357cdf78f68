package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Tmpfs mounts a tmpfs of size bytes on a new temporary directory and
// returns it; the mount goes away when the test ends. A small one is a
// disk that really fills up: writes past its size fail with ENOSPC, part
// way through when they straddle the end. Mounting needs root (or
// CAP_SYS_ADMIN); where it is refused the test is reported Missing.
func Tmpfs(tb testing.TB, size int64) string {
	tb.Helper()
	dir := tb.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		Missing(tb, "mounting a %d-byte tmpfs on %s was refused (%v): run the test as root, which CI does, to check behaviour on a full disk", size, dir, err)
		return ""
	}
	// Lazy: a file the code under test still holds open must not keep
	// the mount, and with it the test's temporary directory, busy.
	tb.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			tb.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes a file at path until its disk is full and returns the file's
// size; freeing is removing the file (or truncating it to leave room). It
// takes no testing.TB so that a model fake's handler, off the test's
// goroutine, can fill a disk at the moment a request arrives.
func Fill(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	var n int64
	for {
		w, err := f.Write(buf)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("fill %s: %w", filepath.Dir(path), err)
		}
	}
}
