package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// maxSymlinks bounds how many symlinks one resolution follows, as the
// kernel's ELOOP limit does, so a cycle ends in an error.
const maxSymlinks = 255

// errClimbMissing refuses a ".." below a component that does not exist: the
// kernel would fail such a path, and guessing where it leads is how a
// lexical check gets tunnelled.
var errClimbMissing = errors.New(`".." follows a directory that does not exist`)

// Resolve returns the absolute path abs as the kernel would resolve it,
// the way every check in this package sees a path: symlinks followed,
// ".." taken after the symlink before it, and components that do not
// exist yet appended as written (a ".." among them is an error). Rules
// that must match real paths, such as the permission policy's, use it.
func Resolve(abs string) (string, error) { return resolve(abs) }

// resolve turns the absolute path p into an absolute, symlink-free, clean
// path, walking it one component at a time as the kernel does: a symlink is
// replaced by its target (relative targets are taken from the link's
// directory) and ".." climbs from the directory reached so far, not from
// the text. Once a component does not exist, the remaining ones are
// appended as written; a ".." among them is an error. A dangling symlink is
// followed like any other, so the result names the file a writer would
// create.
func resolve(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not absolute", p)
	}
	vol := filepath.VolumeName(p)
	cur := vol + string(filepath.Separator)
	queue := splitPath(p[len(vol):])
	links := 0
	missing := false
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		switch {
		case c == ".":
			continue
		case c == ".." && missing:
			return "", errClimbMissing
		case c == "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if missing {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = true
			cur = next
			continue
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			cur = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", fmt.Errorf("resolve %s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if v := filepath.VolumeName(target); v != "" || filepath.IsAbs(target) || (target != "" && os.IsPathSeparator(target[0])) {
			if v != "" {
				vol = v
			}
			cur = vol + string(filepath.Separator)
			target = target[len(v):]
		}
		queue = append(splitPath(target), queue...)
	}
	return cur, nil
}

// splitPath splits p into its components, dropping empty ones.
func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) })
}

// within reports whether p is root or lies below it, comparing whole path
// components: /work/root2 is not within /work/root. Both must be clean and
// absolute. Windows paths compare without regard to case, as its
// filesystems usually do.
func within(root, p string) bool {
	if runtime.GOOS == "windows" {
		root, p = strings.ToLower(root), strings.ToLower(p)
	}
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}
