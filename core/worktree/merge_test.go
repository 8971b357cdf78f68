package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func merge(tb testing.TB, r *Repo, t *Tree, c string, o MergeOptions) MergeResult {
	tb.Helper()
	res, err := r.Merge(context.Background(), t.Base, c, o)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

func TestMergeThreeWay(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"f.txt": lines(10, nil)})
	tr := fork(t, r, "reasonix/s1/f1")
	write(t, filepath.Join(tr.Dir, "f.txt"), lines(10, map[int]string{9: "agent"}))
	c := commit(t, r, tr)
	write(t, filepath.Join(r.Root, "f.txt"), lines(10, map[int]string{1: "parent"}))
	before := repoState(t, r)

	res := merge(t, r, tr, c, MergeOptions{})
	if !slices.Equal(res.Files, []string{"f.txt"}) || res.Conflicts != nil {
		t.Errorf("Merge = %+v, want f.txt written", res)
	}
	if got, want := read(t, filepath.Join(r.Root, "f.txt")), lines(10, map[int]string{1: "parent", 9: "agent"}); got != want {
		t.Errorf("f.txt = %q, want %q", got, want)
	}
	if after := repoState(t, r); after != before {
		t.Errorf("Merge changed the repository:\nbefore %s\nafter  %s", before, after)
	}
}

func TestMergeConflict(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"f.txt": lines(10, nil), "g.txt": "g\n"})
	tr := fork(t, r, "reasonix/s1/f1")
	write(t, filepath.Join(tr.Dir, "f.txt"), lines(10, map[int]string{5: "agent"}))
	write(t, filepath.Join(tr.Dir, "g.txt"), "g edited\n")
	c := commit(t, r, tr)
	parent := lines(10, map[int]string{5: "parent"})
	write(t, filepath.Join(r.Root, "f.txt"), parent)

	res := merge(t, r, tr, c, MergeOptions{})
	if !slices.Equal(res.Conflicts, []string{"f.txt"}) || res.Files != nil {
		t.Errorf("Merge = %+v, want a conflict on f.txt and nothing written", res)
	}
	if got := read(t, filepath.Join(r.Root, "f.txt")); got != parent {
		t.Errorf("f.txt = %q, want the parent's %q", got, parent)
	}
	if got := read(t, filepath.Join(r.Root, "g.txt")); got != "g\n" {
		t.Errorf("g.txt = %q: written despite the conflict", got)
	}
}

func TestMergeTwoWorktrees(t *testing.T) {
	t.Parallel()
	src := "func a() {\n\treturn 1\n}\n\n// between\n// the\n// two\n\nfunc b() {\n\treturn 2\n}\n"
	r := newRepo(t, map[string]string{"code.go": src})
	ctx := context.Background()
	snap, err := r.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t1, t2 := addAt(t, r, "reasonix/s1/f1", snap), addAt(t, r, "reasonix/s1/f2", snap)
	write(t, filepath.Join(t1.Dir, "code.go"), strings.Replace(src, "return 1", "return 10", 1))
	write(t, filepath.Join(t2.Dir, "code.go"), strings.Replace(src, "return 2", "return 20", 1))
	c1, c2 := commit(t, r, t1), commit(t, r, t2)
	merge(t, r, t1, c1, MergeOptions{})
	res := merge(t, r, t2, c2, MergeOptions{})
	if !slices.Equal(res.Files, []string{"code.go"}) {
		t.Errorf("second Merge = %+v", res)
	}
	want := strings.Replace(strings.Replace(src, "return 1", "return 10", 1), "return 2", "return 20", 1)
	if got := read(t, filepath.Join(r.Root, "code.go")); got != want {
		t.Errorf("code.go = %q, want both edits %q", got, want)
	}
}

func TestMergeDeleteAndMode(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"sub/x.txt": "x", "run.sh": "#!/bin/sh\n", "keep.txt": "k"})
	tr := fork(t, r, "reasonix/s1/f1")
	if err := os.Remove(filepath.Join(tr.Dir, "sub/x.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(tr.Dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tr.Dir, "new/dir/n.txt"), "n")
	c := commit(t, r, tr)
	res := merge(t, r, tr, c, MergeOptions{})
	if want := []string{"new/dir/n.txt", "run.sh", "sub/x.txt"}; !slices.Equal(res.Files, want) {
		t.Errorf("Merge = %+v, want files %v", res, want)
	}
	absentFile(t, filepath.Join(r.Root, "sub"))
	info, err := os.Stat(filepath.Join(r.Root, "run.sh"))
	if err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("run.sh: %v, %v; want mode 0755", info, err)
	}
	if info, err := os.Stat(filepath.Join(r.Root, "new/dir/n.txt")); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("n.txt: %v, %v; want mode 0644", info, err)
	}
}

