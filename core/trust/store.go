package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"reasonix/core/atomicfile"
)

// File is the name of the trust store in the Reasonix home. Jailed
// commands must not see or change it: it decides what every later run
// honours.
const File = "trust.json"

// Path is the trust store of the Reasonix home.
func Path(home string) string { return filepath.Join(home, File) }

// State is what the store says of a workspace as its files are now.
type State string

// The states Check reports.
const (
	// Untrusted: no decision, or a decline made about other files.
	Untrusted State = "untrusted"
	// Trusted: trusted, and the files are those that were trusted.
	Trusted State = "trusted"
	// Changed: trusted once, but the files changed since; the trust no
	// longer holds until it is given again.
	Changed State = "changed"
	// Declined: the user said no about exactly these files, so a frontend
	// does not ask again until they change.
	Declined State = "declined"
)

// The decisions a record holds.
const (
	decisionTrusted  = "trusted"
	decisionDeclined = "declined"
)

// currentVersion is the store format this package reads and writes.
const currentVersion = 1

// Store holds the recorded decisions. Check answers from what Open read;
// Trust, Decline and Revoke read the file again, change one record and
// replace the file.
type Store struct {
	path string
	doc  document
}

type document struct {
	Version    int               `json:"version"`
	Workspaces map[string]record `json:"workspaces"`
}

type record struct {
	Decision string    `json:"decision"`
	Digest   string    `json:"digest"`
	At       time.Time `json:"at"`
}

// Open reads the trust store of home. A missing file is an empty store;
// a file that does not decode, or holds a version or record this package
// does not know, is an error naming it and the repair.
func Open(home string) (*Store, error) {
	s := &Store{path: Path(home)}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) load() error {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.doc = emptyDocument()
		return nil
	}
	if err != nil {
		return fmt.Errorf("read trust store: %w", err)
	}
	doc, err := decode(data)
	if err != nil {
		return fmt.Errorf("trust store %s is damaged (%w); fix it, or delete it to forget every workspace trust decision", s.path, err)
	}
	s.doc = doc
	return nil
}

func emptyDocument() document {
	return document{Version: currentVersion, Workspaces: map[string]record{}}
}

// decode parses and checks a store file. It is the only parser of outside
// input here, so everything it accepts is something Check can act on.
func decode(data []byte) (document, error) {
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		return document{}, err
	}
	if doc.Version != currentVersion {
		return document{}, fmt.Errorf("version %d, want %d", doc.Version, currentVersion)
	}
	if doc.Workspaces == nil {
		doc.Workspaces = map[string]record{}
	}
	for ws, r := range doc.Workspaces {
		if !filepath.IsAbs(ws) || filepath.Clean(ws) != ws {
			return document{}, fmt.Errorf("workspace %q is not a clean absolute path", ws)
		}
		if r.Decision != decisionTrusted && r.Decision != decisionDeclined {
			return document{}, fmt.Errorf("workspace %q: decision %q, want %q or %q", ws, r.Decision, decisionTrusted, decisionDeclined)
		}
		if !strings.HasPrefix(r.Digest, digestPrefix) || len(r.Digest) == len(digestPrefix) {
			return document{}, fmt.Errorf("workspace %q: digest %q is not a %s digest", ws, r.Digest, strings.TrimSuffix(digestPrefix, ":"))
		}
	}
	return doc, nil
}

// Check reports the state of workspace. Only a workspace with a record has
// its files digested, so an unknown one costs a path lookup. An error
// (a workspace or a file that cannot be read) is never Trusted.
func (s *Store) Check(workspace string) (State, error) {
	key, err := Canonical(workspace)
	if err != nil {
		return Untrusted, err
	}
	r, ok := s.doc.Workspaces[key]
	if !ok {
		return Untrusted, nil
	}
	digest, err := Digest(key)
	if err != nil {
		return Untrusted, err
	}
	switch {
	case r.Decision == decisionTrusted && r.Digest == digest:
		return Trusted, nil
	case r.Decision == decisionTrusted:
		return Changed, nil
	case r.Digest == digest:
		return Declined, nil
	}
	return Untrusted, nil
}

// Trust records that workspace, with its files as they are now, is
// trusted, and saves the store.
func (s *Store) Trust(workspace string) error {
	return s.decide(workspace, decisionTrusted)
}

// Decline records that the user declined to trust workspace with its
// files as they are now, and saves the store.
func (s *Store) Decline(workspace string) error {
	return s.decide(workspace, decisionDeclined)
}

func (s *Store) decide(workspace, decision string) error {
	key, err := Canonical(workspace)
	if err != nil {
		return err
	}
	digest, err := Digest(key)
	if err != nil {
		return err
	}
	return s.update(func(ws map[string]record) bool {
		ws[key] = record{Decision: decision, Digest: digest, At: time.Now().UTC().Truncate(time.Second)}
		return true
	})
}

// Revoke removes workspace's record, whichever decision it holds, and
// reports whether there was one. A workspace that no longer exists is
// found by its absolute path.
func (s *Store) Revoke(workspace string) (bool, error) {
	key, err := Canonical(workspace)
	if err != nil {
		abs, aerr := filepath.Abs(workspace)
		if aerr != nil {
			return false, err
		}
		key = filepath.Clean(abs)
	}
	found := false
	err = s.update(func(ws map[string]record) bool {
		_, found = ws[key]
		delete(ws, key)
		return found
	})
	return found, err
}

// update reads the file again, so a decision another process recorded
// meanwhile is kept, applies change and, when it reports a change,
// replaces the file atomically, so a reader never sees half of it.
func (s *Store) update(change func(map[string]record) bool) error {
	if err := s.load(); err != nil {
		return err
	}
	if !change(s.doc.Workspaces) {
		return nil
	}
	s.doc.Version = currentVersion
	if err := atomicfile.WriteJSON(s.path, s.doc, 0o600); err != nil {
		return fmt.Errorf("save trust store: %w", err)
	}
	return nil
}

// Keep runs write, an edit of a trust-bearing file that Reasonix makes
// itself on the user's word (an "always allow" answer saved to
// reasonix.toml), without costing the workspace the trust it had: when
// the workspace was trusted just before the edit, the new files are
// trusted again after it. It returns the state before the edit, so the
// caller can tell a user whose workspace is not trusted that the saved
// rule waits for `reasonix trust`. A write that fails leaves the store as
// it was.
func Keep(home, workspace string, write func() error) (State, error) {
	s, err := Open(home)
	if err != nil {
		return "", err
	}
	before, err := s.Check(workspace)
	if err != nil {
		return "", err
	}
	if err := write(); err != nil {
		return before, err
	}
	if before == Trusted {
		if err := s.Trust(workspace); err != nil {
			return before, fmt.Errorf("trust %s again after the edit: %w", workspace, err)
		}
	}
	return before, nil
}
