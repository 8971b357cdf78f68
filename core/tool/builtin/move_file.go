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
)

func init() {
	tool.RegisterBuiltin("move_file", func(env tool.Env) tool.Tool { return &moveFile{env: env} })
}

// moveFile renames or moves a file or directory.
type moveFile struct{ env tool.Env }

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
		"Moves across filesystems are not supported."
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
	src, err := resolveWrite(t.env, args.Path)
	if err != nil {
		return "", fmt.Errorf("move_file: source: %w", err)
	}
	dst, err := resolveWrite(t.env, args.Destination)
	if err != nil {
		return "", fmt.Errorf("move_file: destination: %w", err)
	}
	srcShown, dstShown := displayPath(t.env, src), displayPath(t.env, dst)
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
