package session

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

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

// record is one line of the file. Exactly one of Header and Message is set.
type record struct {
	Type    string            `json:"type"`
	Header  *Header           `json:"header,omitempty"`
	Message *provider.Message `json:"message,omitempty"`
}

// Store appends a session's messages to its transcript file. It is safe for
// concurrent use.
type Store struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// Create starts a new transcript at dir/<h.ID>.jsonl, creating dir.
func Create(dir string, h Header) (*Store, error) {
	if h.ID == "" {
		return nil, errors.New("create transcript: empty session id")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create transcript dir: %w", err)
	}
	h.Version = FormatVersion
	path := filepath.Join(dir, h.ID+".jsonl")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create transcript: %w", err)
	}
	s := &Store{f: f, path: path}
	if err := s.write(record{Type: "header", Header: &h}); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// Path is the transcript file.
func (s *Store) Path() string { return s.path }

// Append writes m as one complete line.
func (s *Store) Append(m provider.Message) error {
	return s.write(record{Type: "message", Message: &m})
}

func (s *Store) write(r record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode transcript record: %w", err)
	}
	line = append(line, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return errors.New("append transcript: store closed")
	}
	// One write per record: with O_APPEND a crash leaves either the whole
	// line or a torn tail that Load skips, never an interleaving.
	if _, err := s.f.Write(line); err != nil {
		return fmt.Errorf("append transcript: %w", err)
	}
	return nil
}

// Close flushes the file to disk and closes it. Closing twice is harmless.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	syncErr := s.f.Sync()
	closeErr := s.f.Close()
	s.f = nil
	if err := errors.Join(syncErr, closeErr); err != nil {
		return fmt.Errorf("close transcript: %w", err)
	}
	return nil
}

// Load reads a transcript. A final line without its newline (a write cut
// short by a crash) is ignored; any other malformed line is an error naming
// its line number.
func Load(path string) (Header, []provider.Message, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, fmt.Errorf("load transcript: %w", err)
	}
	defer f.Close()
	return read(f, path)
}

func read(r io.Reader, name string) (Header, []provider.Message, error) {
	var (
		h      Header
		msgs   []provider.Message
		sawHdr bool
	)
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			// A torn tail has no newline: it is the write a crash cut short.
			break
		}
		if err != nil {
			return h, msgs, fmt.Errorf("load transcript %s: %w", name, err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var rec record
		if err := json.Unmarshal(line, &rec); err != nil {
			return h, msgs, fmt.Errorf("load transcript %s line %d: %w", name, n, err)
		}
		switch rec.Type {
		case "header":
			if rec.Header == nil {
				return h, msgs, fmt.Errorf("load transcript %s line %d: header record without header", name, n)
			}
			h, sawHdr = *rec.Header, true
		case "message":
			if rec.Message == nil {
				return h, msgs, fmt.Errorf("load transcript %s line %d: message record without message", name, n)
			}
			msgs = append(msgs, *rec.Message)
		default:
			// Unknown record types come from newer versions; skipping
			// them keeps old binaries able to read what they understand.
		}
	}
	if !sawHdr {
		return h, msgs, fmt.Errorf("load transcript %s: no header", name)
	}
	return h, msgs, nil
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
