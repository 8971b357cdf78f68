package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCommitDistrustsDotGit has the agent rewrite its worktree's `.git`
// pointer and checks that Commit still records its files in the right
// repository, that a later process's Open finds the right admin dir, and
// that Remove still removes the worktree.
func TestCommitDistrustsDotGit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		pointer func(t *testing.T, other string) string // "" removes the file
	}{
		{"pointer elsewhere", func(*testing.T, string) string { return "gitdir: /somewhere/else\n" }},
		{"pointer to another repository", func(t *testing.T, other string) string {
			return "gitdir: " + filepath.Join(other, ".git") + "\n"
		}},
		{"pointer removed", func(*testing.T, string) string { return "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, map[string]string{"a.txt": "a"})
			ctx := context.Background()
			other := t.TempDir()
			gitT(t, other, "init", "-q")
			tr := fork(t, r, "reasonix/s1/f1")
			dotGit := filepath.Join(tr.Dir, ".git")
			if p := tc.pointer(t, other); p == "" {
				if err := os.Remove(dotGit); err != nil {
					t.Fatal(err)
				}
			} else {
				write(t, dotGit, p)
			}
			write(t, filepath.Join(tr.Dir, "a.txt"), "agent")
			opened, err := r.Open(ctx, tr.Branch)
			if err != nil || *opened != *tr {
				t.Fatalf("Open = %+v, %v; want %+v", opened, err, tr)
			}
			c, changed, err := r.Commit(ctx, opened, "work")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(changed, []string{"a.txt"}) || gitT(t, r.Root, "show", c+":a.txt") != "agent" {
				t.Errorf("Commit recorded %v", changed)
			}
			if got := gitT(t, r.Root, "rev-parse", "refs/heads/"+tr.Branch); got != c {
				t.Errorf("branch at %s, want %s", got, c)
			}
			if got := gitT(t, other, "for-each-ref") + gitT(t, other, "count-objects"); got != "0 objects, 0 kilobytes" {
				t.Errorf("the other repository was written: %s", got)
			}
			if err := r.Remove(ctx, tr, true); err != nil {
				t.Fatal(err)
			}
			absentFile(t, tr.Dir)
			if got := gitT(t, r.Root, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
				t.Errorf("worktree list after Remove:\n%s", got)
			}
		})
	}
}

// TestNoHooks installs hooks that leave a marker, shows they fire for git
// itself, and checks none fires for this package.
func TestNoHooks(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"f.txt": lines(5, nil)})
	ctx := context.Background()
	markers := t.TempDir()
	for _, h := range []string{"pre-commit", "post-commit", "post-checkout", "reference-transaction", "post-index-change", "post-merge"} {
		script := fmt.Sprintf("#!/bin/sh\ntouch '%s/%s'\n", markers, h)
		if err := os.WriteFile(filepath.Join(r.GitDir, "hooks", h), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, r.Root, "commit", "-q", "--allow-empty", "-m", "hooks fire")
	if fired, _ := os.ReadDir(markers); len(fired) == 0 {
		t.Fatal("the hooks did not fire for git commit: the test proves nothing")
	}
	if err := os.RemoveAll(markers); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(markers, 0o755); err != nil {
		t.Fatal(err)
	}
	snap, err := r.Snapshot(ctx, "refs/reasonix/snapshots/s1/f1")
	if err != nil {
		t.Fatal(err)
	}
	tr := addAt(t, r, "reasonix/s1/f1", snap)
	write(t, filepath.Join(tr.Dir, "f.txt"), lines(5, map[int]string{3: "agent"}))
	c := commit(t, r, tr)
	if res := merge(t, r, tr, c, MergeOptions{}); len(res.Files) != 1 {
		t.Errorf("Merge = %+v", res)
	}
	if err := r.Remove(ctx, tr, true); err != nil {
		t.Fatal(err)
	}
	if fired, _ := os.ReadDir(markers); len(fired) != 0 {
		t.Errorf("hooks ran: %v", fired)
	}
}

