//go:build windows

package session

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

const (
	errorSharingViolation syscall.Errno = 32
	fileFlagDeleteOnClose               = 0x04000000
)

// fileLock on Windows is the lock file opened with no sharing and
// delete-on-close: a second open fails while the holder lives, and the
// system closes and deletes the file when the holder dies, so a stale lock
// cannot outlive its process. This is best effort: the pid written into
// the file cannot be read by the process that was refused (nothing else
// may open it), so ErrBusy names no holder.
type fileLock struct {
	f *os.File
}

// acquire takes the lock at path without waiting.
func acquire(path string) (*fileLock, error) {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, fmt.Errorf("lock transcript: %w", err)
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, 0, nil,
		syscall.OPEN_ALWAYS, syscall.FILE_ATTRIBUTE_NORMAL|fileFlagDeleteOnClose, 0)
	if errors.Is(err, errorSharingViolation) {
		return nil, busy(path)
	}
	if err != nil {
		return nil, fmt.Errorf("lock transcript %s: %w", path, err)
	}
	f := os.NewFile(uintptr(h), path)
	if _, err := f.Write([]byte(strconv.Itoa(os.Getpid()) + "\n")); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock transcript %s: %w", path, err)
	}
	return &fileLock{f: f}, nil
}

// release closes the handle, which deletes the file.
func (l *fileLock) release() error { return l.f.Close() }
