package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrUnconfined is wrapped by the error Wrap returns for a writer task's
// command when bash is off: nothing could hold the command to the task's
// write_paths, so it is refused rather than run with the whole filesystem
// writable, where it could clobber a sibling writer's files.
var ErrUnconfined = errors.New("bash cannot be confined to this task's write_paths")

// Narrow returns the sandbox of a writer task that may modify only paths,
// its write_paths. Each path is relative to the workspace root or absolute,
// and must resolve under one of s's writable roots and outside every
// forbid_read entry.
//
// In the narrowed sandbox WritePath allows only the claimed paths, and a
// jailed command sees the workspace read-only except the claimed paths
// that exist when it starts (bubblewrap can bind only those; Seatbelt
// needs no existing path). The scratch directories stay writable, and so
// do the allow_write roots outside the workspace, which the claims do not
// speak for; the Reasonix home does not. With bash = "off", Wrap refuses
// every command with an error wrapping ErrUnconfined.
//
// An empty list, or one whose claims cover the workspace root, claims the
// whole workspace, the way the scheduler reads it: s itself is returned.
func (s *Sandbox) Narrow(paths []string) (*Sandbox, error) {
	if len(paths) == 0 {
		return s, nil
	}
	n := *s
	n.writable = nil
	for _, p := range paths {
		abs, resolved, err := s.lookup(p)
		if err != nil {
			return nil, fmt.Errorf("sandbox: write path: %w", err)
		}
		if within(resolved, s.root) {
			return s, nil
		}
		if !s.writableAt(resolved) {
			return nil, fmt.Errorf("sandbox: write path %q resolves to %s, which is outside the writable roots (%s)",
				p, resolved, strings.Join(s.writable, ", "))
		}
		if entry, ok := s.forbiddenBy(abs, resolved); ok {
			return nil, fmt.Errorf("sandbox: write path %q resolves to %s, which is under the [sandbox] forbid_read entry %s",
				p, resolved, entry)
		}
		n.addWritable(resolved)
	}
	n.claims = slices.Clone(paths)
	n.scratch = slices.Clone(s.scratch)
	for _, a := range s.allow {
		if !within(s.root, a) {
			n.scratch = append(n.scratch, a)
		}
	}
	n.allow = nil
	return &n, nil
}

// unconfinedReason explains, for the model, why a writer task's command
// was refused in mode off and what it can do instead.
func (s *Sandbox) unconfinedReason() string {
	why := `[sandbox] bash = "off" runs commands unconfined`
	if s.goos == "windows" {
		why = "Windows has no bash sandbox, so commands would run unconfined"
	}
	return why + ", with every file writable, so a subagent holding write_paths (" + strings.Join(s.claims, ", ") +
		") may not run them; change the claimed files with write_file, edit_file, multi_edit or move_file instead"
}

// mount is one bind over the read-only root of the bubblewrap jail.
type mount struct {
	path     string
	writable bool
}

// mounts plans the binds over the read-only root. Every existing writable
// root and scratch directory is bound writable; in a Narrow sandbox the
// workspace root is bound read-only over them again (it usually lies in
// /tmp or another scratch directory) and the claims writable inside it. A
// claim beats the workspace, which beats a scratch directory at the same
// path. Ancestors come before descendants, and a bind that would not
// change what its nearest bound ancestor allows is left out.
func (s *Sandbox) mounts() []mount {
	mode := map[string]bool{}
	set := func(paths []string, writable bool) {
		for _, p := range dirs(paths, true) {
			mode[p] = writable
		}
	}
	if s.claims == nil {
		set(append(slices.Clone(s.writable), s.scratch...), true)
	} else {
		set(s.scratch, true)
		set([]string{s.root}, false)
		set(s.liveClaims(), true)
	}
	paths := make([]string, 0, len(mode))
	for p := range mode {
		paths = append(paths, p)
	}
	// A path sorts after every ancestor of it, so each path's ancestors
	// have been planned before it.
	slices.Sort(paths)
	var out []mount
	for _, p := range paths {
		inherited := false
		for i := len(out) - 1; i >= 0; i-- {
			if within(out[i].path, p) {
				inherited = out[i].writable
				break
			}
		}
		if mode[p] != inherited {
			out = append(out, mount{path: p, writable: mode[p]})
		}
	}
	return out
}

// liveClaims returns the claims that still resolve to themselves: one whose
// path has since gained a symlink (swapped in by a process that could write
// its parent) would bind wherever that leads, so it is left read-only.
func (s *Sandbox) liveClaims() []string {
	var out []string
	for _, c := range s.writable {
		if r, err := resolve(c); err == nil && r == c {
			out = append(out, c)
		}
	}
	return out
}

// dirs resolves paths and drops duplicates, keeping their order. With
// existing set, paths that do not exist now are left out (bubblewrap
// cannot bind them).
func dirs(paths []string, existing bool) []string {
	var out []string
	for _, p := range paths {
		r, err := resolve(filepath.Clean(p))
		if err != nil || slices.Contains(out, r) {
			continue
		}
		if existing {
			if _, err := os.Stat(r); err != nil {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}
