package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"reasonix/core/tool"
	"reasonix/core/tool/builtin/toolpath"
)

func init() {
	tool.RegisterBuiltin("edit_file", func(env tool.Env) tool.Tool { return &editFile{env: env} })
	tool.RegisterBuiltin("multi_edit", func(env tool.Env) tool.Tool { return &multiEdit{env: env} })
}

// editSpec is one exact-text replacement. Both tools share it so a single
// edit and each step of a multi-edit behave and fail identically.
type editSpec struct {
	OldString  string `json:"old_string" arg:"required"`
	NewString  string `json:"new_string" arg:"required"`
	ReplaceAll bool   `json:"replace_all"`
}

// editProperties are the schema properties of one editSpec.
const editProperties = `
	"old_string": {"type": "string", "description": "Exact text to replace, byte for byte, including whitespace and indentation. Must be non-empty and must occur exactly once unless replace_all is true."},
	"new_string": {"type": "string", "description": "Text to put in its place; must differ from old_string. Use an empty string to delete."},
	"replace_all": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one. Default false."}`

// editFile replaces one exact piece of text in a file.
type editFile struct{ env tool.Env }

// editFileArgs spells out editSpec's fields rather than embedding it, so
// decoding errors name fields the way the model wrote them.
type editFileArgs struct {
	Path       string `json:"path" arg:"required"`
	OldString  string `json:"old_string" arg:"required"`
	NewString  string `json:"new_string" arg:"required"`
	ReplaceAll bool   `json:"replace_all"`
}

func (*editFile) Name() string { return "edit_file" }

func (*editFile) Description() string {
	return "Replace an exact string in an existing file. old_string must match the file byte for byte " +
		"(read the file first) and must be unique unless replace_all is true; otherwise the call fails " +
		"and the file is left unchanged. Returns the number of replacements. " +
		"To create a file use write_file; for several changes to one file use multi_edit."
}

func (*editFile) Schema() json.RawMessage {
	return json.RawMessage(`{
		"type": "object",
		"properties": {
			"path": {"type": "string", "description": "File to edit, relative to the workspace root or absolute."},` + editProperties + `
		},
		"required": ["path", "old_string", "new_string"],
		"additionalProperties": false
	}`)
}

func (*editFile) ReadOnly() bool { return false }

func (t *editFile) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args editFileArgs
	if err := tool.DecodeArgs("edit_file", raw, &args); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("%s: %w", t.Name(), err)
	}
	path, err := toolpath.ResolveWrite(t.env, args.Path)
	if err != nil {
		return "", fmt.Errorf("edit_file: %w", err)
	}
	shown := toolpath.Display(t.env, path)
	content, err := readForEdit(path)
	if err != nil {
		return "", fmt.Errorf("edit_file: %s: %w", shown, err)
	}
	out, n, err := applyEdit(content, editSpec{OldString: args.OldString, NewString: args.NewString, ReplaceAll: args.ReplaceAll})
	if err != nil {
		return "", fmt.Errorf("edit_file: %s: %w", shown, err)
	}
	if _, err := writeAtomic(path, []byte(out)); err != nil {
		return "", fmt.Errorf("edit_file: %s: %w", shown, err)
	}
	return fmt.Sprintf("edited %s: %s", shown, plural(n, "replacement")), nil
}

// multiEdit applies a sequence of replacements to one file as a unit.
type multiEdit struct{ env tool.Env }

type multiEditArgs struct {
	Path  string     `json:"path" arg:"required"`
	Edits []editSpec `json:"edits" arg:"required"`
}

func (*multiEdit) Name() string { return "multi_edit" }

func (*multiEdit) Description() string {
	return "Apply several exact-string replacements to one file in a single call. Edits run in order, " +
		"each against the result of the previous one, with the same rules as edit_file. " +
		"All or nothing: if any edit fails, the file is not written and the error names the failing edit (numbered from 1)."
}

