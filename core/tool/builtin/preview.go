package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"reasonix/core/tool"
	"reasonix/core/tool/builtin/toolpath"
)

// Limits of an approval's preview: files larger than previewMaxFile are
// not read for it, and the diff is cut after previewMaxLines lines.
const (
	previewMaxFile  = 1 << 20
	previewMaxLines = 400
)

// Preview shows what write_file would do: a unified diff against the file
// it replaces, or the new file's lines.
func (t *writeFile) Preview(ctx context.Context, raw json.RawMessage) (string, error) {
	var args writeFileArgs
	if err := tool.DecodeArgs("write_file", raw, &args); err != nil {
		return "", err
	}
	path, err := toolpath.ResolveWrite(t.env, args.Path)
	if err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	old, exists, err := readForPreview(path)
	if err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	return previewDiff(toolpath.Display(t.env, path), old, args.Content, exists), nil
}

// Preview shows edit_file's change as a unified diff, computed as the edit
// itself would be.
func (t *editFile) Preview(ctx context.Context, raw json.RawMessage) (string, error) {
	var args editFileArgs
	if err := tool.DecodeArgs("edit_file", raw, &args); err != nil {
		return "", err
	}
	return previewEdits(t.env, "edit_file", args.Path, []editSpec{{OldString: args.OldString, NewString: args.NewString, ReplaceAll: args.ReplaceAll}})
}

// Preview shows multi_edit's changes, all applied in order, as one
// unified diff.
func (t *multiEdit) Preview(ctx context.Context, raw json.RawMessage) (string, error) {
	var args multiEditArgs
	if err := tool.DecodeArgs("multi_edit", raw, &args); err != nil {
		return "", err
	}
	return previewEdits(t.env, "multi_edit", args.Path, args.Edits)
}

func previewEdits(env tool.Env, name, rel string, edits []editSpec) (string, error) {
	path, err := toolpath.ResolveWrite(env, rel)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	old, exists, err := readForPreview(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if !exists {
		return "", fmt.Errorf("%s: %s does not exist", name, toolpath.Display(env, path))
	}
	content := old
	for i, e := range edits {
		if content, _, err = applyEdit(content, e); err != nil {
			return "", fmt.Errorf("%s: edit %d of %d: %w", name, i+1, len(edits), err)
		}
	}
	return previewDiff(toolpath.Display(env, path), old, content, true), nil
}

// readForPreview reads the file a write would replace; exists is false
// when there is none. A file past previewMaxFile is not read.
func readForPreview(path string) (string, bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if !fi.Mode().IsRegular() {
		return "", false, errors.New("not a regular file")
	}
	if fi.Size() > previewMaxFile {
		return "", false, fmt.Errorf("%d bytes: too large to preview", fi.Size())
	}
	b, err := os.ReadFile(path)
	return string(b), true, err
}

// previewDiff is the unified diff (three lines of context) from old to
// new, labelled with the file's name; a new file is a diff from nothing.
// It is cut after previewMaxLines lines, saying how many were left out.
func previewDiff(name, old, new string, exists bool) string {
	from := "a/" + name
	if !exists {
		from = "/dev/null"
	}
	if old == new {
		return "no change to " + name
	}
	d := udiff.Unified(from, "b/"+name, old, new)
	lines := strings.SplitAfter(strings.TrimRight(d, "\n"), "\n")
	if len(lines) > previewMaxLines {
		rest := len(lines) - previewMaxLines
		d = strings.Join(lines[:previewMaxLines], "") + fmt.Sprintf("\n… %d more lines of the diff", rest)
	}
	return strings.TrimRight(d, "\n")
}
