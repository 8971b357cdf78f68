package sandbox

import (
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
// sandbox-exec. Seatbelt applies the last rule that matches, so the
// profile allows everything, then denies every write, then allows writes
// under the roots, the scratch directories and a few devices (for a writer
// task's sandbox: denies writes in the workspace again and allows them
// under its claims), then denies reads and writes of the forbid_read
// entries, and finally, unless network
// = true, denies the network except Unix sockets (file objects, which the
// file rules already govern, as on Linux). Paths are the resolved ones:
// Seatbelt matches real paths (/private/tmp, not /tmp).
func (s *Sandbox) SeatbeltProfile() string {
	var b strings.Builder
	b.WriteString("(version 1)\n")
	b.WriteString("(allow default)\n")
	b.WriteString("(deny file-write*)\n")
	b.WriteString("(allow file-write*")
	allowed := s.writableDirs(false)
	if s.claims != nil {
		allowed = dirs(s.scratch, false)
	}
	for _, w := range allowed {
		b.WriteString("\n  (subpath " + sbplString(w) + ")")
	}
	for _, d := range seatbeltDevices {
		b.WriteString("\n  " + d)
	}
	b.WriteString(")\n")
	if s.claims != nil {
		b.WriteString("(deny file-write* (subpath " + sbplString(s.root) + "))\n")
		b.WriteString("(allow file-write*")
		for _, c := range s.writable {
			b.WriteString("\n  (subpath " + sbplString(c) + ")")
		}
		b.WriteString(")\n")
	}
	var forbidden []string
	for _, f := range s.forbid {
		forbidden = append(forbidden, f.given, f.resolved)
		if r, err := resolve(f.given); err == nil {
			forbidden = append(forbidden, r)
		}
	}
	if forbidden = outermost(forbidden); len(forbidden) > 0 {
		b.WriteString("(deny file-read* file-write*")
		for _, f := range forbidden {
			b.WriteString("\n  (subpath " + sbplString(f) + ")")
		}
		b.WriteString(")\n")
	}
	if !s.network {
		b.WriteString("(deny network*)\n")
		b.WriteString("(allow network-outbound (remote unix-socket))\n")
		b.WriteString("(allow network-bind (local unix-socket))\n")
	}
	return b.String()
}

// sbplString quotes s as a profile string literal.
func sbplString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