func (*multiEdit) Schema() json.RawMessage {
	return json.RawMessage(`{
		"type": "object",
		"properties": {
			"path": {"type": "string", "description": "File to edit, relative to the workspace root or absolute."},
			"edits": {
				"type": "array",
				"minItems": 1,
				"description": "Replacements to apply in order; at least one.",
				"items": {
					"type": "object",
					"properties": {` + editProperties + `
					},
					"required": ["old_string", "new_string"],
					"additionalProperties": false
				}
			}
		},
		"required": ["path", "edits"],
		"additionalProperties": false
	}`)
}

func (*multiEdit) ReadOnly() bool { return false }

func (t *multiEdit) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args multiEditArgs
	if err := tool.DecodeArgs("multi_edit", raw, &args); err != nil {
		return "", err
	}
	if len(args.Edits) == 0 {
		return "", errors.New(`multi_edit: "edits" must contain at least one edit`)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("%s: %w", t.Name(), err)
	}
	path, err := toolpath.ResolveWrite(t.env, args.Path)
	if err != nil {
		return "", fmt.Errorf("multi_edit: %w", err)
	}
	shown := toolpath.Display(t.env, path)
	content, err := readForEdit(path)
	if err != nil {
		return "", fmt.Errorf("multi_edit: %s: %w", shown, err)
	}
	total := 0
	for i, e := range args.Edits {
		out, n, err := applyEdit(content, e)
		if err != nil {
			note := "nothing was written"
			if i > 0 {
				note += " (edits apply in order, each to the result of the previous ones)"
			}
			return "", fmt.Errorf("multi_edit: %s: edit %d of %d: %w; %s", shown, i+1, len(args.Edits), err, note)
		}
		content = out
		total += n
	}
	if _, err := writeAtomic(path, []byte(content)); err != nil {
		return "", fmt.Errorf("multi_edit: %s: %w", shown, err)
	}
	return fmt.Sprintf("edited %s: %s, %s", shown, plural(len(args.Edits), "edit"), plural(total, "replacement")), nil
}

// readForEdit loads an existing regular file, turning the common failures
// into advice the model can follow.
func readForEdit(path string) (string, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errors.New("file does not exist; use write_file to create it")
	}
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return "", errors.New("is a directory, not a file")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// applyEdit performs e on content and returns the new content and the number
// of replacements. It fails, leaving the caller free to write nothing, when
// the edit is a no-op, ambiguous or does not match.
func applyEdit(content string, e editSpec) (string, int, error) {
	if e.OldString == "" {
		return "", 0, errors.New("old_string is empty; use write_file to create or replace a whole file")
	}
	if e.OldString == e.NewString {
		return "", 0, errors.New("old_string and new_string are identical; nothing to change")
	}
	n := strings.Count(content, e.OldString)
	switch {
	case n == 0:
		return "", 0, errors.New("old_string was not found" + mismatchHint(content, e.OldString))
	case n > 1 && !e.ReplaceAll:
		return "", 0, fmt.Errorf("old_string occurs %d times; include more surrounding lines to make it unique, or set replace_all to true to replace every occurrence", n)
	case e.ReplaceAll:
		return strings.ReplaceAll(content, e.OldString, e.NewString), n, nil
	default:
		return strings.Replace(content, e.OldString, e.NewString, 1), 1, nil
	}
}

// mismatchHint explains a failed match when the cause is detectable: line
// endings, or whitespace and indentation alone. Otherwise it points the model
// back at the file.
func mismatchHint(content, old string) string {
	if !strings.Contains(old, "\r\n") && strings.Contains(old, "\n") &&
		strings.Contains(content, strings.ReplaceAll(old, "\n", "\r\n")) {
		return "; the file uses CRLF (\\r\\n) line endings, so old_string must too"
	}
	if norm := collapseSpace(old); norm != "" && strings.Contains(collapseSpace(content), norm) {
		return "; the text is present but whitespace or indentation differs (tabs vs spaces, line breaks, trailing spaces): read the file again and copy it exactly"
	}
	return "; read the file again and copy the text exactly"
}

// collapseSpace reduces every run of whitespace to one space and trims the
// ends, so two texts that differ only in layout compare equal.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// plural renders n with noun, adding "s" unless n is 1.
func plural[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
