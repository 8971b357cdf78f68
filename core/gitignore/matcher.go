package gitignore

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// ignoreFile is the per-directory rules file name.
const ignoreFile = ".gitignore"

// Matcher answers whether paths under one root are ignored. The zero value
// is not usable; build one with New.
type Matcher struct {
	root string // absolute workspace root

	once sync.Once
	top  *Dir // state inside root itself, with every enclosing file loaded

	mu    sync.Mutex
	cache map[string]*Dir // directory states built for Ignored, by rel path
}

// New returns a Matcher for the tree at root. Nothing is read until the
// first query or walk.
func New(root string) *Matcher {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return &Matcher{root: filepath.Clean(root), cache: map[string]*Dir{}}
}

// Root is the absolute directory the Matcher answers for.
func (m *Matcher) Root() string { return m.root }

// frame is the rules of one ignore file linked to the rules in force around
// it. Lookups walk from the deepest frame outwards and the first matching
// pattern decides, which gives deeper files and later lines precedence.
type frame struct {
	parent *frame
	base   string // directory of the file relative to the repository top, "" or ending in "/"
	pats   []pattern
}

// Dir is the ignore state in force inside one directory: the rules of its
// own .gitignore and of every enclosing one. It is immutable.
type Dir struct {
	m    *Matcher
	rel  string // slash path relative to the root, "" for the root
	full string // slash path relative to the repository top, "" or ending in "/"
	f    *frame
}

// Rel is the directory's slash-separated path relative to the root, "" for
// the root itself.
func (d *Dir) Rel() string { return d.rel }

// rootDir loads, once, the rules that apply at the root: the root's own
// .gitignore and, when the root lies inside a git repository, the
// repository's .git/info/exclude and every .gitignore from the repository
// top down to the root.
func (m *Matcher) rootDir() *Dir {
	m.once.Do(func() {
		top, ok := findRepoTop(m.root)
		if !ok {
			top = m.root
		}
		var f *frame
		if data, err := os.ReadFile(filepath.Join(top, ".git", "info", "exclude")); err == nil {
			if pats := parseLines(data); len(pats) > 0 {
				f = &frame{pats: pats}
			}
		}
		full := ""
		f = loadFrame(f, top, full)
		if rel, err := filepath.Rel(top, m.root); err == nil && rel != "." {
			dir := top
			for _, el := range strings.Split(filepath.ToSlash(rel), "/") {
				dir = filepath.Join(dir, el)
				full += el + "/"
				f = loadFrame(f, dir, full)
			}
		}
		m.top = &Dir{m: m, full: full, f: f}
	})
	return m.top
}

