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
	"reasonix/core/panics"
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
// A store holds the transcript's lock (<path>.lock) from the start until
// Close, so no other process reopens a session while it is being written.
type Store struct {
	path string
	// lock is owned by the writer goroutine once it runs.
	lock *fileLock

	mu     sync.Mutex
	queue  []entry
	closed bool
	// err is the first write failure; later appends report it.
	err  error
	wake chan struct{}
	done chan struct{}
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
// store is closed or an earlier write failed (the transcript is then
// incomplete from that point).
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
// process being killed, not a power cut), with the store's error if a
// write failed. An executor waits for it before running a step's tool
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

// testHookWrite, when set by a test, is called with each line just before
// the writer goroutine writes it, so a test can make the writer fail.
var testHookWrite func(line []byte)

// run owns the file: it creates it when open is set, writes the header
// (when there is one: a reopened file has it already) and then every
// queued line, and on Close syncs and closes it and releases the lock. A
// panic stops the writer like a write failure does: the file is closed and
// the panic becomes the store's error, recorded before done is closed so
// that Close returns it.
func (s *Store) run(f *os.File, open func() (*os.File, error), header []byte) {
	defer close(s.done)
	fail := func(err error) {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
	// Registered before the panic handler, so it runs after it: the file
	// is closed before the lock is let go.
	defer func() {
		if s.lock != nil {
			if err := s.lock.release(); err != nil {
				fail(fmt.Errorf("unlock transcript: %w", err))
			}
		}
	}()
	defer panics.Recover(func(err error) {
		fail(fmt.Errorf("write transcript: %w", err))
		if f != nil {
			f.Close()
		}
	})
	if open != nil {
		var err error
		if f, err = open(); err != nil {
			fail(err)
		}
	}
	var pending []entry
	if header != nil {
		pending = append(pending, entry{line: header})
	}
	// Barriers still waiting when the writer stops (a panic) are answered
	// with the store's error, so nobody waits on a dead writer.
	defer func() {
		s.mu.Lock()
		rest, err := append(pending, s.queue...), s.err
		s.queue = nil
		s.mu.Unlock()
		if err == nil {
			err = errors.New("transcript writer stopped")
		}
		for _, e := range rest {
			if e.barrier != nil {
				e.barrier(err)
			}
		}
	}()
	for {
		for len(pending) > 0 {
			e := pending[0]
			pending = pending[1:]
			if e.barrier != nil {
				s.mu.Lock()
				err := s.err
				s.mu.Unlock()
				e.barrier(err)
				continue
			}
			if f == nil {
				continue
			}
			if testHookWrite != nil {
				testHookWrite(e.line)
			}
			// One write per record: with O_APPEND a crash leaves either
			// the whole line or a torn tail that Load skips.
			if _, err := f.Write(e.line); err != nil {
				fail(fmt.Errorf("append transcript: %w", err))
				f.Close()
				f = nil
			}
		}
		s.mu.Lock()
		pending, s.queue = s.queue, nil
		closed := s.closed
		s.mu.Unlock()
		if len(pending) > 0 {
			continue
		}
		if closed {
			break
		}
		<-s.wake
	}
	if f != nil {
		syncErr := f.Sync()
		if err := errors.Join(syncErr, f.Close()); err != nil {
			fail(fmt.Errorf("close transcript: %w", err))
		}
	}
}

// Close writes everything queued, syncs the file and closes it, returning
// the first failure of the store's life. Closing twice is harmless.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
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
