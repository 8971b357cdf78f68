package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// bigRepo is a repository of 10,000 small files in 100 directories, in
// one commit.
func bigRepo(b *testing.B) *Repo {
	b.Helper()
	files := map[string]string{}
	for d := range 100 {
		for f := range 100 {
			files[fmt.Sprintf("d%02d/f%02d.txt", d, f)] = fmt.Sprintf("file %d of directory %d\n", f, d)
		}
	}
	return newRepo(b, files)
}

func BenchmarkSnapshot10k(b *testing.B) {
	r := bigRepo(b)
	write(b, filepath.Join(r.Root, "d00/f00.txt"), "changed\n")
	for b.Loop() {
		if _, err := r.Snapshot(context.Background(), ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWorktreeAdd10k times Add within the whole cycle of a writer:
// add, edit one file, commit, merge, remove.
func BenchmarkWorktreeAdd10k(b *testing.B) {
	benchCycle(b, true)
}

// BenchmarkCommitMerge10k times Commit and Merge within the same cycle.
func BenchmarkCommitMerge10k(b *testing.B) {
	benchCycle(b, false)
}

func benchCycle(b *testing.B, timeAdd bool) {
	r := bigRepo(b)
	ctx := context.Background()
	snap, err := r.Snapshot(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if timeAdd {
			b.StartTimer()
		}
		t, err := r.Add(ctx, filepath.Join(dir, fmt.Sprint(i)), fmt.Sprintf("bench/%d", i), snap)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		name := fmt.Sprintf("d%02d/f%02d.txt", i%100, i/100%100)
		if err := os.WriteFile(filepath.Join(t.Dir, filepath.FromSlash(name)), []byte("edited\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		if !timeAdd {
			b.StartTimer()
		}
		c, _, err := r.Commit(ctx, t, "bench")
		if err != nil {
			b.Fatal(err)
		}
		res, err := r.Merge(ctx, t.Base, c, MergeOptions{})
		if err != nil || len(res.Files) != 1 {
			b.Fatalf("Merge = %+v, %v", res, err)
		}
		b.StopTimer()
		if err := r.Remove(ctx, t, true); err != nil {
			b.Fatal(err)
		}
	}
}
