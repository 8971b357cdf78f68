package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// seatbeltDevices are the device files any command writes to (its output
// discarded, its terminal) that the write denial would otherwise cover.
var seatbeltDevices = []string{
	`(literal "/dev/null")`,
	`(literal "/dev/zero")`,
	`(literal "/dev/dtracehelper")`,
	`(regex #"^/dev/tty")`,
	`(regex #"^/dev/fd/")`,
}

// SeatbeltProfile returns the macOS sandbox profile Wrap passes to
// sandbox-exec. It states the rules of the bubblewrap jail in Seatbelt's
// terms. Seatbelt applies the last rule that matches, so the profile
// allows everything, then denies every write, then allows writes under the
// roots, the scratch directories and a few devices (for a writer task's
// sandbox: denies writes in the workspace again and allows them under its
// claims), then denies writes in the Reasonix home (allowing them again in
// a scratch directory inside it) and in the workspace's trust-bearing paths
// that exist (allowing them again in the product-written directories of
// .reasonix where the workspace is writable), then denies removing or
// renaming every writable directory above a protected path (Seatbelt sees
// a rename as an unlink of its source; see pinned for why), then denies
// reads and writes of the forbid_read entries and secrets, and finally,
// unless network = true, denies the network except Unix sockets (file
// objects, which the file rules already govern, as on Linux). Paths are
// the resolved ones: Seatbelt matches real paths (/private/tmp, not /tmp).
func (s *Sandbox) SeatbeltProfile() string {
	var b strings.Builder
	b.WriteString("(version 1)\n")
	b.WriteString("(allow default)\n")
	b.WriteString("(deny file-write*)\n")
	allowed := s.writableDirs(false)
	if s.claims != nil {
		allowed = dirs(s.scratch, false)
	}
	sbplRule(&b, "allow file-write*", append(subpaths(allowed), seatbeltDevices...))
	if s.claims != nil {
		b.WriteString("(deny file-write* (subpath " + sbplString(s.root) + "))\n")
		sbplRule(&b, "allow file-write*", subpaths(s.writable))
	}
	if len(s.readonly) > 0 {
		// A Rooted sandbox's workspace, around the copy it writes.
		sbplRule(&b, "deny file-write*", subpaths(s.readonly))
		sbplRule(&b, "allow file-write*", subpaths(s.writable))
	}
	home := s.seatbeltHome()
	sbplRule(&b, "deny file-write*", subpaths(home))
	var homeScratch []string
	for _, d := range dirs(s.scratch, false) {
		if slices.ContainsFunc(home, func(h string) bool { return within(h, d) }) {
			homeScratch = append(homeScratch, d)
		}
	}
	sbplRule(&b, "allow file-write*", subpaths(homeScratch))
	// writable reports whether the rules so far let p be written.
	writable := func(p string) bool {
		in := func(w string) bool { return within(w, p) }
		switch {
		case slices.ContainsFunc(homeScratch, in):
			return true
		case slices.ContainsFunc(home, in):
			return false
		case s.claims != nil && within(s.root, p):
			return slices.ContainsFunc(s.writable, in)
		}
		return slices.ContainsFunc(allowed, in)
	}

	trust := s.seatbeltTrust()
	sbplRule(&b, "deny file-write*", subpaths(trust))
	var open []string
	for _, o := range s.liveProductWritten() {
		if writable(o) {
			open = append(open, o)
		}
	}
	sbplRule(&b, "allow file-write*", subpaths(open))

	var forbidden []string
	for _, f := range s.forbid {
		forbidden = append(forbidden, f.given, f.resolved)
		if r, err := resolve(f.given); err == nil {
			forbidden = append(forbidden, r)
		}
	}
	forbidden = outermost(forbidden)

	var pins []string
	for _, p := range slices.Concat(home, trust, forbidden) {
		for d := filepath.Dir(p); d != p; p, d = d, filepath.Dir(d) {
			if writable(d) {
				pins = append(pins, "(literal "+sbplString(d)+")")
			}
		}
	}
	slices.Sort(pins)
	sbplRule(&b, "deny file-write-unlink", slices.Compact(pins))
	sbplRule(&b, "deny file-read* file-write*", subpaths(forbidden))
	if !s.network {
		b.WriteString("(deny network*)\n")
		b.WriteString("(allow network-outbound (remote unix-socket))\n")
		b.WriteString("(allow network-bind (local unix-socket))\n")
	}
	return b.String()
}

// seatbeltHome returns the Reasonix home in every spelling Seatbelt may
// see (as given, as resolved by New, as it resolves now), outermost first.
func (s *Sandbox) seatbeltHome() []string {
	if s.home.given == "" {
		return nil
	}
	paths := []string{s.home.given, s.home.resolved}
	if r, err := resolve(s.home.given); err == nil {
		paths = append(paths, r)
	}
	return outermost(paths)
}

// seatbeltTrust returns the trust-bearing workspace paths the profile
// keeps read-only: those that exist, as the jail binds them, and
// .git/hooks under an existing .git directory, as the jail covers it
// with an empty directory. Each is given as written and as resolved.
func (s *Sandbox) seatbeltTrust() []string {
	var out []string
	for _, rel := range trustBearing {
		given := filepath.Join(s.root, filepath.FromSlash(rel))
		r, err := resolve(given)
		if err != nil {
			continue
		}
		_, lerr := os.Lstat(r)
		if lerr != nil && (rel != gitHooks || !isDir(filepath.Dir(r))) {
			continue
		}
		out = append(out, given, r)
	}
	return outermost(out)
}

// sbplRule writes one rule applying to filters, or nothing when there are
// none (an empty rule would apply to everything).
func sbplRule(b *strings.Builder, head string, filters []string) {
	if len(filters) == 0 {
		return
	}
	b.WriteString("(" + head)
	for _, f := range filters {
		b.WriteString("\n  " + f)
	}
	b.WriteString(")\n")
}

// subpaths renders each path as a subpath filter.
func subpaths(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, "(subpath "+sbplString(p)+")")
	}
	return out
}

// sbplString quotes s as a profile string literal.
func sbplString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
