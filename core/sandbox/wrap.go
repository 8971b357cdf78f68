package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Wrap returns the argv that runs argv in dir under the effective mode: the
// bubblewrap or sandbox-exec command line when enforcing, argv itself when
// off, and an error wrapping ErrUnavailable when enforce has no backend.
// A writer task's sandbox (see Narrow) refuses every command in mode off
// with an error wrapping ErrUnconfined.
// An empty dir means the workspace root. sandbox-exec does not change
// directory, so on macOS the caller starts the command in dir, as the bash
// tool does anyway.
//
// The bubblewrap jail is built to die with its caller's process group: the
// command runs in fresh PID, IPC, UTS and cgroup namespaces (and a fresh
// network namespace unless network = true) with no capabilities, and
// bubblewrap is told to die with its parent. --new-session puts the
// command in its own session, so it cannot push keystrokes into the
// caller's terminal, and therefore outside the caller's process group;
// killing that group still kills bubblewrap, whose death kills the PID
// namespace's first process and with it every process inside.
func (s *Sandbox) Wrap(dir string, argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	switch s.mode {
	case ModeOff:
		if s.claims != nil {
			return nil, fmt.Errorf("sandbox: %w: %s", ErrUnconfined, s.unconfinedReason())
		}
		return argv, nil
	case ModeUnavailable:
		return nil, fmt.Errorf("sandbox: %w: %s", ErrUnavailable, s.unavailableReason())
	}
	if dir == "" {
		dir = s.root
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: command directory: %w", err)
	}
	if s.goos == "darwin" {
		out := []string{s.backend, "-p", s.SeatbeltProfile(), "--"}
		return append(out, argv...), nil
	}
	return s.bwrapArgs(dir, argv), nil
}

// bwrapArgs builds the bubblewrap command line. Mount order matters:
// the read-only root comes first, then what mounts plans (writable
// directories; for a writer task the workspace read-only again with its
// claims writable inside it; the Reasonix home and the trust-bearing
// workspace paths read-only, with the pins that hold them in place), and
// the forbid_read entries and secrets last, so a forbidden path inside a
// writable root is still hidden.
// Dropping every capability matters when the caller is root: bubblewrap
// then keeps them by default, and with CAP_SYS_ADMIN the command could
// remount / read-write or unmount a hidden path.
func (s *Sandbox) bwrapArgs(dir string, argv []string) []string {
	out := []string{s.backend,
		"--die-with-parent",
		"--new-session",
		"--cap-drop", "ALL",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
	}
	if !s.network {
		out = append(out, "--unshare-net")
	}
	out = append(out, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
	for _, m := range s.mounts() {
		switch {
		case m.empty:
			out = append(out, "--tmpfs", m.path, "--remount-ro", m.path)
		case m.writable:
			out = append(out, "--bind", m.path, m.path)
		default:
			out = append(out, "--ro-bind", m.path, m.path)
		}
	}
	for _, h := range s.hidden() {
		if h.dir {
			out = append(out, "--tmpfs", h.path, "--remount-ro", h.path)
		} else {
			out = append(out, "--ro-bind", "/dev/null", h.path)
		}
	}
	out = append(out, "--chdir", dir, "--")
	return append(out, argv...)
}

// writableDirs returns the resolved writable roots and scratch directories
// a jailed command may write, in that order and without duplicates. With
// existing set, paths that do not exist now are left out (bubblewrap
// cannot bind them).
func (s *Sandbox) writableDirs(existing bool) []string {
	return dirs(append(slices.Clone(s.writable), s.scratch...), existing)
}

// outermost sorts paths and drops every path that lies within another, so
// nested directories are mounted once, by their ancestor.
func outermost(paths []string) []string {
	slices.Sort(paths)
	paths = slices.Compact(paths)
	var out []string
	for _, p := range paths {
		covered := false
		for _, q := range out {
			if within(q, p) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	return out
}

// hiddenPath is a forbid_read entry or secret as it exists now.
type hiddenPath struct {
	path string
	dir  bool
}

// hidden resolves the forbid_read entries and secrets again (one may have
// been created or replaced since New) and returns those that exist,
// outermost first, leaving out any inside an entry already hidden.
func (s *Sandbox) hidden() []hiddenPath {
	var paths []string
	for _, f := range s.forbid {
		for _, p := range []string{f.given, f.resolved} {
			if r, err := resolve(p); err == nil {
				paths = append(paths, r)
			}
		}
	}
	var out []hiddenPath
	for _, p := range outermost(paths) {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		out = append(out, hiddenPath{path: p, dir: fi.IsDir()})
	}
	return out
}

// Check starts a trivial command through Wrap and reports whether the
// backend works here, since an installed bubblewrap can still be unable to
// create namespaces (a container without user namespaces, say). The
// command runs in "/" so a workspace root that does not exist yet does not
// count against the backend. Check returns nil in mode off, and the
// refusal in mode unavailable.
func (s *Sandbox) Check(ctx context.Context) error {
	if s.mode == ModeOff {
		return nil
	}
	argv, err := s.Wrap(string(filepath.Separator), []string{"true"})
	if err != nil {
		return err
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			return fmt.Errorf("sandbox: %s cannot run a jailed command: %w", filepath.Base(argv[0]), err)
		}
		return fmt.Errorf("sandbox: %s cannot run a jailed command: %w: %s", filepath.Base(argv[0]), err, msg)
	}
	return nil
}
