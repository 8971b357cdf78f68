package ref

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// DefaultCompleteLimit is how many entries Complete returns when its
// limit is zero or negative: about what a menu can show.
const DefaultCompleteLimit = 50

// Entry is one completion: the text to insert after the @ and whether it
// names a directory (to descend into rather than finish on).
type Entry struct {
	// Name is the path relative to the root (or absolute, as typed), with
	// a trailing "/" for a directory.
	Name string
	Dir  bool
}

// Complete lists the entries of one directory that complete partial, the
// text after an @: "src/ma" lists the entries of src/ whose names start
// with "ma", "" the root's. It reads that one directory only, never a
// tree, so each keystroke costs one bounded read. Directories come first,
// then files, each sorted by name; hidden entries appear only when the
// last segment typed starts with ".". A directory that does not exist
// yields no entries and no error: the user is still typing.
func Complete(root, partial string, limit int) ([]Entry, error) {
	if limit <= 0 {
		limit = DefaultCompleteLimit
	}
	prefix, base := "", partial
	if i := strings.LastIndexByte(partial, '/'); i >= 0 {
		prefix, base = partial[:i+1], partial[i+1:]
	}
	dir := prefix
	if !filepath.IsAbs(prefix) {
		clean := filepath.Clean(prefix)
		if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("complete %q: outside the workspace", partial)
		}
		if root == "" {
			root = "."
		}
		dir = filepath.Join(root, clean)
	}
	entries, err := readDir(dir, maxScan)
	if err != nil && len(entries) == 0 {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || isNotDir(dir) {
			return nil, nil
		}
		return nil, fmt.Errorf("complete %q: %w", partial, err)
	}
	hidden := strings.HasPrefix(base, ".")
	var dirs, files []Entry
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !hidden {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			// A link to a directory completes like one: descending it is
			// the user's choice, one level at a time.
			if info, err := os.Stat(filepath.Join(dir, name)); err == nil {
				isDir = info.IsDir()
			}
		}
		if isDir {
			dirs = append(dirs, Entry{Name: prefix + name + "/", Dir: true})
		} else {
			files = append(files, Entry{Name: prefix + name})
		}
	}
	// readDir sorted by name already; the two groups keep that order.
	out := slices.Concat(dirs, files)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// isNotDir reports whether path exists but is not a directory, as when
// the user typed "main.go/".
func isNotDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}
