package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// The workspace entries that can change what Reasonix does there. They are
// spelled here rather than imported so that this package stays below the
// config and MCP packages; a test keeps them equal.
const (
	projectFile = "reasonix.toml"
	mcpJSONFile = ".mcp.json"
	projectDir  = ".reasonix"
)

// productDirs are the directories under .reasonix/ that the product writes
// itself while it works: covering them would untrust a workspace every time
// a memory is saved.
var productDirs = []string{projectDir + "/memory", projectDir + "/autoresearch"}

// The digest reads at most maxContentFiles files under .reasonix/, and at
// most maxContentBytes of them in all; files beyond either cap count by
// path, mode and size only. reasonix.toml and .mcp.json are always read
// whole, as loading them does. A .reasonix/ holding more than maxEntries
// entries is an error rather than a digest that stops looking.
const (
	maxContentFiles = 1000
	maxContentBytes = 16 << 20
	maxEntries      = 100000
)

// digestPrefix names the algorithm, so a later scheme cannot match a
// digest of this one by accident.
const digestPrefix = "sha256:"

// Covers reports whether rel, a slash- or OS-separated path relative to a
// workspace, is one of the trust-bearing files Digest covers (or a
// directory holding them): what the agent must not change unnoticed.
func Covers(rel string) bool {
	rel = path.Clean(filepath.ToSlash(rel))
	switch {
	case rel == projectFile, rel == mcpJSONFile, rel == projectDir:
		return true
	case !strings.HasPrefix(rel, projectDir+"/"):
		return false
	}
	for _, d := range productDirs {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return false
		}
	}
	return true
}

// Canonical returns the key a workspace is recorded under: its absolute
// path with every symlink resolved, so that two spellings of one directory
// share one decision and a link cannot borrow another directory's.
func Canonical(workspace string) (string, error) {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return "", fmt.Errorf("workspace %q: %w", workspace, err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("workspace %q: %w", workspace, err)
	}
	return filepath.Clean(resolved), nil
}

// Digest returns the digest of workspace's trust-bearing files: a SHA-256
// over their sorted slash-separated relative paths, types, permission
// bits, sizes and contents. Directories themselves are not covered, only
// what they hold, so creating an empty .reasonix/ changes nothing.
//
// A symlink counts as its link text and, when it names a regular file, as
// that file too (within the caps), since reasonix.toml and the files under
// .reasonix/ are read through links; a directory behind a link is never
// entered. Files under .reasonix/ beyond maxContentFiles files or
// maxContentBytes bytes count by path, mode and size alone, so an edit
// there that keeps a file's size is not noticed. A file that cannot be
// read is an error: a digest must not vouch for content it never saw.
func Digest(workspace string) (string, error) {
	root, err := Canonical(workspace)
	if err != nil {
		return "", err
	}
	var entries []entry
	for _, name := range []string{projectFile, mcpJSONFile} {
		info, err := os.Lstat(filepath.Join(root, name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return "", fmt.Errorf("digest %s: %w", name, err)
		}
		entries = append(entries, entry{rel: name, info: info, whole: true})
	}
	more, err := walkProjectDir(root, maxEntries)
	if err != nil {
		return "", err
	}
	entries = append(entries, more...)
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.rel, b.rel) })

	h := sha256.New()
	io.WriteString(h, "reasonix workspace digest v1\n")
	budget := contentBudget{files: maxContentFiles, bytes: maxContentBytes}
	for _, e := range entries {
		if err := e.write(h, root, &budget); err != nil {
			return "", err
		}
	}
	return digestPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

// entry is one non-directory file the digest covers. info is from Lstat;
// whole files are read regardless of the caps.
type entry struct {
	rel   string
	info  fs.FileInfo
	whole bool
}

// contentBudget is what the digest may still read under .reasonix/.
type contentBudget struct {
	files int
	bytes int64
}

// take reports whether a file of size bytes may still be read, and counts
// it when it may.
func (b *contentBudget) take(size int64) bool {
	if b.files <= 0 || size > b.bytes {
		return false
	}
	b.files--
	b.bytes -= size
	return true
}

// walkProjectDir lists the files under root/.reasonix, without entering
// links or the product's own directories, and fails past limit entries. A
// .reasonix that is itself a link is one entry.
func walkProjectDir(root string, limit int) ([]entry, error) {
	top := filepath.Join(root, projectDir)
	info, err := os.Lstat(top)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("digest %s: %w", projectDir, err)
	case !info.IsDir():
		return []entry{{rel: projectDir, info: info}}, nil
	}
	var out []entry
	count := 0
	err = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if count++; count > limit {
			return fmt.Errorf("more than %d entries", limit)
		}
		switch {
		case slices.Contains(productDirs, rel) && d.IsDir():
			return filepath.SkipDir
		case slices.Contains(productDirs, rel), d.IsDir():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, entry{rel: rel, info: info})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("digest %s: %w", projectDir, err)
	}
	return out, nil
}

// write adds one entry to h: its path and what Lstat says of it, then for a
// link its text and the file it names, then the content when it is read.
// Every variable field is quoted or fixed-format, so no two trees encode
// alike.
func (e entry) write(h hash.Hash, root string, budget *contentBudget) error {
	full := filepath.Join(root, filepath.FromSlash(e.rel))
	fmt.Fprintf(h, "%q %s\n", e.rel, describe(e.info))
	target := e.info
	if e.info.Mode()&fs.ModeSymlink != 0 {
		link, err := os.Readlink(full)
		if err != nil {
			return fmt.Errorf("digest %s: %w", e.rel, err)
		}
		fmt.Fprintf(h, "  link %q\n", link)
		t, err := os.Stat(full)
		if err != nil {
			// A dangling link is covered by its text.
			fmt.Fprintf(h, "  target none\n")
			return nil
		}
		fmt.Fprintf(h, "  target %s\n", describe(t))
		target = t
	}
	if !target.Mode().IsRegular() {
		return nil
	}
	if !e.whole && !budget.take(target.Size()) {
		fmt.Fprintf(h, "  content not read\n")
		return nil
	}
	sum, err := contentSum(full, target)
	if err != nil {
		return fmt.Errorf("digest %s: %w", e.rel, err)
	}
	fmt.Fprintf(h, "  content %s\n", sum)
	return nil
}

// describe renders a file's type, permission bits and size.
func describe(info fs.FileInfo) string {
	m := info.Mode()
	kind := "other"
	switch {
	case m.IsRegular():
		kind = "file"
	case m&fs.ModeSymlink != 0:
		kind = "link"
	case m.IsDir():
		kind = "dir"
	}
	size := info.Size()
	if !m.IsRegular() {
		// A link's or a device's size says nothing stable about it.
		size = 0
	}
	return fmt.Sprintf("%s %04o %d", kind, uint32(m.Perm()), size)
}

// contentSum hashes the file at p, which must still be the file want
// describes: one swapped in between the listing and the read is an error,
// not content attributed to the wrong entry.
func contentSum(p string, want fs.FileInfo) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	got, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !os.SameFile(got, want) {
		return "", errors.New("changed while it was read")
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