func TestMergeTwice(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"f.txt": lines(5, nil), "gone.txt": "g"})
	tr := fork(t, r, "reasonix/s1/f1")
	write(t, filepath.Join(tr.Dir, "f.txt"), lines(5, map[int]string{2: "agent"}))
	if err := os.Remove(filepath.Join(tr.Dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	c := commit(t, r, tr)
	if res := merge(t, r, tr, c, MergeOptions{}); len(res.Files) != 2 {
		t.Fatalf("first Merge = %+v", res)
	}
	info, err := os.Stat(filepath.Join(r.Root, "f.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if res := merge(t, r, tr, c, MergeOptions{}); res.Files != nil || res.Conflicts != nil {
		t.Errorf("second Merge = %+v, want nothing to do", res)
	}
	again, err := os.Stat(filepath.Join(r.Root, "f.txt"))
	if err != nil || !again.ModTime().Equal(info.ModTime()) || read(t, filepath.Join(r.Root, "f.txt")) != lines(5, map[int]string{2: "agent"}) {
		t.Errorf("second Merge touched f.txt")
	}
}

// TestMergeRace changes the parent's file after Merge took "ours" (from
// Check, which runs between the merge and the writes) and checks that
// Merge neither overwrites the change nor loses its own.
func TestMergeRace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		parent   string // what the parent writes during the first round
		want     string // f.txt afterwards
		conflict bool
	}{
		{"elsewhere in the file", lines(10, map[int]string{1: "parent"}), lines(10, map[int]string{1: "parent", 9: "agent"}), false},
		{"the same line", lines(10, map[int]string{9: "parent"}), lines(10, map[int]string{9: "parent"}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, map[string]string{"f.txt": lines(10, nil)})
			tr := fork(t, r, "reasonix/s1/f1")
			write(t, filepath.Join(tr.Dir, "f.txt"), lines(10, map[int]string{9: "agent"}))
			c := commit(t, r, tr)
			calls := 0
			check := func(string) error {
				if calls++; calls == 1 {
					write(t, filepath.Join(r.Root, "f.txt"), tc.parent)
				}
				return nil
			}
			res := merge(t, r, tr, c, MergeOptions{Check: check})
			if got := read(t, filepath.Join(r.Root, "f.txt")); got != tc.want {
				t.Errorf("f.txt = %q, want %q", got, tc.want)
			}
			// A conflict can only come from a second round: the first merged cleanly.
			if tc.conflict != (res.Conflicts != nil) || res.Conflicts == nil && calls < 2 {
				t.Errorf("Merge = %+v after %d checks", res, calls)
			}
		})
	}
}

func TestMergeIgnoredFileInTheWay(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{".gitignore": "*.log\n", "a.txt": "a"})
	write(t, filepath.Join(r.Root, "out.log"), "the parent's own log")
	tr := fork(t, r, "reasonix/s1/f1")
	write(t, filepath.Join(tr.Dir, ".gitignore"), "")
	write(t, filepath.Join(tr.Dir, "out.log"), "the agent's")
	c := commit(t, r, tr)
	res := merge(t, r, tr, c, MergeOptions{})
	if !slices.Equal(res.Conflicts, []string{"out.log"}) || res.Files != nil {
		t.Errorf("Merge = %+v, want a conflict on out.log", res)
	}
	if got := read(t, filepath.Join(r.Root, "out.log")) + read(t, filepath.Join(r.Root, ".gitignore")); got != "the parent's own log*.log\n" {
		t.Errorf("working tree changed: %q", got)
	}
}

func TestMergeCheckRefuses(t *testing.T) {
	t.Parallel()
	for name, check := range map[string]func(string) error{
		"error": func(p string) error {
			if p == ".reasonix/trust.json" {
				return errors.New("trust-bearing")
			}
			return nil
		},
		"panic": func(p string) error {
			if p == ".reasonix/trust.json" {
				panic("check broke")
			}
			return nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, map[string]string{"a.txt": "a"})
			tr := fork(t, r, "reasonix/s1/f1")
			write(t, filepath.Join(tr.Dir, ".reasonix/trust.json"), "{}")
			write(t, filepath.Join(tr.Dir, "a.txt"), "edited")
			res := merge(t, r, tr, commit(t, r, tr), MergeOptions{Check: check})
			if !slices.Equal(res.Conflicts, []string{".reasonix/trust.json"}) || res.Files != nil {
				t.Errorf("Merge = %+v, want the refused path as the only conflict", res)
			}
			absentFile(t, filepath.Join(r.Root, ".reasonix"))
			if got := read(t, filepath.Join(r.Root, "a.txt")); got != "a" {
				t.Errorf("a.txt = %q: written despite the conflict", got)
			}
		})
	}
}
