package ref

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSplitUndoesExpand: what Expand makes of a message with a file, a
// directory, a binary file and a missing one splits back into the message
// as typed and the paths attached, in order.
func TestSplitUndoesExpand(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, "notes.txt"), []byte("a\n\nb\n</file>\nc\n"), 0o644))
	must(os.Mkdir(filepath.Join(root, "src"), 0o755))
	must(os.WriteFile(filepath.Join(root, "src", "x.go"), []byte("package x\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "my q&a.bin"), []byte{0, 1, 2}, 0o644))
	input := "look at @notes.txt and @src and @\"my q&a.bin\" but not @missing.txt\n\nthanks"
	res := Expand(context.Background(), root, input, Options{})
	if len(res.Files) != 3 {
		t.Fatalf("expanded %v, notices %v", res.Files, res.Notices)
	}
	typed, paths := Split(res.Text)
	if typed != input {
		t.Errorf("typed = %q, want %q", typed, input)
	}
	if !slices.Equal(paths, res.Files) {
		t.Errorf("paths = %q, want %q", paths, res.Files)
	}
	for _, plain := range []string{"no blocks here", `<file path="x">never closed`, ""} {
		if typed, paths := Split(plain); typed != plain || paths != nil {
			t.Errorf("Split(%q) = %q, %q", plain, typed, paths)
		}
	}
}
