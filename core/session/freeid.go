package session

import (
	"fmt"
	"os"
	"path/filepath"
)

// FreeID is id when dir holds no transcript of that name, else id with the
// first suffix -r2, -r3, … that is free. A task run again under the same
// session (a fleet resumed in place) thus gets a transcript of its own
// beside the one its interrupted run left, which stays as it was. A name
// that cannot be checked is returned as it is, so the create that follows
// reports the real problem.
func FreeID(dir, id string) string {
	cand := id
	for n := 2; ; n++ {
		if _, err := os.Lstat(filepath.Join(dir, cand+".jsonl")); err != nil {
			return cand
		}
		cand = fmt.Sprintf("%s-r%d", id, n)
	}
}
