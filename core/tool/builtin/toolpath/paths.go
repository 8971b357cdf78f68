package toolpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"reasonix/core/tool"
)

// errEmptyPath is returned when a tool receives a blank path argument.
var errEmptyPath = errors.New("path is empty")

// ResolveRead turns the path argument p into the absolute path a read-only
// tool may inspect. With a guard the guard decides (and may refuse); without
// one, a relative p is taken relative to env.Root. The result is cleaned.
func ResolveRead(env tool.Env, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errEmptyPath
	}
	if env.Guard != nil {
		return env.Guard.ReadPath(p)
	}
	return JoinRoot(env.Root, p), nil
}

// ResolveWrite turns the path argument p into the absolute path a mutating
// tool may modify. It follows the same rules as ResolveRead but asks the
// guard's write policy, which is usually narrower than its read policy.
func ResolveWrite(env tool.Env, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errEmptyPath
	}
	if env.Guard != nil {
		return env.Guard.WritePath(p)
	}
	return JoinRoot(env.Root, p), nil
}

// JoinRoot anchors a relative p at root and cleans the result; an absolute p
// is only cleaned. An empty root leaves relative paths relative to the
// process working directory.
func JoinRoot(root, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(root, p)
}

// Display renders an absolute path the way results show it: relative to
// env.Root with forward slashes when it lies under the root ("." for the root
// itself), otherwise unchanged. Results stay short and identical across runs
// from different checkouts, which keeps the prompt cache warm.
//
// A guard may hand back symlink-free paths while Root still contains a
// symlink (macOS /var → /private/var), so the resolved root is tried too.
func Display(env tool.Env, abs string) string {
	if env.Root == "" {
		return abs
	}
	if rel, ok := RelUnder(env.Root, abs); ok {
		return rel
	}
	if real, err := filepath.EvalSymlinks(env.Root); err == nil && real != env.Root {
		if rel, ok := RelUnder(real, abs); ok {
			return rel
		}
	}
	return abs
}

// RelUnder reports abs relative to root when abs is root or below it.
func RelUnder(root, abs string) (string, bool) {
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(rootAbs, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// ResolveDir resolves an optional directory argument of a read-only tool
// (empty: the workspace root) and checks that it exists and is a
// directory; onFile is the hint given when it is a file.
func ResolveDir(env tool.Env, name, p, onFile string) (abs, shown string, err error) {
	if strings.TrimSpace(p) == "" {
		p = "."
	}
	abs, err = ResolveRead(env, p)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", name, err)
	}
	shown = Display(env, abs)
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("%s: %s does not exist", name, shown)
	case err != nil:
		return "", "", fmt.Errorf("%s: %w", name, err)
	case !info.IsDir():
		return "", "", fmt.Errorf("%s: %s is a file, not a directory; %s", name, shown, onFile)
	}
	return abs, shown, nil
}
