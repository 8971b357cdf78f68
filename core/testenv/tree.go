package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteTree creates files under root, making parent directories as
// needed; a name (slash-separated) ending in "/" is an empty directory.
func WriteTree(tb testing.TB, root string, files map[string]string) {
	tb.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// Tree is WriteTree under a new temporary directory, which it returns.
func Tree(tb testing.TB, files map[string]string) string {
	tb.Helper()
	root := tb.TempDir()
	WriteTree(tb, root, files)
	return root
}

// WriteFile writes text to path with exactly perm (the parent directories
// made as needed): os.WriteFile leaves an existing file's mode alone and
// the umask may narrow a new one, and tests that check modes need the
// exact one.
func WriteFile(tb testing.TB, path, text string, perm os.FileMode) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), perm); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		tb.Fatal(err)
	}
}
