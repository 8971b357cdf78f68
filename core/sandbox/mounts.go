package sandbox

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// mount is one mount over the read-only root of the bubblewrap jail.
type mount struct {
	path     string
	writable bool
	empty    bool // an empty read-only directory over a path that does not exist
}

// mounts plans the mounts over the read-only root, resolving every path
// again (one may have been created or replaced since New):
//
//   - Every existing writable root and scratch directory is bound
//     writable; in a Narrow sandbox the workspace root is bound read-only
//     over them again (it usually lies in /tmp or another scratch
//     directory) and the claims writable inside it. A claim beats the
//     workspace, which beats a scratch directory at the same path.
//   - The Reasonix home is bound read-only over whatever contains it. A
//     workspace root or allow_write root inside it is not bound writable
//     again (the home wins, as it does for file tools); a scratch
//     directory inside it is ($HOME/.cache when HOME is the Reasonix
//     home), since a cache decides nothing.
//   - The workspace's trust-bearing paths that exist are bound read-only
//     over everything planned at or inside them, except the
//     product-written directories in .reasonix, which keep the mode they
//     had. A missing .git/hooks under a writable .git is covered by an
//     empty read-only directory, so no hook can be created; bubblewrap
//     makes the directory on the host to mount it, which leaves an empty
//     hooks directory behind, as git init would. A missing reasonix.toml,
//     .mcp.json or .reasonix cannot be mounted over, and need not be: the
//     workspace-trust digest, taken when a session starts, notices a
//     created file.
//
// Ancestors come before descendants, a bind that would not change what
// its nearest bound ancestor allows is left out, and pins (see pinned)
// keep every read-only mount inside a writable one in place.
func (s *Sandbox) mounts() []mount {
	home := s.liveHome()
	inHome := func(p string) bool {
		return s.inHome(p, p) || slices.ContainsFunc(home, func(h string) bool { return within(h, p) })
	}
	plan := map[string]bool{} // path → writable
	set := func(paths []string, writable, homeToo bool) {
		for _, p := range dirs(paths, true) {
			if homeToo || !inHome(p) {
				plan[p] = writable
			}
		}
	}
	if s.claims == nil {
		set(s.writable, true, false)
		set(s.scratch, true, true)
	} else {
		set(s.scratch, true, true)
		set([]string{s.root}, false, true)
		set(s.liveClaims(), true, false)
	}
	set(s.readonly, false, true)
	for _, h := range home {
		plan[h] = false
	}

	base := maps.Clone(plan)
	open := s.liveProductWritten()
	var empty []string
	for _, rel := range trustBearing {
		p, err := resolve(filepath.Join(s.root, filepath.FromSlash(rel)))
		if err != nil {
			continue
		}
		for q := range plan {
			if q != p && within(p, q) && !slices.ContainsFunc(open, func(o string) bool { return within(o, q) }) {
				delete(plan, q)
			}
		}
		if _, err := os.Lstat(p); err == nil {
			plan[p] = false
		} else if rel == gitHooks && isDir(filepath.Dir(p)) && modeAt(plan, p) {
			empty = append(empty, p)
		}
	}
	for _, o := range open {
		if modeAt(base, o) {
			plan[o] = true
		}
	}

	paths := slices.AppendSeq(slices.Clone(empty), maps.Keys(plan))
	// A path sorts after every ancestor of it, so each path's ancestors
	// have been planned before it.
	slices.Sort(paths)
	var out []mount
	for _, p := range paths {
		if slices.Contains(empty, p) {
			out = append(out, mount{path: p, empty: true})
			continue
		}
		if plan[p] != inheritedAt(out, p) {
			out = append(out, mount{path: p, writable: plan[p]})
		}
	}
	return pinned(out)
}

// pinned adds, for every read-only mount inside a writable one, a bind of
// each directory between the two onto itself. A mount moves with its
// directory when a parent is renamed, so without the pins a command could
// rename the home's parent away and make a new home, holding a config of
// its choosing, where the old one was; a mount point cannot be renamed.
func pinned(out []mount) []mount {
	pins := map[string]bool{}
	for i, m := range out {
		if m.writable {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			a := out[j]
			if !within(a.path, m.path) {
				continue
			}
			if a.writable {
				for d := filepath.Dir(m.path); d != a.path && within(a.path, d); d = filepath.Dir(d) {
					pins[d] = true
				}
			}
			break
		}
	}
	for d := range pins {
		out = append(out, mount{path: d, writable: true})
	}
	slices.SortFunc(out, func(a, b mount) int { return strings.Compare(a.path, b.path) })
	return out
}

// inheritedAt reports whether p is writable under the mounts planned so
// far, which are sorted: the last one containing p is its nearest.
func inheritedAt(out []mount, p string) bool {
	for i := len(out) - 1; i >= 0; i-- {
		if within(out[i].path, p) {
			return out[i].writable
		}
	}
	return false
}

// modeAt reports whether p is writable under plan: the mode of the
// nearest planned path at or above it, read-only when there is none.
func modeAt(plan map[string]bool, p string) bool {
	best, writable := "", false
	for q, w := range plan {
		if within(q, p) && len(q) > len(best) {
			best, writable = q, w
		}
	}
	return writable
}

// liveHome resolves the Reasonix home again, in both its spellings, and
// returns those that exist, outermost first.
func (s *Sandbox) liveHome() []string {
	if s.home.given == "" {
		return nil
	}
	return outermost(dirs([]string{s.home.given, s.home.resolved}, true))
}

// liveProductWritten returns the product-written directories of .reasonix
// that exist now as real directories, resolved; one that is a symlink is
// left out, so it stays as read-only as the rest of .reasonix.
func (s *Sandbox) liveProductWritten() []string {
	var out []string
	for _, rel := range productWritten {
		if real, ok := realDir(filepath.Join(s.root, filepath.FromSlash(rel))); ok && isDir(real) {
			out = append(out, real)
		}
	}
	return out
}

// isDir reports whether p is a directory, following a final symlink.
func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
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
