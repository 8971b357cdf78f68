package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"reasonix/core/tool"
	"reasonix/core/tool/builtin/toolpath"
)

func init() {
	tool.RegisterBuiltin("move_file", func(env tool.Env) tool.Tool { return &moveFile{env: env, limit: moveMaxEntries} })
}

// moveMaxEntries bounds how many entries below a directory move_file
// checks before moving it. A larger tree is refused: whether every entry
// may move cannot be settled at a bounded cost, and a check that cannot
// answer answers no.
const moveMaxEntries = 100_000

// moveFile renames or moves a file or directory.
type moveFile struct {
	env   tool.Env
	limit int // entries checked below a moved directory; more is refused
}

type moveFileArgs struct {
	Path        string `json:"path" arg:"required"`
	Destination string `json:"destination" arg:"required"`
	Overwrite   bool   `json:"overwrite"`
}

func (*moveFile) Name() string { return "move_file" }

func (*moveFile) Description() string {
	return "Move or rename a file or directory. The destination is the full new path (not a directory to move into); " +
		"its parent directories are created. Fails if the source does not exist, or if the destination exists " +
		"unless overwrite is true. An existing directory is never replaced. " +
		"A directory is moved only when the sandbox lets every entry below it be moved, so a move never carries " +
		"a protected file somewhere else. Moves across filesystems are not supported."
}

func (*moveFile) Schema() json.RawMessage {
	return json.RawMessage(`{
		"type": "object",
		"properties": {
			"path": {"type": "string", "description": "Existing file or directory to move, relative to the workspace root or absolute."},
			"destination": {"type": "string", "description": "Full new path, including the new name."},
			"overwrite": {"type": "boolean", "description": "Replace an existing destination file. Default false."}
		},
		"required": ["path", "destination"],
		"additionalProperties": false
	}`)
}

func (*moveFile) ReadOnly() bool { return false }

func (t *moveFile) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args moveFileArgs
	if err := tool.DecodeArgs("move_file", raw, &args); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("move_file: %w", err)
	}
	src, err := toolpath.ResolveWrite(t.env, args.Path)
	if err != nil {
		return "", fmt.Errorf("move_file: source: %w", err)
	}
	// A move carries the content elsewhere, so a source that may not be
	// read may not be moved either.
	if _, err := toolpath.ResolveRead(t.env, args.Path); err != nil {
		return "", fmt.Errorf("move_file: source: %w", err)
	}
	dst, err := toolpath.ResolveWrite(t.env, args.Destination)
	if err != nil {
		return "", fmt.Errorf("move_file: destination: %w", err)
	}
	srcShown, dstShown := toolpath.Display(t.env, src), toolpath.Display(t.env, dst)
	if src == dst {
		return "", fmt.Errorf("move_file: source and destination are the same path %s", srcShown)
	}

	srcInfo, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("move_file: source %s does not exist", srcShown)
	}
	if err != nil {
		return "", fmt.Errorf("move_file: %w", err)
	}
	if srcInfo.IsDir() {
		if err := t.checkTree(ctx, src, dst); err != nil {
			return "", fmt.Errorf("move_file: %w", err)
		}
	}

	replaced := false
	dstInfo, err := os.Lstat(dst)
	switch {
	case err == nil && os.SameFile(srcInfo, dstInfo) && strings.EqualFold(src, dst):
		// Same file under another spelling: a case-only rename on a
		// case-insensitive filesystem. Renaming is what the caller wants.
	case err == nil && dstInfo.IsDir():
		return "", fmt.Errorf("move_file: destination %s is an existing directory; give the full new path including the name", dstShown)
	case err == nil && !args.Overwrite:
		return "", fmt.Errorf("move_file: destination %s already exists; set overwrite to true to replace it", dstShown)
	case err == nil:
		if srcInfo.IsDir() {
			return "", fmt.Errorf("move_file: cannot replace file %s with directory %s", dstShown, srcShown)
		}
		replaced = true
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", fmt.Errorf("move_file: create parent of %s: %w", dstShown, err)
		}
	default:
		return "", fmt.Errorf("move_file: %w", err)
	}

	if err := os.Rename(src, dst); err != nil {
		return "", fmt.Errorf("move_file: move %s to %s: %w", srcShown, dstShown, err)
	}
	if replaced {
		return fmt.Sprintf("moved %s to %s (replaced the existing file)", srcShown, dstShown), nil
	}
	return fmt.Sprintf("moved %s to %s", srcShown, dstShown), nil
}

// checkTree asks the guard about every entry below the directory src, as
// it is now and as it would be under dst, and refuses the move when it
// refuses any: moving a directory moves everything in it, and a
// forbid_read file, a secret or a path a permission rule denies must not
// be carried out from under its rule (or into one) by moving an ancestor.
// Refused directories are not entered. The refusal names the first
// refused entry, in walk order, and how many there are.
func (t *moveFile) checkTree(ctx context.Context, src, dst string) error {
	if t.env.Guard == nil {
		return nil
	}
	srcShown := toolpath.Display(t.env, src)
	var first error
	refused, seen := 0, 0
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("cannot move %s: check every entry below it: %w", srcShown, err)
		}
		if p == src {
			return nil
		}
		if seen%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if seen++; seen > t.limit {
			return fmt.Errorf("cannot move %s: it holds more than %d entries, too many to check that each may be moved; "+
				"move it in parts", srcShown, t.limit)
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if err := t.entryAllowed(p, filepath.Join(dst, rel)); err != nil {
			refused++
			if first == nil {
				first = err
			}
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if first != nil {
		return fmt.Errorf("cannot move %s: the sandbox refuses %s below it; the first: %w",
			srcShown, countEntries(refused), first)
	}
	return nil
}

// entryAllowed reports the guard's refusal of the entry at p, which the
// move would put at to, or nil.
func (t *moveFile) entryAllowed(p, to string) error {
	if _, err := t.env.Guard.WritePath(p); err != nil {
		return err
	}
	if _, err := t.env.Guard.ReadPath(p); err != nil {
		return err
	}
	if _, err := t.env.Guard.WritePath(to); err != nil {
		return err
	}
	return nil
}