// TestMergeRefusesLinks has the agent commit a symlink and a submodule
// beside an ordinary edit: both are conflicts, and nothing is written.
func TestMergeRefusesLinks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		path string
		make func(t *testing.T, dir string)
	}{
		{"symlink", "evil", func(t *testing.T, dir string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "evil")); err != nil {
				t.Fatal(err)
			}
		}},
		{"submodule", "sub", func(t *testing.T, dir string) {
			sub := filepath.Join(dir, "sub")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			gitT(t, sub, "init", "-q")
			gitT(t, sub, "commit", "-q", "--allow-empty", "-m", "nested")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, map[string]string{"a.txt": "a"})
			tr := fork(t, r, "reasonix/s1/f1")
			tc.make(t, tr.Dir)
			write(t, filepath.Join(tr.Dir, "a.txt"), "edited")
			res := merge(t, r, tr, commit(t, r, tr), MergeOptions{})
			if !slices.Equal(res.Conflicts, []string{tc.path}) || res.Files != nil {
				t.Errorf("Merge = %+v, want a conflict on %s only", res, tc.path)
			}
			absentFile(t, filepath.Join(r.Root, tc.path))
			if got := read(t, filepath.Join(r.Root, "a.txt")); got != "a" {
				t.Errorf("a.txt = %q: written despite the conflict", got)
			}
		})
	}
}

// TestMergeSymlinkedParent replaces a directory the merge writes into
// with a symlink to outside Root, before the merge and while it runs.
func TestMergeSymlinkedParent(t *testing.T) {
	t.Parallel()
	for _, during := range []bool{false, true} {
		t.Run(fmt.Sprintf("during=%v", during), func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, map[string]string{"dir/a.txt": "a\n", "b.txt": "b\n"})
			outside := t.TempDir()
			write(t, filepath.Join(outside, "a.txt"), "a\n")
			tr := fork(t, r, "reasonix/s1/f1")
			write(t, filepath.Join(tr.Dir, "dir/a.txt"), "agent\n")
			write(t, filepath.Join(tr.Dir, "dir/new.txt"), "new\n")
			write(t, filepath.Join(tr.Dir, "b.txt"), "agent\n")
			c := commit(t, r, tr)
			swap := func() {
				if err := os.RemoveAll(filepath.Join(r.Root, "dir")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, filepath.Join(r.Root, "dir")); err != nil {
					t.Fatal(err)
				}
			}
			var o MergeOptions
			if during {
				swapped := false
				o.Check = func(string) error {
					if !swapped {
						swap()
						swapped = true
					}
					return nil
				}
			} else {
				swap()
			}
			res := merge(t, r, tr, c, o)
			if !slices.Contains(res.Conflicts, "dir/a.txt") || res.Files != nil {
				t.Errorf("Merge = %+v, want a conflict on dir/a.txt and nothing written", res)
			}
			if got := read(t, filepath.Join(outside, "a.txt")); got != "a\n" {
				t.Errorf("outside a.txt = %q", got)
			}
			absentFile(t, filepath.Join(outside, "new.txt"))
			if got := read(t, filepath.Join(r.Root, "b.txt")); got != "b\n" {
				t.Errorf("b.txt = %q: written despite the conflict", got)
			}
		})
	}
}

// TestMergeRefusesDotGitPath merges a commit, made by hand as git's own
// checks would not let an agent's Commit make it, that writes into a
// `.git` directory.
func TestMergeRefusesDotGitPath(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"a.txt": "a"})
	tr := fork(t, r, "reasonix/s1/f1")
	blob := gitIn(t, r.Root, "#!/bin/sh\n", "hash-object", "-w", "--stdin")
	tree := gitIn(t, r.Root, "100755 blob "+blob+"\tpost-checkout\n", "mktree")
	for _, name := range []string{"hooks", ".git", "sub"} {
		tree = gitIn(t, r.Root, "040000 tree "+tree+"\t"+name+"\n", "mktree")
	}
	top := gitT(t, r.Root, "ls-tree", tr.Base) + "\n" + gitT(t, r.Root, "ls-tree", tree) + "\n"
	c := gitT(t, r.Root, "commit-tree", "-p", tr.Base, "-m", "evil", gitIn(t, r.Root, top, "mktree"))
	res := merge(t, r, tr, c, MergeOptions{})
	if !slices.Equal(res.Conflicts, []string{"sub/.git/hooks/post-checkout"}) || res.Files != nil {
		t.Errorf("Merge = %+v, want the .git path refused", res)
	}
	absentFile(t, filepath.Join(r.Root, "sub"))
}

func TestRefusedPath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"a.txt": false, "dir/a.txt": false, ".gitignore": false, ".github/x": false, "a.git/b": false,
		".git": true, ".git/config": true, "sub/.git/hooks/x": true, ".GIT/config": true, "sub/.Git": true,
		".git./x": true, ".git /x": true, "git~1/config": true, ".g\u200cit/x": true,
		"": true, "/abs": true, "a//b": true, "../up": true, "a/../b": true, "./a": true, `a\b`: true,
	} {
		if got := refusedPath(p); got != want {
			t.Errorf("refusedPath(%q) = %v, want %v", p, got, want)
		}
	}
}
