package sandbox

import (
	"fmt"
	"path/filepath"
)

// ReadOnly returns the sandbox of a process that may read the workspace
// and change nothing in it, such as an MCP server a project declared:
// jailed, it sees the workspace read-only (bound read-only again where it
// lies in a scratch directory) and writes only the scratch directories;
// it reaches the network only when network is set; file tools may write
// nothing. The home stays closed, secrets hidden, and the mode is s's.
func (s *Sandbox) ReadOnly(network bool) *Sandbox {
	n := *s
	n.writable, n.allow, n.claims = nil, nil, nil
	n.readonly = append(append([]string(nil), s.readonly...), s.root)
	n.network = network
	return &n
}

// Rooted returns the sandbox of a writer that works in a copy of the
// workspace at dir (a git worktree): dir takes the workspace root's place
// for file tools and jailed commands alike, so the task writes its copy and
// never the workspace itself, which it sees as read-only as anything else
// outside its root. The home stays closed, secrets hidden, the scratch
// directories writable, the mode as in s, and the PathRule asked about a
// path in the copy as about the workspace path it copies; allow_write
// roots outside the workspace stay writable, those inside it do not (they
// are the workspace's, not the copy's). Each forbid_read entry inside the
// workspace is forbidden in the copy too, at the same place. dir must
// exist and lie outside the home; it may lie inside the workspace (a
// worktree under .git), which is then read-only around it.
func (s *Sandbox) Rooted(dir string) (*Sandbox, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: root %s: %w", dir, err)
	}
	resolved, err := resolve(abs)
	if err == nil && !isDir(resolved) {
		err = fmt.Errorf("not a directory")
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: root %s: %w", dir, err)
	}
	if s.inHome(abs, resolved) {
		return nil, fmt.Errorf("sandbox: root %s lies in the Reasonix home %s", resolved, s.home.resolved)
	}
	n := *s
	n.root, n.writable, n.allow, n.claims = resolved, nil, nil, nil
	// The workspace usually lies in a scratch directory (/tmp) that
	// jailed commands may write: it is bound read-only over it again.
	n.readonly = append(append([]string(nil), s.readonly...), s.root)
	n.addWritable(resolved)
	for _, a := range s.allow {
		if !within(s.root, a) {
			n.addWritable(a)
			n.allow = append(n.allow, a)
		}
	}
	n.forbid = append([]forbidEntry(nil), s.forbid...)
	for _, f := range s.forbid {
		if f.secret || !within(s.root, f.resolved) {
			continue
		}
		rel, err := filepath.Rel(s.root, f.resolved)
		if err != nil {
			continue
		}
		at := filepath.Join(resolved, rel)
		n.forbid = append(n.forbid, forbidEntry{given: at, resolved: at})
	}
	if s.rule != nil {
		// The deny rules name the workspace's paths: a path in the copy is
		// asked about as the workspace path it copies too.
		old, rule := s.root, s.rule
		n.rule = func(op, p string) (string, bool) {
			if why, ok := rule(op, p); ok {
				return why, ok
			}
			if rel, err := filepath.Rel(resolved, p); err == nil && within(resolved, p) {
				return rule(op, filepath.Join(old, rel))
			}
			return "", false
		}
	}
	return &n, nil
}
