package compact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"reasonix/core/atomicfile"
	"reasonix/core/provider"
)

// ArchiveRecord is one line of an archive file: a message as it was just
// before a compaction shortened or folded it away.
type ArchiveRecord struct {
	// Session and Task name the conversation the message belonged to.
	Session string `json:"session"`
	Task    string `json:"task,omitempty"`
	// Index is the message's position in the conversation when it was
	// archived.
	Index int `json:"index"`
	// Tier is the compaction that archived it: snip, prune or fold.
	Tier    string           `json:"tier"`
	Time    time.Time        `json:"time"`
	Message provider.Message `json:"message"`
}

// ArchiveDir is where archives live under the Reasonix home.
func ArchiveDir(home string) string { return filepath.Join(home, "archive") }

// WriteArchive writes recs as a new file <dir>/<timestamp>.jsonl, one
// record a line, and returns its path. The file appears whole or not at
// all (temp file and rename), so a crash never leaves half an archive; a
// name already taken gets a numeric suffix.
func WriteArchive(dir string, now time.Time, recs []ArchiveRecord) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return "", fmt.Errorf("archive: encode: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("archive: %w", err)
	}
	stamp := now.UTC().Format("20060102-150405.000000000")
	for n := 0; n < 1000; n++ {
		name := stamp + ".jsonl"
		if n > 0 {
			name = fmt.Sprintf("%s-%d.jsonl", stamp, n)
		}
		path := filepath.Join(dir, name)
		if _, err := os.Lstat(path); err == nil {
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("archive: %w", err)
		}
		if err := atomicfile.Write(path, b.Bytes(), 0o600); err != nil {
			return "", fmt.Errorf("archive: %w", err)
		}
		return path, nil
	}
	return "", fmt.Errorf("archive: no free name for %s in %s", stamp, dir)
}

// Records are the archive records of c applied to msgs: each message an
// edit rewrites, as it was, and each message a fold removes. Archived
// before the compaction is recorded, they keep every original somewhere:
// a result pruned after a snip was archived whole by the snip.
func (c *Compaction) Records(msgs []provider.Message, session, task string, now time.Time) []ArchiveRecord {
	var recs []ArchiveRecord
	add := func(i int, m provider.Message) {
		recs = append(recs, ArchiveRecord{Session: session, Task: task, Index: i, Tier: c.Tier, Time: now.UTC(), Message: m})
	}
	for _, e := range c.Edits {
		if e.Index >= 0 && e.Index < len(msgs) {
			add(e.Index, msgs[e.Index])
		}
	}
	if f := c.Fold; f != nil {
		keep := map[int]bool{}
		for _, k := range f.Keep {
			keep[k] = true
		}
		for i := f.From; i < f.To && i < len(msgs); i++ {
			if !keep[i] {
				add(i, msgs[i])
			}
		}
	}
	return recs
}
