package session

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrBusy reports a transcript that another live process is writing: a
// second writer would interleave its records with the first's and leave a
// conversation no model accepts.
var ErrBusy = errors.New("session is in use by another process")

// lockPath is the advisory lock beside a transcript. It ends in .lock, not
// .jsonl, so nothing that lists transcripts mistakes it for one.
func lockPath(transcript string) string { return transcript + ".lock" }

// busy builds the ErrBusy error for the lock at path, naming the holder's
// pid when the lock file says it.
func busy(path string) error {
	b, err := os.ReadFile(path)
	if err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			return fmt.Errorf("%w: %s is held by pid %d", ErrBusy, path, pid)
		}
	}
	return fmt.Errorf("%w: %s is held", ErrBusy, path)
}
