package session

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"reasonix/core/goal"
	"reasonix/core/provider"
	"reasonix/core/text"
)

// ErrNoSession is returned by Latest when a directory holds no top-level
// session to continue.
var ErrNoSession = errors.New("no session")

// promptRunes is how much of the last prompt a Summary keeps: one line of
// a listing.
const promptRunes = 80

// Summary describes one top-level session for a listing.
type Summary struct {
	ID string
	// Started is the header's creation time.
	Started time.Time
	// Updated is when the transcript's last record was written: the
	// file's modification time, which every append moves and nothing
	// else does (opening or reading a session leaves it).
	Updated time.Time
	Model   string
	// Turns counts the user messages.
	Turns int
	// LastPrompt is the last user message on one line, cut to about 80
	// runes.
	LastPrompt string
	// Path is the transcript file.
	Path string
}

// List summarises the top-level sessions whose transcripts are in dir,
// newest first by start. Subagent transcripts (Header.Subagent: a task's,
// or a profile run on its own) are left out: they are parts of another
// session or ran under another tool set, not sessions to resume. A
// missing dir holds no sessions. A transcript that cannot be read does not
// hide the others: List returns every summary it could make together with
// an error naming each file it could not.
func List(dir string) ([]Summary, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var (
		out  []Summary
		errs []error
	)
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		s, top, err := summarize(filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if top {
			out = append(out, s)
		}
	}
	// IDs begin with their creation time, so they break ties in order.
	slices.SortFunc(out, func(a, b Summary) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out, errors.Join(errs...)
}

// Latest is the top-level session in dir used last, the one --continue
// resumes: the one whose transcript had a record written last (Updated),
// not the one started last, so a session resumed by id, or answered by
// `fleet resume`, is the one that goes on. Equal times fall back to the
// start. Unreadable transcripts are skipped; when no session is left the
// error is ErrNoSession, joined with why the others could not be read.
func Latest(dir string) (Summary, error) {
	list, err := List(dir)
	if len(list) > 0 {
		// List is newest first by start, so the first of equal Updated
		// times is the one started last.
		best := list[0]
		for _, s := range list[1:] {
			if s.Updated.After(best.Updated) {
				best = s
			}
		}
		return best, nil
	}
	if err != nil {
		return Summary{}, errors.Join(fmt.Errorf("latest session in %s: %w", dir, ErrNoSession), err)
	}
	return Summary{}, fmt.Errorf("latest session in %s: %w", dir, ErrNoSession)
}

// summaryRecord decodes only what a Summary needs from a record.
type summaryRecord struct {
	Type    string  `json:"type"`
	Header  *Header `json:"header"`
	Message *struct {
		Role    provider.Role `json:"role"`
		Content string        `json:"content"`
	} `json:"message"`
}

// This package's encoder starts every message record with messagePrefix
// and the role (Message's first field). A listing skips the records of
// other roles than user by that prefix without decoding them, which makes
// it about ten times faster on transcripts full of large tool results
// (BenchmarkList); a line written any other way is decoded in full.
var (
	messagePrefix = []byte(`{"type":"message","message":{"role":"`)
	userRole      = []byte(`user"`)
)

// summarize reads the transcript at path; top is false for a subagent's
// (Header.Subagent), whose reading stops at the header, and for a file
// that holds no complete record.
func summarize(path string) (s Summary, top bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return s, false, fmt.Errorf("read transcript: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return s, false, fmt.Errorf("read transcript: %w", err)
	}
	s.Updated = st.ModTime()
	var (
		sawHdr, sub bool
		records     int
		last        string
	)
	_, err = scanRecords(f, path, func(n int, line []byte) error {
		records++
		if rest, ok := bytes.CutPrefix(line, messagePrefix); ok && !bytes.HasPrefix(rest, userRole) {
			return nil
		}
		var rec summaryRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		switch {
		case rec.Type == "header" && rec.Header != nil:
			if rec.Header.Subagent() {
				sub = true
				return errStop
			}
			sawHdr = true
			s.ID, s.Started, s.Model = rec.Header.ID, rec.Header.Created, rec.Header.Model
		case rec.Type == "message" && rec.Message != nil && rec.Message.Role == provider.RoleUser:
			s.Turns++
			last = rec.Message.Content
		}
		return nil
	})
	if err != nil {
		return s, false, err
	}
	switch {
	case sub:
		return s, false, nil
	case !sawHdr && records > 0:
		return s, false, fmt.Errorf("read transcript %s: no header", path)
	case !sawHdr:
		// Killed before its header reached the disk: nothing to resume.
		return s, false, nil
	}
	if objective, ok := goal.ObjectiveOf(last); ok {
		// A goal's turns carry its block: name the goal instead.
		last = "goal: " + objective
	}
	s.LastPrompt = text.OneLine(last, promptRunes)
	s.Path = path
	return s, true, nil
}
