package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"reasonix/core/atomicfile"
	"reasonix/core/tool"
	"reasonix/core/tool/builtin/toolpath"
)

func init() {
	tool.RegisterBuiltin("write_file", func(env tool.Env) tool.Tool { return &writeFile{env: env} })
}

// writeFile creates or replaces a whole file.
type writeFile struct{ env tool.Env }

type writeFileArgs struct {
	Path    string `json:"path" arg:"required"`
	Content string `json:"content" arg:"required"`
}

func (*writeFile) Name() string { return "write_file" }

func (*writeFile) Description() string {
	return "Write content to a file, replacing it entirely if it exists. Parent directories are created. " +
		"The write is atomic and keeps an existing file's permissions. " +
		"Prefer edit_file or multi_edit to change part of an existing file. " +
		"Fails if the path is a directory or lies outside the writable area."
}

func (*writeFile) Schema() json.RawMessage {
	return json.RawMessage(`{
		"type": "object",
		"properties": {
			"path": {"type": "string", "description": "File to write, relative to the workspace root or absolute."},
			"content": {"type": "string", "description": "The complete new content of the file."}
		},
		"required": ["path", "content"],
		"additionalProperties": false
	}`)
}

func (*writeFile) ReadOnly() bool { return false }

func (t *writeFile) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args writeFileArgs
	if err := tool.DecodeArgs("write_file", raw, &args); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	path, err := toolpath.ResolveWrite(t.env, args.Path)
	if err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	created, err := writeAtomic(path, []byte(args.Content))
	if err != nil {
		return "", fmt.Errorf("write_file: %s: %w", toolpath.Display(t.env, path), err)
	}
	verb := "overwrote"
	if created {
		verb = "created"
	}
	return fmt.Sprintf("%s %s (%s written)", verb, toolpath.Display(t.env, path), plural(len(args.Content), "byte")), nil
}

// newFileMode is the permission of files the tools create.
const newFileMode fs.FileMode = 0o644

// keptModeBits are the bits of an existing file's mode that a rewrite keeps.
const keptModeBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// writeAtomic replaces the file at path with data so that readers see either
// the old or the new content, never a mix: the data goes to a temporary file
// in the same directory, which is then renamed over path. An existing file
// keeps its permission bits (ownership and hard links are not preserved); a
// new file gets newFileMode and its missing parent directories are created.
// A symlink is written through to its target rather than replaced. created
// reports that path did not exist before.
func writeAtomic(path string, data []byte) (created bool, err error) {
	mode := newFileMode
	fi, err := os.Stat(path)
	switch {
	case err == nil:
		if fi.IsDir() {
			return false, errors.New("is a directory")
		}
		if !fi.Mode().IsRegular() {
			return false, errors.New("not a regular file")
		}
		mode = fi.Mode() & keptModeBits
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
	case errors.Is(err, fs.ErrNotExist):
		created = true
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return false, fmt.Errorf("create parent directory: %w", err)
		}
	default:
		return false, err
	}

	if err := atomicfile.Write(path, data, mode); err != nil {
		return false, err
	}
	return created, nil
}
