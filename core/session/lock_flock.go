//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package session

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// fileLock is an flock(2) on the lock file. The kernel drops it when its
// holder dies however it dies, so a lock left by a killed process is taken
// over without guessing from pids (which get reused); the pid written into
// the file only names the holder in ErrBusy.
type fileLock struct {
	f *os.File
}

// acquire takes the lock at path without waiting.
func acquire(path string) (*fileLock, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("lock transcript: %w", err)
		}
		err = flock(f)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, busy(path)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock transcript %s: %w", path, err)
		}
		// A holder removes the file before it lets go, so the file locked
		// here may already be unlinked: the lock only counts when it is on
		// the file at path now.
		if held, err := f.Stat(); err == nil {
			if now, err := os.Stat(path); err == nil && os.SameFile(held, now) {
				if err := writePID(f); err != nil {
					f.Close()
					return nil, fmt.Errorf("lock transcript %s: %w", path, err)
				}
				return &fileLock{f: f}, nil
			}
		}
		f.Close()
	}
}

func flock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lockErr error
	if err := rc.Control(func(fd uintptr) {
		lockErr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
	}); err != nil {
		return err
	}
	return lockErr
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// release removes the lock file while still holding the lock (so no one
// can take the lock on a file about to vanish), then lets go.
func (l *fileLock) release() error {
	rmErr := os.Remove(l.f.Name())
	if errors.Is(rmErr, os.ErrNotExist) {
		rmErr = nil
	}
	return errors.Join(rmErr, l.f.Close())
}
