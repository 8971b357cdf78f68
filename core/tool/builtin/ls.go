package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"reasonix/core/tool"
	"reasonix/core/tool/builtin/toolpath"
)

func init() {
	tool.RegisterBuiltin("ls", func(env tool.Env) tool.Tool { return &ls{env: env} })
}

// ls lists one directory, not recursively.
type ls struct{ env tool.Env }

type lsArgs struct {
	Path string `json:"path"`
}

func (*ls) Name() string { return "ls" }

func (t *ls) Description() string {
	return fmt.Sprintf("List the entries of one directory (not recursive), sorted by name. "+
		"Directories end in \"/\", symlinks show \"name -> target\", files show their size in bytes. "+
		"Entries the sandbox does not let you read are left out and only counted. "+
		"At most %d entries are listed; the rest are counted. Fails on a file (use read_file) "+
		"or a missing path. Use glob to find files by pattern across directories.",
		t.env.Limits.WithDefaults().ListEntries)
}

func (*ls) Schema() json.RawMessage {
	return json.RawMessage(`{
		"type": "object",
		"properties": {
			"path": {"type": "string", "description": "Directory to list, relative to the workspace root or absolute. Defaults to the workspace root."}
		},
		"required": [],
		"additionalProperties": false
	}`)
}

func (*ls) ReadOnly() bool { return true }

func (t *ls) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args lsArgs
	if err := tool.DecodeArgs("ls", raw, &args); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("ls: %w", err)
	}
	dir, shown, err := toolpath.ResolveDir(t.env, "ls", args.Path, "use read_file to read it")
	if err != nil {
		return "", err
	}
	// os.ReadDir sorts by name, which makes the listing deterministic.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("ls: %s: %w", shown, err)
	}

	entries, hidden := t.visible(dir, entries)

	var b strings.Builder
	header := strings.TrimSuffix(shown, "/") + "/"
	if len(entries) == 0 {
		fmt.Fprintf(&b, "%s is empty", header)
		if hidden > 0 {
			fmt.Fprintf(&b, " [%s hidden by read restrictions]", countEntries(hidden))
		}
		return b.String(), nil
	}
	fmt.Fprintf(&b, "%s (%s)\n", header, countEntries(len(entries)))
	limit := t.env.Limits.WithDefaults().ListEntries
	for i, e := range entries {
		if i == limit {
			fmt.Fprintf(&b, "[%d more entries not shown; the listing is capped at %d]\n", len(entries)-limit, limit)
			break
		}
		b.WriteString(describeEntry(dir, e))
		b.WriteByte('\n')
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "[%s hidden by read restrictions]\n", countEntries(hidden))
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// visible drops the entries the guard would refuse to read, so a listing
// never names what the sandbox keeps from the model, and reports how many
// were dropped. Without a guard every entry is visible.
func (t *ls) visible(dir string, entries []fs.DirEntry) ([]fs.DirEntry, int) {
	if t.env.Guard == nil {
		return entries, 0
	}
	kept := entries[:0]
	for _, e := range entries {
		if _, err := t.env.Guard.ReadPath(filepath.Join(dir, e.Name())); err == nil {
			kept = append(kept, e)
		}
	}
	return kept, len(entries) - len(kept)
}

// countEntries renders n as "1 entry" or "n entries".
func countEntries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

// describeEntry renders one listing line: "name/" for a directory,
// "name -> target" for a symlink, "name (N bytes)" for a regular file and
// "name (kind)" for anything else.
func describeEntry(dir string, e fs.DirEntry) string {
	name := e.Name()
	switch typ := e.Type(); {
	case typ&fs.ModeSymlink != 0:
		target, err := os.Readlink(filepath.Join(dir, name))
		if err != nil {
			return name + " -> ?"
		}
		return name + " -> " + target
	case typ.IsDir():
		return name + "/"
	case typ.IsRegular():
		info, err := e.Info()
		if err != nil {
			// Vanished between listing and stat; still worth naming.
			return name
		}
		return fmt.Sprintf("%s (%s)", name, plural(info.Size(), "byte"))
	case typ&fs.ModeNamedPipe != 0:
		return name + " (fifo)"
	case typ&fs.ModeSocket != 0:
		return name + " (socket)"
	case typ&fs.ModeDevice != 0:
		return name + " (device)"
	default:
		return name + " (special file)"
	}
}
