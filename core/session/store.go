package session

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"reasonix/core/compact"
	"reasonix/core/provider"
)

// FormatVersion is the transcript format written by this package.
const FormatVersion = 1

// Header is the first record of a transcript.
type Header struct {
	Version int       `json:"version"`
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	Cwd     string    `json:"cwd,omitempty"`
	Model   string    `json:"model,omitempty"`
	// Parent is the session that spawned this one (subagents).
	Parent string `json:"parent,omitempty"`
	// Task is the subagent task this session carries out.
	Task string `json:"task,omitempty"`
	// Kind is what ran a top-level transcript: empty for a session of
	// run, the chat or serve, KindSubagent for one of `reasonix subagent
	// try|run`.
	Kind string `json:"kind,omitempty"`
	// Profile is the subagent profile a KindSubagent session ran.
	Profile string `json:"profile,omitempty"`
}

// KindSubagent marks the transcript of a subagent profile run on its own
// (`reasonix subagent try|run`). Such a session ran under the profile's
// tools, often read-only ones, so it is never continued as an ordinary
// session: --continue, the session lists and --resume leave it out.
const KindSubagent = "subagent"

// Subagent reports whether h is a subagent's transcript, one a task of
// another session wrote (Parent set) or one of a profile run on its own
// (KindSubagent): not a session to list or continue.
func (h Header) Subagent() bool {
	return h.Parent != "" || h.Kind == KindSubagent
}

// record is one line of the file. Exactly one of Header, Message and
// Compaction is set.
type record struct {
	Type       string              `json:"type"`
	Header     *Header             `json:"header,omitempty"`
	Message    *provider.Message   `json:"message,omitempty"`
	Compaction *compact.Compaction `json:"compaction,omitempty"`
}

// Store appends a session's messages to its transcript file. Appends are
// queued and written, in order, by the store's own goroutine, so an actor
// recording a message never waits for the disk; Close writes what is
// queued and stops that goroutine. It is safe for concurrent use.
//
// A write that fails (a full disk) loses nothing: the record and those
// after it stay queued, in order, and the writer tries again on the next
// append and every retryEvery, so the file catches up by itself once
// space returns. Notify hears when that starts and ends; Close reports
// what was still unwritten when it came.
//
// A store holds the transcript's lock (<path>.lock) from the start until
// Close, so no other process reopens a session while it is being written.
type Store struct {
	path string
	// lock is owned by the writer goroutine once it runs.
	lock *fileLock

	mu     sync.Mutex
	queue  []entry
	closed bool
	// err is a failure the store cannot come back from (the file could not
	// be made, a torn write could not be cut off, the writer panicked,
	// records were still unwritten at Close); later appends report it.
	err error
	// failing is the write failure the writer is retrying; nil while
	// every queued record goes out.
	failing error
	// notify, when set, hears each change between healthy and failing.
	notify func(error)
	wake   chan struct{}
	done   chan struct{}
}

// Create starts a new transcript at dir/<h.ID>.jsonl, creating dir, and
// fails at once when the file cannot be created or is locked.
func Create(dir string, h Header) (*Store, error) {
	path, line, err := prepare(dir, h)
	if err != nil {
		return nil, err
	}
	s := newStore(path)
	f, err := s.create(dir)
	if err != nil {
		return nil, err
	}
	go s.run(f, nil, line)
	return s, nil
}

// Open is Create without waiting for the disk: the file is created by the
// store's goroutine, and a failure surfaces on a later Append or Close.
// Creating a file costs about a millisecond on some disks; a fleet that
// starts 64 subagents should not spend that on its scheduler's mailbox.
func Open(dir string, h Header) (*Store, error) {
	path, line, err := prepare(dir, h)
	if err != nil {
		return nil, err
	}
	s := newStore(path)
	go s.run(nil, func() (*os.File, error) { return s.create(dir) }, line)
	return s, nil
}

