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
// refused. The path must lie outside the Reasonix home (by its resolved
// path and by its spelling), under a writable root (a claim, for a sandbox
// built by Narrow), outside every forbid_read entry and secret, and not be
// denied by the PathRule; an existing regular file must have a single hard
// link (see the package documentation). The workspace's trust-bearing
// files are not refused here: see Protected.
func (s *Sandbox) WritePath(p string) (string, error) {
	abs, resolved, err := s.lookup(p)
	if err != nil {
		return "", err
	}
	if d := s.homeDenial("write", p, abs, resolved); d != nil {
		return "", d
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
		return "", &DeniedError{Op: "write", Path: p, Resolved: resolved, Reason: forbiddenReason(resolved, entry, "")}
	}
	if d := s.ruleDenial("write", p, abs, resolved); d != nil {
		return "", d
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
// inspect. Anything may be read, inside the workspace or not, except the
// Reasonix home, the forbid_read entries and secrets, and what the
// PathRule denies; a path that resolves into one of them (through a
// symlink, say), or a file that is a hard link of a forbidden file, is
// refused.
func (s *Sandbox) ReadPath(p string) (string, error) {
	abs, resolved, err := s.lookup(p)
	if err != nil {
		return "", err
	}
	if d := s.readDenial(p, abs, resolved); d != nil {
		return "", d
	}
	return resolved, nil
}

// Forbidden reports whether ReadPath would refuse the absolute path abs
// (the home, a forbid_read entry or secret, a PathRule denial), so tools
// that walk directories can leave a refused subtree out without
// descending into it. A path that cannot be resolved is judged by its
// spelling alone.
func (s *Sandbox) Forbidden(abs string) bool {
	if len(s.forbid) == 0 && s.home.given == "" && s.rule == nil {
		return false
	}
	clean := filepath.Clean(abs)
	resolved, err := resolve(clean)
	if err != nil {
		resolved = clean
	}
	return s.readDenial(clean, clean, resolved) != nil
}

// readDenial is the refusal ReadPath makes of a path spelled abs that
// resolves to resolved, or nil.
func (s *Sandbox) readDenial(p, abs, resolved string) *DeniedError {
	if d := s.homeDenial("read", p, abs, resolved); d != nil {
		return d
	}
	const dont = "so do not try to read it another way"
	if entry, ok := s.forbiddenBy(abs, resolved); ok {
		return &DeniedError{Op: "read", Path: p, Resolved: resolved, Reason: forbiddenReason(resolved, entry, dont)}
	}
	if entry, ok := s.forbiddenLink(resolved); ok {
		return &DeniedError{Op: "read", Path: p, Resolved: resolved, Reason: fmt.Sprintf(
			"%s is a hard link of %s, %s", resolved, forbiddenWhat(entry), dont)}
	}
	return s.ruleDenial("read", p, abs, resolved)
}

// forbiddenReason explains a refusal by a forbid_read entry or a secret;
// tail, when set, ends it.
func forbiddenReason(resolved string, entry forbidEntry, tail string) string {
	r := fmt.Sprintf("it resolves to %s, which is under %s", resolved, forbiddenWhat(entry))
	if tail != "" {
		r += ", " + tail
	}
	return r
}

// forbiddenWhat names an entry and why it is out of reach.
func forbiddenWhat(entry forbidEntry) string {
	if entry.secret {
		return entry.given + ", which holds Reasonix credentials; they never reach the agent"
	}
	return "the [sandbox] forbid_read entry " + entry.given + "; the user keeps it private"
}

// homeDenial refuses a path in the Reasonix home, by where it resolves or
// by how it is spelled: the home holds the settings that confine the agent
// and the user's credentials, so no file tool may read or write it. The
// memory tools keep their part of it without going through the guard.
func (s *Sandbox) homeDenial(op, p, abs, resolved string) *DeniedError {
	if !s.inHome(abs, resolved) {
		return nil
	}
	return &DeniedError{Op: op, Path: p, Resolved: resolved, Reason: fmt.Sprintf(
		"it resolves to %s, which is in the Reasonix home %s; the home belongs to the user "+
			"(configuration, credentials, sessions) and is off limits to file tools, so do not try to reach it another way; "+
			"to keep a memory, use the remember tool", resolved, s.home.given)}
}

// inHome reports whether a path spelled abs that resolves to resolved lies
// in the Reasonix home.
func (s *Sandbox) inHome(abs, resolved string) bool {
	if s.home.given == "" {
		return false
	}
	return within(s.home.resolved, resolved) || within(s.home.given, abs)
}

// ruleDenial asks the PathRule about the resolved path and the absolute
// spelling and returns the refusal the first denial makes, or nil.
func (s *Sandbox) ruleDenial(op, p, abs, resolved string) *DeniedError {
	if s.rule == nil {
		return nil
	}
	for i, q := range []string{resolved, abs} {
		if i > 0 && q == resolved {
			break // one spelling, asked already
		}
		reason, denied := s.askRule(op, q)
		if !denied {
			continue
		}
		reason = strings.TrimRight(strings.TrimSpace(reason), ".;")
		if reason == "" {
			reason = "a permission rule denies it"
		}
		return &DeniedError{Op: op, Path: p, Resolved: resolved, Reason: fmt.Sprintf(
			"it resolves to %s: %s; the user's rules keep it out of reach, so do not try to reach it another way", resolved, reason)}
	}
	return nil
}

// askRule calls the PathRule, turning a panic in it into a denial: a check
// that cannot answer answers no.
func (s *Sandbox) askRule(op, q string) (reason string, denied bool) {
	defer func() {
		if r := recover(); r != nil {
			reason, denied = fmt.Sprintf("the permission check failed (%v)", r), true
		}
	}()
	return s.rule(op, q)
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

// forbiddenBy returns the forbid_read entry or secret that covers a path,
// checking the resolved path against resolved entries and the spelled path
// against the entries as configured.
func (s *Sandbox) forbiddenBy(abs, resolved string) (forbidEntry, bool) {
	for _, f := range s.forbid {
		if within(f.resolved, resolved) || within(f.given, abs) {
			return f, true
		}
	}
	return forbidEntry{}, false
}

// forbiddenLink returns the forbid_read or secret file entry that the
// regular file at resolved is another hard link of. Only a file with
// several links can be one, which keeps the common case to a single Lstat;
// files inside a forbidden directory are not searched.
func (s *Sandbox) forbiddenLink(resolved string) (forbidEntry, bool) {
	if len(s.forbid) == 0 {
		return forbidEntry{}, false
	}
	fi, err := os.Lstat(resolved)
	if err != nil || !fi.Mode().IsRegular() {
		return forbidEntry{}, false
	}
	if n, err := linkCount(resolved, fi); err != nil || n < 2 {
		return forbidEntry{}, false
	}
	for _, f := range s.forbid {
		ffi, err := os.Stat(f.resolved)
		if err == nil && ffi.Mode().IsRegular() && os.SameFile(fi, ffi) {
			return f, true
		}
	}
	return forbidEntry{}, false
}
