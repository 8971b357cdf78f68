package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// trustBearing are the workspace paths, relative to its root, whose content
// decides what later runs trust: the project config, its MCP servers, its
// commands and skills, and git's config and hooks, which run programs on
// the user's next commit or fetch. Jailed commands see them read-only;
// file tools may write them, but the session asks a person each time (see
// Protected).
var trustBearing = []string{"reasonix.toml", ".mcp.json", ".reasonix", ".git/config", ".git/hooks"}

// gitHooks is the trust-bearing path that is covered even when missing,
// since creating it is how a hook gets planted.
const gitHooks = ".git/hooks"

// gitDir is trust-bearing itself, though not what lies in it beyond its
// config and hooks: a .git made where there is none, as a directory moved
// into place or as a file naming another git directory, brings a config
// and hooks of its own.
const gitDir = ".git"

// productWritten are the directories inside .reasonix that the product
// itself keeps writing (project memory, autoresearch runs); they are not
// trust-bearing.
var productWritten = []string{".reasonix/memory", ".reasonix/autoresearch"}

// Protected resolves p like WritePath (relative to the workspace root,
// symlinks followed) and reports whether it is, or lies in, one of the
// workspace's trust-bearing paths: reasonix.toml, .mcp.json, .reasonix
// (except .reasonix/memory and .reasonix/autoresearch), .git/config,
// .git/hooks, and .git itself (not the rest of it). Both the absolute
// spelling and the resolved path are
// checked, each against both spellings of those paths, so a symlink into
// .git/hooks counts, and so does a path through a symlinked
// .reasonix/memory that lands elsewhere in .reasonix. WritePath does not
// refuse these paths; the caller asks a person before each such write. A
// path that cannot be resolved is reported protected, the cautious answer
// (WritePath refuses it anyway), with its cleaned spelling.
func (s *Sandbox) Protected(p string) (string, bool) {
	abs, resolved, err := s.lookup(p)
	if err != nil {
		if strings.TrimSpace(p) == "" {
			return "", true
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.root, p)
		}
		return filepath.Clean(p), true
	}
	return resolved, s.trustBearingAt(abs) || s.trustBearingAt(resolved)
}

// trustBearingAt reports whether the absolute path q lies in a
// trust-bearing path of the workspace, spelled as written or resolved now,
// and not in a product-written directory.
func (s *Sandbox) trustBearingAt(q string) bool {
	for _, x := range s.productWrittenSpellings() {
		if within(x, q) {
			return false
		}
	}
	for _, rel := range trustBearing {
		given := filepath.Join(s.root, filepath.FromSlash(rel))
		if within(given, q) {
			return true
		}
		if r, err := resolve(given); err == nil && within(r, q) {
			return true
		}
	}
	git := filepath.Join(s.root, gitDir)
	if samePath(git, q) {
		return true
	}
	r, err := resolve(git)
	return err == nil && samePath(r, q)
}

// samePath reports whether a and b name the same path, compared as within
// compares them.
func samePath(a, b string) bool { return within(a, b) && within(b, a) }

// productWrittenSpellings returns the product-written directories as
// written under the root and as they really are. A directory that is
// itself a symlink has no real spelling: what lies through it is judged by
// where it lands, which may be elsewhere in .reasonix.
func (s *Sandbox) productWrittenSpellings() []string {
	var out []string
	for _, rel := range productWritten {
		given := filepath.Join(s.root, filepath.FromSlash(rel))
		out = append(out, given)
		if real, ok := realDir(given); ok && real != given {
			out = append(out, real)
		}
	}
	return out
}

// realDir returns where the path p really is when its last component is
// not a symlink: its parent resolved, with that component appended. A
// path that does not exist is reported where it would be created.
func realDir(p string) (string, bool) {
	parent, err := resolve(filepath.Dir(p))
	if err != nil {
		return "", false
	}
	real := filepath.Join(parent, filepath.Base(p))
	fi, err := os.Lstat(real)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", false
	}
	return real, true
}
