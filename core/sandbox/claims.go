package sandbox

import (
	"errors"
	"fmt"
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
// and must resolve outside the Reasonix home, under one of s's writable
// roots and outside every forbid_read entry and secret.
//
// In the narrowed sandbox WritePath allows only the claimed paths, and a
// jailed command sees the workspace read-only except the claimed paths
// that exist when it starts (bubblewrap can bind only those; Seatbelt
// needs no existing path). The scratch directories stay writable, and so
// do the allow_write roots outside the workspace, which the claims do not
// speak for. Everything else holds as in s: the home stays closed to file
// tools and read-only to commands, secrets hidden, the trust-bearing
// workspace paths read-only to commands, the PathRule asked. With
// bash = "off", Wrap refuses every command with an error wrapping
// ErrUnconfined.
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
		if s.inHome(abs, resolved) {
			return nil, fmt.Errorf("sandbox: write path %q resolves to %s, which is in the Reasonix home %s",
				p, resolved, s.home.given)
		}
		if !s.writableAt(resolved) {
			return nil, fmt.Errorf("sandbox: write path %q resolves to %s, which is outside the writable roots (%s)",
				p, resolved, strings.Join(s.writable, ", "))
		}
		if entry, ok := s.forbiddenBy(abs, resolved); ok {
			return nil, fmt.Errorf("sandbox: write path %q resolves to %s, which is under %s", p, resolved, forbiddenWhat(entry))
		}
		n.addWritable(resolved)
	}
	n.claims = slices.Clone(paths)
	n.scratch = slices.Clone(s.scratch)
	for _, a := range s.allow {
		// An allow_write root in the home stays read-only, as it is for s.
		if !within(s.root, a) && !s.inHome(a, a) {
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
