package worktree

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAddCommit(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"a.txt": "one\n", "b.txt": "b\n", "c.txt": "c\n"})
	ctx := context.Background()
	write(t, filepath.Join(r.Root, "a.txt"), "one\ntwo\n")
	write(t, filepath.Join(r.Root, "new.txt"), "untracked\n")
	snap, err := r.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	tr := addAt(t, r, "reasonix/s1/f1.2", snap)
	if tr.Base != snap || tr.Branch != "reasonix/s1/f1.2" {
		t.Errorf("Add = %+v, want base %s", tr, snap)
	}
	// The worktree starts from the snapshot, so it sees the parent's
	// uncommitted work.
	if got := read(t, filepath.Join(tr.Dir, "a.txt")) + read(t, filepath.Join(tr.Dir, "new.txt")); got != "one\ntwo\nuntracked\n" {
		t.Errorf("worktree holds %q", got)
	}
	if got := gitT(t, r.Root, "rev-parse", baseRefs+tr.Branch); got != snap {
		t.Errorf("base ref %s, want %s", got, snap)
	}

	write(t, filepath.Join(tr.Dir, "b.txt"), "b edited\n")
	write(t, filepath.Join(tr.Dir, "d/e.txt"), "e\n")
	if err := os.Remove(filepath.Join(tr.Dir, "c.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(tr.Dir, "new.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	c1, changed, err := r.Commit(ctx, tr, "first")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b.txt", "c.txt", "d/e.txt", "new.txt"}; !slices.Equal(changed, want) {
		t.Errorf("changed %v, want %v", changed, want)
	}
	if got := gitT(t, r.Root, "log", "-1", "--format=%P|%an <%ae>|%cn <%ce>|%s", c1); got != snap+"|Reasonix <reasonix@localhost>|Reasonix <reasonix@localhost>|first" {
		t.Errorf("commit is %s", got)
	}
	if got := gitT(t, r.Root, "rev-parse", "refs/heads/"+tr.Branch); got != c1 {
		t.Errorf("branch at %s, want %s", got, c1)
	}
	if got := treeFiles(t, r.Root, c1)["new.txt"]; got != "100755 untracked" {
		t.Errorf("new.txt recorded as %q", got)
	}

	again, changed, err := r.Commit(ctx, tr, "nothing")
	if err != nil || again != c1 || changed != nil {
		t.Errorf("Commit with no change = %s, %v, %v; want %s and no paths", again, changed, err, c1)
	}
	write(t, filepath.Join(tr.Dir, "b.txt"), "b\n")
	c2, changed, err := r.Commit(ctx, tr, "second")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"c.txt", "d/e.txt", "new.txt"}; !slices.Equal(changed, want) {
		t.Errorf("second commit: changed %v, want %v (relative to the base)", changed, want)
	}
	if got := gitT(t, r.Root, "rev-parse", c2+"^"); got != c1 {
		t.Errorf("second commit's parent %s, want %s", got, c1)
	}

	if _, err := r.Add(ctx, filepath.Join(t.TempDir(), "other"), tr.Branch, snap); err == nil {
		t.Error("Add of an existing branch succeeded")
	}
	if _, err := r.Add(ctx, tr.Dir, "reasonix/s1/f9", snap); err == nil {
		t.Error("Add into an existing directory succeeded")
	}
	if _, err := r.Add(ctx, filepath.Join(t.TempDir(), "x"), "-bad", snap); err == nil {
		t.Error("Add of branch -bad succeeded")
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"a.txt": "a"})
	ctx := context.Background()
	tr := fork(t, r, "reasonix/s1/f1")
	got, err := r.Open(ctx, tr.Branch)
	if err != nil {
		t.Fatal(err)
	}
	if *got != *tr {
		t.Errorf("Open = %+v, want %+v", got, tr)
	}
	write(t, filepath.Join(got.Dir, "b.txt"), "b")
	if _, changed, err := r.Commit(ctx, got, "from a later process"); err != nil || !slices.Equal(changed, []string{"b.txt"}) {
		t.Errorf("Commit of an opened tree = %v, %v", changed, err)
	}
	if err := r.Remove(ctx, got, false); err != nil {
		t.Fatal(err)
	}
	got, err = r.Open(ctx, tr.Branch)
	if err != nil {
		t.Fatal(err)
	}
	if got.Dir != "" || got.Base != tr.Base {
		t.Errorf("Open after Remove = %+v, want no Dir and base %s", got, tr.Base)
	}
	if _, err := r.Open(ctx, "reasonix/none"); err == nil {
		t.Error("Open of a missing branch succeeded")
	}
}

func TestRemoveAndList(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"a.txt": "a"})
	ctx := context.Background()
	snap, err := r.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	kept, dropped, live := addAt(t, r, "reasonix/s1/f1", snap), addAt(t, r, "reasonix/s1/f2", snap), addAt(t, r, "reasonix/s1/f3", snap)
	gitT(t, r.Root, "branch", "other")
	if err := r.Remove(ctx, kept, false); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove(ctx, dropped, true); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []*Tree{kept, dropped} {
		absentFile(t, tr.Dir)
	}
	gitT(t, r.Root, "rev-parse", "--verify", "refs/heads/"+kept.Branch)
	if got := gitT(t, r.Root, "for-each-ref", "refs/heads/"+dropped.Branch, baseRefs+dropped.Branch); got != "" {
		t.Errorf("dropped branch left refs: %s", got)
	}
	list, err := r.List(ctx, "reasonix/")
	if err != nil {
		t.Fatal(err)
	}
	want := []Kept{
		{Branch: kept.Branch, Head: snap, Base: snap},
		{Branch: live.Branch, Head: snap, Base: snap, Dir: live.Dir},
	}
	if !slices.Equal(list, want) {
		t.Errorf("List = %+v, want %+v", list, want)
	}
	if err := r.Remove(ctx, live, true); err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, r.Root, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 || !strings.Contains(got, "worktree "+r.Root+"\n") {
		t.Errorf("worktree list after removing all:\n%s", got)
	}
}
