package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNotRepo is returned by Find for a directory that is not inside a git
// working tree (outside any repository, or inside a bare one or a .git).
var ErrNotRepo = errors.New("not inside a git working tree")

// ErrNoGit is returned when there is no git binary on PATH.
var ErrNoGit = errors.New("git is not on PATH")

// Repo is the git repository whose working tree is the parent's workspace.
// Make it with Find.
type Repo struct {
	Root   string // absolute top level of the main working tree (symlinks resolved)
	GitDir string // absolute common git directory (git rev-parse --git-common-dir, resolved)

	// ownDir is Root's own git directory: GitDir unless Root is itself a
	// linked worktree, whose HEAD and index live in its admin directory.
	ownDir string
}

// Find returns the repository whose working tree holds dir.
func Find(ctx context.Context, dir string) (*Repo, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("find repository: %w", ErrNoGit)
	}
	out, err := run(ctx, gitCmd{dir: dir}, "rev-parse", "--path-format=absolute",
		"--is-inside-work-tree", "--git-common-dir", "--absolute-git-dir", "--show-toplevel")
	fields := strings.Split(strings.TrimSpace(string(out)), "\n")
	var ge *gitError
	switch {
	case fields[0] == "false", errors.As(err, &ge) && strings.Contains(ge.stderr, "not a git repository"):
		return nil, fmt.Errorf("find repository in %s: %w", dir, ErrNotRepo)
	case err != nil:
		return nil, fmt.Errorf("find repository in %s: %w", dir, err)
	case len(fields) != 4:
		return nil, fmt.Errorf("find repository in %s: unexpected rev-parse output %q", dir, out)
	}
	var resolved [3]string
	for i, p := range fields[1:] {
		if resolved[i], err = filepath.EvalSymlinks(p); err != nil {
			return nil, fmt.Errorf("find repository in %s: %w", dir, err)
		}
	}
	return &Repo{GitDir: resolved[0], ownDir: resolved[1], Root: resolved[2]}, nil
}

// main is how commands about Root run: with its git dir and work tree
// named, so nothing in the environment or on the way up redirects them.
func (r *Repo) main() gitCmd {
	own := r.ownDir
	if own == "" {
		own = r.GitDir
	}
	return gitCmd{dir: r.Root, gitDir: own, workTree: r.Root}
}

// Snapshot commits the working tree as it is now — HEAD plus staged,
// unstaged and untracked-but-not-ignored files, deletions included —
// without touching the real index, HEAD, any branch or any file of the
// working tree, and points ref at it (a full ref name outside refs/heads,
// such as refs/reasonix/snapshots/s1/f1; "" means no ref). In a repository
// with no commits yet the snapshot has no parent. It returns the commit id.
func (r *Repo) Snapshot(ctx context.Context, ref string) (string, error) {
	if ref != "" {
		if err := r.checkRef(ctx, ref); err != nil {
			return "", fmt.Errorf("snapshot: %w", err)
		}
	}
	head, err := r.head(ctx)
	if err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	commit, err := r.snapshot(ctx, head)
	if err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	if ref != "" {
		if _, err := run(ctx, r.main(), "update-ref", "-m", "reasonix snapshot", ref, commit); err != nil {
			return "", fmt.Errorf("snapshot: %w", err)
		}
	}
	return commit, nil
}

// snapshot commits Root's working tree with parent ("" for none) and
// returns the commit.
func (r *Repo) snapshot(ctx context.Context, parent string) (string, error) {
	c := r.main()
	tree, err := writeTree(ctx, c, filepath.Join(c.gitDir, "index"), parent)
	if err != nil {
		return "", err
	}
	return commitTree(ctx, r.main(), tree, "reasonix snapshot", parent)
}

// writeTree records c's work tree in the object store through a private
// copy of the index at realIndex, so the real one is never written, and
// returns the tree. The copy keeps git's stat cache, so only files that
// changed are read; without an index to copy it starts from parent, so
// files that are tracked although ignored stay recorded.
func writeTree(ctx context.Context, c gitCmd, realIndex, parent string) (string, error) {
	tmp, err := os.MkdirTemp("", "reasonix-index-")
	if err != nil {
		return "", fmt.Errorf("private index: %w", err)
	}
	defer os.RemoveAll(tmp)
	c.index = filepath.Join(tmp, "index")
	copied, err := copyIndex(realIndex, c.index)
	if err != nil {
		return "", err
	}
	if !copied && parent != "" {
		if _, err := run(ctx, c, "read-tree", parent); err != nil {
			return "", err
		}
	}
	if _, err := run(ctx, c, "add", "-A"); err != nil {
		return "", err
	}
	out, err := run(ctx, c, "write-tree")
	if err != nil {
		return "", err
	}
	return line(out), nil
}

// copyIndex copies the index file src to dst, with src's modification
// time: git judges whether a cached stat is "racily clean" against the
// index file's own mtime, and a newer copy would make it trust stale
// entries. It reports false when there is no src.
func copyIndex(src, dst string) (bool, error) {
	data, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read index: %w", err)
	}
	info, err := os.Stat(src)
	if err != nil {
		return false, fmt.Errorf("read index: %w", err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		return false, fmt.Errorf("copy index: %w", err)
	}
	if err := os.Chtimes(dst, info.ModTime(), info.ModTime()); err != nil {
		return false, fmt.Errorf("copy index: %w", err)
	}
	return true, nil
}

// commitTree makes a commit of tree with the fixed identity and the given
// parents ("" entries are skipped) and returns it.
func commitTree(ctx context.Context, c gitCmd, tree, message string, parents ...string) (string, error) {
	args := []string{"commit-tree", "-F", "-"}
	for _, p := range parents {
		if p != "" {
			args = append(args, "-p", p)
		}
	}
	c.ident = true
	c.stdin = strings.NewReader(message + "\n")
	out, err := run(ctx, c, append(args, tree)...)
	if err != nil {
		return "", err
	}
	return line(out), nil
}

// head is the commit HEAD names, or "" in a repository with no commits.
func (r *Repo) head(ctx context.Context) (string, error) {
	out, err := run(ctx, r.main(), "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if exitCode(err) == 1 {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	return line(out), nil
}

// resolve returns the full id of the commit rev names.
func (r *Repo) resolve(ctx context.Context, rev string) (string, error) {
	out, err := run(ctx, r.main(), "rev-parse", "-q", "--verify", "--end-of-options", rev+"^{commit}")
	if exitCode(err) == 1 {
		return "", fmt.Errorf("no commit %q", rev)
	}
	if err != nil {
		return "", err
	}
	return line(out), nil
}

// checkRef accepts a well-formed full ref name outside refs/heads: a
// snapshot must never move a branch.
func (r *Repo) checkRef(ctx context.Context, ref string) error {
	if !strings.HasPrefix(ref, "refs/") || strings.HasPrefix(ref, "refs/heads/") {
		return fmt.Errorf("ref %q: want a full ref name outside refs/heads", ref)
	}
	if _, err := run(ctx, r.main(), "check-ref-format", ref); err != nil {
		return fmt.Errorf("ref %q is not a valid ref name: %w", ref, err)
	}
	return nil
}
