package ref

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// noise are names a listing skips at any depth: version-control state,
// dependency and cache trees, editor and OS litter. They are large and
// generated, and the model learns nothing about the project from them; a
// reference that names one directly is still listed.
var noise = map[string]bool{
	".git": true, ".hg": true, ".svn": true, ".jj": true,
	"node_modules": true, "__pycache__": true, ".venv": true,
	".mypy_cache": true, ".pytest_cache": true, ".ruff_cache": true, ".tox": true,
	".gradle": true, ".idea": true, ".next": true, ".DS_Store": true,
}

// maxScan bounds how many entries of one directory are read, so a
// directory of a million files costs a bounded read; what is listed is
// then a sorted sample, marked as such.
const maxScan = 10000

// dir lists the tree under full depth-first, one entry per line relative
// to the directory named, "/" after directories.
func (x *expander) dir(p, full string) {
	if x.budget <= 0 {
		x.add(p, fmt.Sprintf(`<dir path="%s" omitted="true"/>`, escapeAttr(p)))
		x.notice("@%s left out: the references of this message reached %d bytes", p, x.o.MaxTotalBytes)
		return
	}
	l := lister{x: x, max: x.o.MaxDirEntries}
	l.walk(full, "")
	var b strings.Builder
	fmt.Fprintf(&b, "<dir path=\"%s\">\n", escapeAttr(p))
	for _, line := range l.lines {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	if l.truncated {
		fmt.Fprintf(&b, "[truncated: listing stopped at %d entries]\n", len(l.lines))
	}
	if l.sampled {
		fmt.Fprintf(&b, "[some directories hold more than %d entries; only the first %d read are listed]\n", maxScan, maxScan)
	}
	b.WriteString("</dir>")
	if l.err != nil {
		x.notice("some of @%s could not be listed: %v", p, l.err)
	}
	x.budget -= l.bytes
	x.add(p, b.String())
}

// lister is one directory listing in progress.
type lister struct {
	x         *expander
	max       int
	lines     []string
	bytes     int64
	truncated bool
	sampled   bool
	// err is the first directory that could not be read; the rest of the
	// listing goes on.
	err error
}

// full reports whether the listing must stop, marking it cut.
func (l *lister) full(line string) bool {
	if len(l.lines) >= l.max || l.bytes+int64(len(line))+1 > l.x.budget {
		l.truncated = true
		return true
	}
	return false
}

func (l *lister) walk(dir, rel string) {
	if l.truncated || l.x.ctx.Err() != nil {
		return
	}
	entries, err := readDir(dir, maxScan)
	if err != nil && l.err == nil {
		l.err = err
	}
	if len(entries) == maxScan {
		l.sampled = true
	}
	for _, e := range entries {
		if l.truncated || l.x.ctx.Err() != nil {
			return
		}
		name := e.Name()
		if noise[name] {
			continue
		}
		line := rel + name
		isDir := e.IsDir()
		switch {
		case e.Type()&os.ModeSymlink != 0:
			// Named, never followed: the listing stays in its tree and a
			// link cycle cannot loop it.
			if target, err := os.Readlink(filepath.Join(dir, name)); err == nil {
				line += " -> " + target
			}
		case isDir:
			line += "/"
		}
		if l.full(line) {
			return
		}
		l.lines = append(l.lines, line)
		l.bytes += int64(len(line)) + 1
		if isDir {
			l.walk(filepath.Join(dir, name), line)
		}
	}
}

// readDir reads at most n entries of dir, sorted by name. Unlike
// os.ReadDir it stops at n, so a huge directory costs a bounded read.
func readDir(dir string, n int) ([]os.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	defer f.Close()
	entries, err := f.ReadDir(n)
	if err == io.EOF {
		err = nil
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if err != nil {
		return entries, fmt.Errorf("read %s: %w", dir, err)
	}
	return entries, nil
}
