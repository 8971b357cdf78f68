package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DeniedError is the refusal of a path by WritePath or ReadPath. Its text
// is written for the model: it names the path, where it resolves and what
// would have been allowed, so the next call can go somewhere permitted or
// the user can be asked to widen the settings.
type DeniedError struct {
	// Op is "write" or "read".
	Op string
	// Path is the path as the caller gave it.
	Path string
	// Resolved is the absolute, symlink-free path that was checked.
	Resolved string
	// Reason explains the refusal and what would be allowed.
	Reason string
}

// Error renders the refusal as one sentence the model can act on.
func (e *DeniedError) Error() string {
	return fmt.Sprintf("sandbox: %s of %q refused: %s", e.Op, e.Path, e.Reason)
}

// WritePath resolves p (relative to the workspace root, or absolute) to the
// absolute, symlink-free path a file tool may create or modify, following a
// symlink at the end too, so the answer names the file that would really
// change. move_file checks both its source and its destination with it,
// so moving a file out of, or into, a directory outside the roots is
// refused. The path must lie under a writable root (a claim, for a
// sandbox built by Narrow) and outside every
// forbid_read entry, and an existing regular file must have a single hard
// link (see the package documentation).
func (s *Sandbox) WritePath(p string) (string, error) {
	abs, resolved, err := s.lookup(p)
	if err != nil {
		return "", err
	}
	if !s.writableAt(resolved) && s.claims != nil {
		return "", &DeniedError{Op: "write", Path: p, Resolved: resolved, Reason: fmt.Sprintf(
			"it resolves to %s, which is outside this task's write_paths (%s); a task may only modify the paths it claimed",
			resolved, strings.Join(s.claims, ", "))}
	}
	if !s.writableAt(resolved) {
		return "", &DeniedError{Op: "write", Path: p, Resolved: resolved, Reason: fmt.Sprintf(
			"it resolves to %s, which is outside the writable roots (%s); write inside one of them, "+
				"or, if this location must be writable, the user can add it to [sandbox] allow_write in the user config",
			resolved, strings.Join(s.writable, ", "))}
	}
	if entry, ok := s.forbiddenBy(abs, resolved); ok {
		return "", &DeniedError{Op: "write", Path: p, Resolved: resolved, Reason: fmt.Sprintf(
			"it resolves to %s, which is under the [sandbox] forbid_read entry %s; the user keeps it private", resolved, entry)}
	}
	fi, err := os.Lstat(resolved)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return resolved, nil
	case err != nil:
		return "", fmt.Errorf("sandbox: check %s: %w", resolved, err)
	case !fi.Mode().IsRegular():
		return resolved, nil
	}
	n, err := linkCount(resolved, fi)
	if err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	if n > 1 {
		base := filepath.Base(resolved)
		return "", &DeniedError{Op: "write", Path: p, Resolved: resolved, Reason: fmt.Sprintf(
			"%s has %d hard links, so it may be the same file as one outside the writable roots (%s); "+
				"to change it, first replace it with a copy of its own, for example with bash: cp %s %s.tmp && mv %s.tmp %s",
			resolved, n, strings.Join(s.writable, ", "), base, base, base, base)}
	}
	return resolved, nil
}

// ReadPath resolves p like WritePath and returns the path a file tool may
// inspect. Anything outside the forbid_read entries may be read, inside
// the workspace or not; a path that resolves into an entry (through a
// symlink, say), or a file that is a hard link of a forbidden file, is
// refused.
func (s *Sandbox) ReadPath(p string) (string, error) {
	abs, resolved, err := s.lookup(p)
	if err != nil {
		return "", err
	}
	if entry, ok := s.forbiddenBy(abs, resolved); ok {
		return "", &DeniedError{Op: "read", Path: p, Resolved: resolved, Reason: fmt.Sprintf(
			"it resolves to %s, which is under the [sandbox] forbid_read entry %s; the user keeps it private, "+
				"so do not try to read it another way", resolved, entry)}
	}
	if entry, ok := s.forbiddenLink(resolved); ok {
		return "", &DeniedError{Op: "read", Path: p, Resolved: resolved, Reason: fmt.Sprintf(
			"%s is a hard link of %s, a [sandbox] forbid_read entry; the user keeps it private, "+
				"so do not try to read it another way", resolved, entry)}
	}
	return resolved, nil
}

// Forbidden reports whether ReadPath would refuse the absolute path abs
// because of a forbid_read entry, so tools that walk directories can leave
// a forbidden subtree out without descending into it. A path that cannot
// be resolved is judged by its spelling alone.
func (s *Sandbox) Forbidden(abs string) bool {
	if len(s.forbid) == 0 {
		return false
	}
	clean := filepath.Clean(abs)
	resolved, err := resolve(clean)
	if err != nil {
		_, ok := s.forbiddenBy(clean, clean)
		return ok
	}
	if _, ok := s.forbiddenBy(clean, resolved); ok {
		return true
	}
	_, ok := s.forbiddenLink(resolved)
	return ok
}

// lookup anchors p at the workspace root and resolves it, returning the
// absolute spelling (clean) and the resolved path.
func (s *Sandbox) lookup(p string) (abs, resolved string, err error) {
	if strings.TrimSpace(p) == "" {
		return "", "", errors.New("sandbox: path is empty")
	}
	raw := p
	if !filepath.IsAbs(raw) {
		// Joined without cleaning: "link/.." must climb from where the
		// link leads, which only resolve knows.
		raw = s.root + string(filepath.Separator) + p
	}
	resolved, err = resolve(raw)
	if err != nil {
		return "", "", fmt.Errorf("sandbox: resolve %q: %w", p, err)
	}
	return filepath.Clean(raw), resolved, nil
}

// writableAt reports whether the resolved path lies under a writable root.
func (s *Sandbox) writableAt(resolved string) bool {
	for _, w := range s.writable {
		if within(w, resolved) {
			return true
		}
	}
	return false
}

// forbiddenBy returns the forbid_read entry that covers a path, checking
// the resolved path against resolved entries and the spelled path against
// the entries as configured.
func (s *Sandbox) forbiddenBy(abs, resolved string) (string, bool) {
	for _, f := range s.forbid {
		if within(f.resolved, resolved) || within(f.given, abs) {
			return f.given, true
		}
	}
	return "", false
}

// forbiddenLink returns the forbid_read file entry that the regular file at
// resolved is another hard link of. Only a file with several links can be
// one, which keeps the common case to a single Lstat; files inside a
// forbidden directory are not searched.
func (s *Sandbox) forbiddenLink(resolved string) (string, bool) {
	if len(s.forbid) == 0 {
		return "", false
	}
	fi, err := os.Lstat(resolved)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	if n, err := linkCount(resolved, fi); err != nil || n < 2 {
		return "", false
	}
	for _, f := range s.forbid {
		ffi, err := os.Stat(f.resolved)
		if err == nil && ffi.Mode().IsRegular() && os.SameFile(fi, ffi) {
			return f.given, true
		}
	}
	return "", false
}