// findRepoTop returns the nearest directory at or above dir holding a .git
// entry (a directory, or the file a worktree or submodule uses).
func findRepoTop(dir string) (string, bool) {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// loadFrame pushes the rules of dir's .gitignore, if it has any, onto f.
// An unreadable file counts as absent: ignoring too little is safer for a
// search than failing it.
func loadFrame(f *frame, dir, full string) *frame {
	data, err := os.ReadFile(filepath.Join(dir, ignoreFile))
	if err != nil {
		return f
	}
	pats := parseLines(data)
	if len(pats) == 0 {
		return f
	}
	return &frame{parent: f, base: full, pats: pats}
}

// Dir returns the ignore state inside the directory rel (slash-separated,
// relative to the root; "" or "." is the root), loading the .gitignore of
// every directory on the way. It does not ask whether rel itself is ignored,
// so a walk may start inside an ignored directory on purpose.
func (m *Matcher) Dir(rel string) *Dir {
	d := m.rootDir()
	for _, el := range splitRel(rel) {
		d = d.Child(el)
	}
	return d
}

// Child returns the ignore state inside the subdirectory name of d, reading
// its .gitignore.
func (d *Dir) Child(name string) *Dir {
	rel := name
	if d.rel != "" {
		rel = d.rel + "/" + name
	}
	full := d.full + name + "/"
	return &Dir{
		m:    d.m,
		rel:  rel,
		full: full,
		f:    loadFrame(d.f, filepath.Join(d.m.root, filepath.FromSlash(rel)), full),
	}
}

// Ignored reports whether the entry name directly inside d is ignored.
// Entries called .git always are.
func (d *Dir) Ignored(name string, isDir bool) bool {
	if name == ".git" {
		return true
	}
	if d.f == nil {
		return false
	}
	return d.f.ignored(d.full+name, name, isDir)
}

func (f *frame) ignored(full, name string, isDir bool) bool {
	for ; f != nil; f = f.parent {
		for i := len(f.pats) - 1; i >= 0; i-- {
			if f.pats[i].matches(f.base, full, name, isDir) {
				return !f.pats[i].negate
			}
		}
	}
	return false
}

// Ignored reports whether the path rel (slash-separated, relative to the
// root) is ignored, either by a pattern matching it or because a directory
// above it is: like git, a file inside an ignored directory cannot be
// re-included. isDir says whether rel names a directory, which patterns
// ending in "/" need to know.
func (m *Matcher) Ignored(rel string, isDir bool) bool {
	els := splitRel(rel)
	if len(els) == 0 {
		return false
	}
	d := m.rootDir()
	for i, el := range els[:len(els)-1] {
		if d.Ignored(el, true) {
			return true
		}
		d = m.cachedChild(d, strings.Join(els[:i+1], "/"), el)
	}
	return d.Ignored(els[len(els)-1], isDir)
}

// cachedChild is d.Child(name) remembered under rel, so repeated Ignored
// calls read each .gitignore once. Walks do not use the cache: they visit
// each directory once and would only make it grow.
func (m *Matcher) cachedChild(d *Dir, rel, name string) *Dir {
	m.mu.Lock()
	c, ok := m.cache[rel]
	m.mu.Unlock()
	if ok {
		return c
	}
	c = d.Child(name)
	m.mu.Lock()
	if prev, ok := m.cache[rel]; ok {
		c = prev
	} else {
		m.cache[rel] = c
	}
	m.mu.Unlock()
	return c
}

// splitRel breaks a slash path into its elements, dropping "", "." and a
// leading "./".
func splitRel(rel string) []string {
	rel = path.Clean(filepath.ToSlash(rel))
	if rel == "." || rel == "/" {
		return nil
	}
	return strings.Split(strings.Trim(rel, "/"), "/")
}

// Walk walks the tree below the directory or file rel (relative to the
// root; "" or "." is the root) like fs.WalkDir: fn sees rel itself first,
// then every entry that is not ignored, depth first with each directory's
// entries in lexical order. Paths given to fn are slash-separated and
// relative to the root ("." for the root). Ignored directories are not
// entered, symbolic links below rel are not followed, and rel itself is walked even
// when a rule ignores it. fn's fs.SkipDir and fs.SkipAll work as in
// fs.WalkDir; a directory that cannot be read is reported to fn with its
// error.
func (m *Matcher) Walk(rel string, fn fs.WalkDirFunc) error {
	els := splitRel(rel)
	rel = strings.Join(els, "/")
	name := rel
	if name == "" {
		name = "."
	}
	// The starting point is followed if it is a symbolic link, as the
	// root itself may be one (macOS puts temporary directories behind
	// /var -> /private/var).
	info, err := os.Stat(filepath.Join(m.root, filepath.FromSlash(rel)))
	if err != nil {
		err = fn(name, nil, err)
	} else {
		d := fs.FileInfoToDirEntry(info)
		if d.IsDir() {
			err = m.walkDir(m.Dir(rel), name, d, fn)
		} else {
			err = fn(name, d, nil)
		}
	}
	if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

func (m *Matcher) walkDir(dir *Dir, name string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(name, d, nil); err != nil {
		if errors.Is(err, fs.SkipDir) {
			return nil
		}
		return err
	}
	entries, err := os.ReadDir(filepath.Join(m.root, filepath.FromSlash(dir.rel)))
	if err != nil {
		if err = fn(name, d, err); err != nil {
			if errors.Is(err, fs.SkipDir) {
				return nil
			}
			return err
		}
	}
	for _, e := range entries {
		isDir := e.IsDir()
		if dir.Ignored(e.Name(), isDir) {
			continue
		}
		child := e.Name()
		if dir.rel != "" {
			child = dir.rel + "/" + child
		}
		if isDir {
			err = m.walkDir(dir.Child(e.Name()), child, e, fn)
		} else {
			err = fn(child, e, nil)
		}
		if err != nil {
			if errors.Is(err, fs.SkipDir) && !isDir {
				// SkipDir on a file skips the rest of its directory.
				return nil
			}
			return err
		}
	}
	return nil
}
