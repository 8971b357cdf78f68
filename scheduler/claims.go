package scheduler

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// wholeWorkspace is the normalised claim that covers every path under the
// root. A writer without write paths holds it.
const wholeWorkspace = "."

// normalizeClaims turns the write paths of a writer into a sorted set of
// slash-separated paths relative to root, with no claim inside another.
// An empty list yields the whole workspace.
func normalizeClaims(root string, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return []string{wholeWorkspace}, nil
	}
	claims := make([]string, 0, len(paths))
	whole := false
	for _, p := range paths {
		c, err := normalizeClaim(root, p)
		if err != nil {
			return nil, err
		}
		whole = whole || c == wholeWorkspace
		claims = append(claims, c)
	}
	// Every path is checked before the whole workspace absorbs the rest, so
	// a bad path is refused wherever it appears in the list.
	if whole {
		return []string{wholeWorkspace}, nil
	}
	// A path sorts before every path it is a prefix of, so after sorting a
	// claim's containers, if any, have already been kept.
	slices.Sort(claims)
	kept := claims[:0]
	for _, c := range claims {
		if !slices.ContainsFunc(kept, func(k string) bool { return contains(k, c) }) {
			kept = append(kept, c)
		}
	}
	return slices.Clip(kept), nil
}

// normalizeClaim maps one write path to its root-relative, slash-separated
// form, rejecting paths that leave the workspace.
func normalizeClaim(root, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path: %w", ErrBadClaim)
	}
	var rel string
	switch {
	case root != "":
		abs := p
		if !filepath.IsAbs(p) {
			abs = filepath.Join(root, p)
		}
		r, err := filepath.Rel(root, abs)
		if err != nil {
			return "", fmt.Errorf("path %q: %w: %w", p, ErrBadClaim, err)
		}
		rel = r
	case filepath.IsAbs(p):
		return "", fmt.Errorf("path %q is absolute but no workspace root is set: %w", p, ErrBadClaim)
	default:
		rel = filepath.Clean(p)
	}
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q escapes the workspace root: %w", p, ErrBadClaim)
	}
	return filepath.ToSlash(rel), nil
}

// contains reports whether claim a covers claim b: the same path, or b lies
// under a on a path-component boundary.
func contains(a, b string) bool {
	if a == wholeWorkspace || a == b {
		return true
	}
	return len(b) > len(a) && b[len(a)] == '/' && b[:len(a)] == a
}

// overlaps reports whether two writers holding claims x and y would touch a
// common path.
func overlaps(x, y []string) bool {
	for _, a := range x {
		for _, b := range y {
			if contains(a, b) || contains(b, a) {
				return true
			}
		}
	}
	return false
}
