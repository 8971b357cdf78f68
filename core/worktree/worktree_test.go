package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/testenv"
)

// TestMain keeps the machine's git config out of every git this package
// and its tests run: an empty global config, no system config, and a HOME
// of its own.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "worktree-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	extraEnv = []string{"HOME=" + home, "GIT_CONFIG_GLOBAL=" + cfg, "GIT_CONFIG_NOSYSTEM=1"}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// gitT runs git in dir with the tests' environment and a test identity,
// and returns its trimmed stdout.
func gitT(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	return gitIn(tb, dir, "", args...)
}

// gitIn is gitT with input on stdin.
func gitIn(tb testing.TB, dir, input string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(input)
	cmd.Env = append(env(gitCmd{}), "GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@localhost",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@localhost")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// newRepo makes a repository holding files in one commit and returns it
// as Find sees it.
func newRepo(tb testing.TB, files map[string]string) *Repo {
	tb.Helper()
	testenv.Need(tb, "git")
	root := tb.TempDir()
	gitT(tb, root, "init", "-q", "-b", "main")
	testenv.WriteTree(tb, root, files)
	gitT(tb, root, "add", "-A")
	gitT(tb, root, "commit", "-q", "--allow-empty", "-m", "init")
	r, err := Find(context.Background(), root)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// fork snapshots r and adds a worktree on branch from it, under a
// directory of the test's own.
func fork(tb testing.TB, r *Repo, branch string) *Tree {
	tb.Helper()
	ctx := context.Background()
	snap, err := r.Snapshot(ctx, "")
	if err != nil {
		tb.Fatal(err)
	}
	return addAt(tb, r, branch, snap)
}

func addAt(tb testing.TB, r *Repo, branch, commit string) *Tree {
	tb.Helper()
	t, err := r.Add(context.Background(), filepath.Join(tb.TempDir(), "wt", "tree"), branch, commit)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// commit commits t and fails the test when nothing changed.
func commit(tb testing.TB, r *Repo, t *Tree) string {
	tb.Helper()
	c, changed, err := r.Commit(context.Background(), t, "work")
	if err != nil {
		tb.Fatal(err)
	}
	if len(changed) == 0 {
		tb.Fatal("Commit found no change")
	}
	return c
}

func write(tb testing.TB, path, text string) {
	tb.Helper()
	testenv.WriteFile(tb, path, text, 0o644)
}

func read(tb testing.TB, path string) string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

func absentFile(tb testing.TB, path string) {
	tb.Helper()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		tb.Errorf("%s exists (or cannot be checked: %v)", path, err)
	}
}

// lines is n numbered lines, with the ones in edits replaced.
func lines(n int, edits map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if e, ok := edits[i]; ok {
			b.WriteString(e + "\n")
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	return b.String()
}

// treeFiles lists the paths in commit, each with its mode and content.
func treeFiles(tb testing.TB, dir, commit string) map[string]string {
	tb.Helper()
	got := map[string]string{}
	for _, l := range strings.Split(gitT(tb, dir, "ls-tree", "-r", commit), "\n") {
		if l == "" {
			continue
		}
		meta, path, _ := strings.Cut(l, "\t")
		got[path] = strings.Fields(meta)[0] + " " + gitT(tb, dir, "cat-file", "blob", strings.Fields(meta)[2])
	}
	return got
}

func TestFind(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"sub/a.txt": "a"})
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(r.Root, "sub"), link); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{r.Root, filepath.Join(r.Root, "sub"), link} {
		got, err := Find(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if got.Root != r.Root || got.GitDir != filepath.Join(r.Root, ".git") {
			t.Errorf("Find(%s) = %+v, want Root %s", dir, got, r.Root)
		}
	}
	bare := t.TempDir()
	gitT(t, bare, "init", "-q", "--bare")
	for name, dir := range map[string]string{"outside": t.TempDir(), "inside .git": r.GitDir, "bare": bare} {
		if _, err := Find(context.Background(), dir); !errors.Is(err, ErrNotRepo) {
			t.Errorf("%s: Find = %v, want ErrNotRepo", name, err)
		}
	}
}

func TestSnapshot(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{
		".gitignore": "*.log\n", "keep.txt": "keep", "staged.txt": "old", "unstaged.txt": "old",
		"deleted.txt": "x", "rm.txt": "x",
	})
	ctx := context.Background()
	write(t, filepath.Join(r.Root, "forced.log"), "tracked although ignored")
	gitT(t, r.Root, "add", "-f", "forced.log")
	gitT(t, r.Root, "commit", "-q", "-m", "forced")
	write(t, filepath.Join(r.Root, "forced.log"), "changed")
	write(t, filepath.Join(r.Root, "staged.txt"), "staged")
	gitT(t, r.Root, "add", "staged.txt")
	write(t, filepath.Join(r.Root, "unstaged.txt"), "unstaged")
	write(t, filepath.Join(r.Root, "new/untracked.txt"), "untracked")
	write(t, filepath.Join(r.Root, "debug.log"), "ignored")
	if err := os.Remove(filepath.Join(r.Root, "deleted.txt")); err != nil {
		t.Fatal(err)
	}
	gitT(t, r.Root, "rm", "-q", "rm.txt")
	before := repoState(t, r)
	head := gitT(t, r.Root, "rev-parse", "HEAD")

	snap, err := r.Snapshot(ctx, "refs/reasonix/snapshots/s1/f1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		".gitignore": "100644 *.log", "keep.txt": "100644 keep", "staged.txt": "100644 staged",
		"unstaged.txt": "100644 unstaged", "new/untracked.txt": "100644 untracked", "forced.log": "100644 changed",
	}
	if got := treeFiles(t, r.Root, snap); !maps.Equal(got, want) {
		t.Errorf("snapshot holds %v, want %v", got, want)
	}
	if got := gitT(t, r.Root, "rev-parse", snap+"^"); got != head {
		t.Errorf("snapshot parent %s, want HEAD %s", got, head)
	}
	if got := gitT(t, r.Root, "rev-parse", "refs/reasonix/snapshots/s1/f1"); got != snap {
		t.Errorf("ref points at %s, want %s", got, snap)
	}
	if after := repoState(t, r); after != before {
		t.Errorf("Snapshot changed the repository:\nbefore %s\nafter  %s", before, after)
	}
	for _, bad := range []string{"refs/heads/main", "snap", "refs/reasonix/a..b"} {
		if _, err := r.Snapshot(ctx, bad); err == nil {
			t.Errorf("Snapshot(%q) succeeded", bad)
		}
	}
}

func TestSnapshotNoCommits(t *testing.T) {
	t.Parallel()
	testenv.Need(t, "git")
	root := t.TempDir()
	gitT(t, root, "init", "-q")
	write(t, filepath.Join(root, "a.txt"), "a")
	r, err := Find(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := r.Snapshot(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, root, "rev-list", "--parents", "-n1", snap); got != snap {
		t.Errorf("snapshot has parents: %s", got)
	}
	if got := treeFiles(t, root, snap); !maps.Equal(got, map[string]string{"a.txt": "100644 a"}) {
		t.Errorf("snapshot holds %v", got)
	}
	absentFile(t, filepath.Join(r.GitDir, "index"))
}

// repoState is what Snapshot and Merge must leave alone: the real index
// (bytes and mtime), HEAD and every branch.
func repoState(tb testing.TB, r *Repo) string {
	tb.Helper()
	idx := filepath.Join(r.GitDir, "index")
	info, err := os.Stat(idx)
	if err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("index %x %v HEAD %s branches %s", read(tb, idx), info.ModTime().UnixNano(),
		read(tb, filepath.Join(r.GitDir, "HEAD")), gitT(tb, r.Root, "for-each-ref", "refs/heads/"))
}
