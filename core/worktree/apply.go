package worktree

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"reasonix/core/atomicfile"
)

// verdict is whether a path of the working tree may be changed now.
type verdict int

const (
	ready   verdict = iota // it holds what ours recorded, under real directories
	stale                  // the parent changed it since ours was taken
	blocked                // something ours cannot account for is in the way
)

// verdict judges c's path as the working tree holds it now. deleting is
// the paths this round removes: a file among them may stand where a
// directory is to be made.
func (r *Repo) verdict(c change, deleting map[string]bool) (verdict, error) {
	parts := strings.Split(c.path, "/")
	for i := 1; i < len(parts); i++ {
		prefix := strings.Join(parts[:i], "/")
		info, err := os.Lstat(r.full(prefix))
		if errors.Is(err, fs.ErrNotExist) {
			break // nothing deeper exists either
		}
		if err != nil {
			return 0, fmt.Errorf("check %s: %w", c.path, err)
		}
		if info.IsDir() {
			continue
		}
		// A file or symlink that this round removes may stand where a
		// directory is to be made (ours cannot hold a path under it, so
		// there is nothing to compare); any other one is in the way, and
		// writing through it could leave Root.
		if deleting[prefix] && c.oldMode == absent {
			return ready, nil
		}
		return blocked, nil
	}
	return r.holds(c)
}

// holds reports whether c's path holds exactly what ours recorded: the
// same bytes and executable bit (or link target), or nothing at all for a
// path ours lacks.
func (r *Repo) holds(c change) (verdict, error) {
	full := r.full(c.path)
	info, err := os.Lstat(full)
	gone := errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
	if err != nil && !gone {
		return 0, fmt.Errorf("check %s: %w", c.path, err)
	}
	switch {
	case c.oldMode == absent && gone:
		return ready, nil
	case gone, c.oldMode == absent:
		return stale, nil
	}
	var data []byte
	switch c.oldMode {
	case "100644", "100755":
		if !info.Mode().IsRegular() || (info.Mode()&0o100 != 0) != (c.oldMode == "100755") {
			return stale, nil
		}
		if data, err = os.ReadFile(full); err != nil {
			return 0, fmt.Errorf("check %s: %w", c.path, err)
		}
	case "120000":
		if info.Mode()&fs.ModeSymlink == 0 {
			return stale, nil
		}
		target, err := os.Readlink(full)
		if err != nil {
			return 0, fmt.Errorf("check %s: %w", c.path, err)
		}
		data = []byte(target)
	default:
		return blocked, nil
	}
	if blobID(data, len(c.oldID)) != c.oldID {
		return stale, nil
	}
	return ready, nil
}

// blobID is git's object id of a blob holding data, in the hash whose hex
// form has idLen digits (SHA-1 or SHA-256 repositories).
func blobID(data []byte, idLen int) string {
	var h hash.Hash
	if idLen == 2*sha256.Size {
		h = sha256.New()
	} else {
		h = sha1.New()
	}
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// full is the path p (slash-separated, relative to Root) on this system.
func (r *Repo) full(p string) string {
	return filepath.Join(r.Root, filepath.FromSlash(p))
}

// apply writes changes to the working tree, deletions first (a directory
// may take the place of a removed file), recording each path it writes or
// removes in written. Every path is judged again just before it is
// touched; when one no longer holds what ours recorded, apply stops and
// reports false, and the caller merges again against a new ours, which
// then includes what was already written.
func (r *Repo) apply(ctx context.Context, changes []change, written *[]string) (bool, error) {
	var ids []string
	for _, c := range changes {
		if c.newMode != absent {
			ids = append(ids, c.newID)
		}
	}
	blobs, err := r.blobs(ctx, ids)
	if err != nil {
		return false, err
	}
	for _, deletions := range []bool{true, false} {
		for _, c := range changes {
			if (c.newMode == absent) != deletions {
				continue
			}
			if v, err := r.verdict(c, nil); err != nil || v != ready {
				return false, err
			}
			if deletions {
				err = r.remove(c.path)
			} else {
				err = r.write(c.path, blobs[c.newID], c.newMode)
			}
			if err != nil {
				return false, err
			}
			*written = append(*written, c.path)
		}
	}
	return true, nil
}

// remove deletes the file at p, then the directories it leaves empty.
func (r *Repo) remove(p string) error {
	if err := os.Remove(r.full(p)); err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	for dir := filepath.Dir(filepath.FromSlash(p)); dir != "."; dir = filepath.Dir(dir) {
		full := filepath.Join(r.Root, dir)
		if info, err := os.Lstat(full); err != nil || !info.IsDir() || os.Remove(full) != nil {
			break // not empty, or not ours to remove
		}
	}
	return nil
}

// write replaces the file at p with data and the mode git records,
// making its missing parent directories one at a time, each checked to be
// a real directory once it exists.
func (r *Repo) write(p string, data []byte, mode string) error {
	perm := fs.FileMode(0o644)
	if mode == "100755" {
		perm = 0o755
	}
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		dir := r.full(strings.Join(parts[:i], "/"))
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("write %s: %w", p, err)
		}
		if info, err := os.Lstat(dir); err != nil || !info.IsDir() {
			return fmt.Errorf("write %s: %s is not a directory", p, dir)
		}
	}
	if err := atomicfile.Write(r.full(p), data, perm); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// blobs reads the blobs ids from the object store, all in one git call.
func (r *Repo) blobs(ctx context.Context, ids []string) (map[string][]byte, error) {
	blobs := map[string][]byte{}
	if len(ids) == 0 {
		return blobs, nil
	}
	c := r.main()
	c.stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	out, err := run(ctx, c, "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("read merged files: %w", err)
	}
	br := bufio.NewReader(bytes.NewReader(out))
	for range ids {
		header, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("read merged files: %w", err)
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "blob" {
			return nil, fmt.Errorf("read merged files: unexpected object header %q", header)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("read merged files: %w", err)
		}
		data := make([]byte, size+1) // the content and its trailing newline
		if _, err := io.ReadFull(br, data); err != nil {
			return nil, fmt.Errorf("read merged files: %w", err)
		}
		blobs[f[0]] = data[:size]
	}
	return blobs, nil
}