// Reopen appends to the existing transcript at path, so a resumed session
// keeps one file. It fails with ErrBusy while another live process holds
// the transcript; a lock left by a dead process is taken over. A torn
// final record (see Load) is cut off first, so that the next record starts
// on a line of its own; any other damage is an error and the file is left
// as it is.
func Reopen(path string) (*Store, error) {
	lock, err := acquire(lockPath(path))
	if err != nil {
		return nil, err
	}
	f, err := reopen(path)
	if err != nil {
		return nil, errors.Join(err, lock.release())
	}
	s := newStore(path)
	s.lock = lock
	go s.run(f, nil, nil)
	return s, nil
}

// reopen opens path for appending after checking it and cutting off a
// torn tail.
func reopen(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("reopen transcript: %w", err)
	}
	_, _, res, err := read(f, path)
	if err == nil && res.torn != nil {
		// With O_APPEND the next write lands at the new end.
		if err = f.Truncate(res.valid); err != nil {
			err = fmt.Errorf("reopen transcript: cut torn tail: %w", err)
		}
	}
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return f, nil
}

func prepare(dir string, h Header) (path string, header []byte, err error) {
	if h.ID == "" {
		return "", nil, errors.New("create transcript: empty session id")
	}
	h.Version = FormatVersion
	line, err := encode(record{Type: "header", Header: &h})
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(dir, h.ID+".jsonl"), line, nil
}

// create makes dir and the new transcript file, taking its lock first so
// that no Reopen can get between the file appearing and its header.
func (s *Store) create(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create transcript dir: %w", err)
	}
	lock, err := acquire(lockPath(s.path))
	if err != nil {
		return nil, fmt.Errorf("create transcript: %w", err)
	}
	f, err := os.OpenFile(s.path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("create transcript: %w", err), lock.release())
	}
	s.lock = lock
	return f, nil
}

func newStore(path string) *Store {
	return &Store{path: path, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

func encode(r record) ([]byte, error) {
	line, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode transcript record: %w", err)
	}
	return append(line, '\n'), nil
}

// Path is the transcript file.
func (s *Store) Path() string { return s.path }

// Append queues m to be written as one complete line. An error means the
// store is closed or has failed for good (the transcript is then
// incomplete from that point); a write the store is retrying is no error
// here, since the record is kept (see Notify).
func (s *Store) Append(m provider.Message) error {
	line, err := encode(record{Type: "message", Message: &m})
	if err != nil {
		return err
	}
	return s.enqueue(line)
}

// AppendCompaction queues c, which rewrote the messages appended so far;
// Load replays it at this point of the file, so a resumed session gets the
// compacted list, while the original messages stay in the file for
// history search.
func (s *Store) AppendCompaction(c compact.Compaction) error {
	line, err := encode(record{Type: "compaction", Compaction: &c})
	if err != nil {
		return err
	}
	return s.enqueue(line)
}

func (s *Store) enqueue(line []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return errors.New("append transcript: store closed")
	case s.err != nil:
		return s.err
	}
	s.queue = append(s.queue, entry{line: line})
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// entry is one queued item: a line to write, or a barrier to call once
// every line before it is written.
type entry struct {
	line    []byte
	barrier func(error)
}

// Barrier calls done, from the store's goroutine, once every message
// appended before it is in the file (written, not synced: it survives the
// process being killed, not a power cut), or at once with the failure
// when one of them could not be written (it stays queued for a retry). An executor waits for it before running a step's tool
// calls, so a resumed transcript always shows calls that may have had
// effects. On a closed store done is called at once.
func (s *Store) Barrier(done func(error)) {
	s.mu.Lock()
	if s.closed {
		err := s.err
		s.mu.Unlock()
		if err == nil {
			err = errors.New("transcript barrier: store closed")
		}
		done(err)
		return
	}
	s.queue = append(s.queue, entry{barrier: done})
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// NewID returns a session ID that sorts by creation time and is unique
// enough for concurrent subagents: 20261130-073000-1a2b3c4d.
func NewID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// ProjectDir is where the transcripts of the project at cwd live:
// <home>/projects/<slug>/sessions, with the slug derived from the absolute
// project path so two checkouts never share a directory.
func ProjectDir(home, cwd string) string {
	return filepath.Join(home, "projects", Slug(cwd), "sessions")
}

// Slug turns an absolute path into one directory name.
func Slug(path string) string {
	path = filepath.Clean(path)
	var b strings.Builder
	for _, r := range path {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		return "root"
	}
	return s
}
