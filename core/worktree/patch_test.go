package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPatchCrossesRepositories: a worktree's changes in one repository
// (a worker's checkout), made a patch, binary file and deletion included,
// apply to the same snapshot in another (the scheduler's) as a branch,
// which merges into that working tree; a patch that does not apply is
// ErrPatch and makes no branch.
func TestPatchCrossesRepositories(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lines := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	files := map[string]string{"a.txt": lines, "gone.txt": "bye\n"}
	here, there := newRepo(t, files), newRepo(t, files)
	wt := fork(t, there, "reasonix/s1/f1.1")
	write(t, filepath.Join(wt.Dir, "a.txt"), strings.Replace(lines, "8\n", "eight\n", 1))
	bin := []byte{0, 1, 2, 0xff, 0, 'x'}
	if err := os.WriteFile(filepath.Join(wt.Dir, "blob.bin"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(wt.Dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	head := commit(t, there, wt)
	patch, err := there.Patch(ctx, wt.Base, head)
	if err != nil {
		t.Fatal(err)
	}
	// The scheduler's side changed a line of the patch's context
	// meanwhile: it applies three-way.
	write(t, filepath.Join(here.Root, "a.txt"), strings.Replace(lines, "5\n", "five\n", 1))
	snap, err := here.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := here.ApplyPatch(ctx, snap, "reasonix/s1/f1.1", patch)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := here.List(ctx, "reasonix/")
	if err != nil || len(kept) != 1 || kept[0].Head != c || kept[0].Base != snap || kept[0].Dir != "" {
		t.Fatalf("after the apply: %+v, %v", kept, err)
	}
	write(t, filepath.Join(here.Root, "a.txt"), strings.Replace(lines, "5\n", "five\n", 1)+"11\n")
	res, err := here.Merge(ctx, snap, c, MergeOptions{})
	if err != nil || len(res.Conflicts) != 0 {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	if got := read(t, filepath.Join(here.Root, "a.txt")); got != strings.NewReplacer("5\n", "five\n", "8\n", "eight\n").Replace(lines)+"11\n" {
		t.Errorf("a.txt = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(here.Root, "blob.bin")); string(got) != string(bin) {
		t.Errorf("blob.bin = %q, want %q", got, bin)
	}
	if _, err := os.Stat(filepath.Join(here.Root, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("gone.txt survived the merge: %v", err)
	}

	// A patch whose context is not there.
	other := newRepo(t, map[string]string{"a.txt": "entirely\ndifferent\n"})
	osnap, err := other.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ApplyPatch(ctx, osnap, "reasonix/s1/f1.1", patch); !errors.Is(err, ErrPatch) {
		t.Errorf("a patch that cannot apply: %v, want ErrPatch", err)
	}
	if kept, _ := other.List(ctx, "reasonix/"); len(kept) != 0 {
		t.Errorf("a failed apply made a branch: %+v", kept)
	}
}
