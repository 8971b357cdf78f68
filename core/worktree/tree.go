package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// admins holds a lock per git directory for git's records of its
// worktrees: git does not take one itself, and a `worktree add` that reads
// another's half-made record fails. Add and Remove change the records,
// Open and List read them; checking the files out, the slow part of Add,
// runs outside the lock, beside other worktrees' checkouts.
var admins sync.Map

func (r *Repo) admin() *sync.RWMutex {
	mu, _ := admins.LoadOrStore(r.GitDir, new(sync.RWMutex))
	return mu.(*sync.RWMutex)
}

// baseRefs is where Add records each branch's base commit, so a later
// process can find what the branch is to be merged against.
const baseRefs = "refs/reasonix/base/"

// Tree is one worktree made by Add.
type Tree struct {
	Dir    string // the worktree's directory ("" once it has been removed)
	Branch string // short branch name, e.g. reasonix/s1/f1.2
	Base   string // the commit it was created from (the snapshot)
	admin  string // its admin dir, <GitDir>/worktrees/<name>
}

// cmd is how commands about t run: git dir and work tree named
// explicitly, because the agent owns t's `.git` pointer file.
func (t *Tree) cmd() gitCmd {
	return gitCmd{dir: t.Dir, gitDir: t.admin, workTree: t.Dir}
}

// Add creates a worktree at dir (which must not exist; its parents are
// created) on a new branch starting at commit, and records the base
// commit under refs/reasonix/base/<branch>. It refuses a branch that
// exists.
func (r *Repo) Add(ctx context.Context, dir, branch, commit string) (*Tree, error) {
	fail := func(err error) (*Tree, error) { return nil, fmt.Errorf("add worktree %s: %w", branch, err) }
	base, err := r.newBranch(ctx, commit, branch)
	if err != nil {
		return fail(err)
	}
	if dir, err = newDir(dir); err != nil {
		return fail(err)
	}
	t := &Tree{Dir: dir, Branch: branch, Base: base}
	mu := r.admin()
	mu.Lock()
	_, err = run(ctx, r.main(), "worktree", "add", "--quiet", "--no-checkout", "-b", branch, "--", dir, base)
	if err != nil {
		mu.Unlock()
		return fail(err)
	}
	if t.admin, err = r.adminFor(dir); err == nil {
		_, err = run(ctx, r.main(), "update-ref", baseRefs+branch, base)
	}
	mu.Unlock()
	if err == nil {
		// Writing the files is most of the cost of a worktree; parallel
		// checkout (one worker per core) cuts it by half or more.
		_, err = run(ctx, t.cmd(), "-c", "checkout.workers=0", "read-tree", "--reset", "-u", "HEAD")
	}
	if err != nil {
		if rmErr := r.Remove(ctx, t, true); rmErr != nil {
			err = errors.Join(err, rmErr)
		}
		return fail(err)
	}
	return t, nil
}

// newDir makes dir's parents and returns dir with them resolved, which is
// the form git records, so that adminFor can find it again.
func newDir(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s already exists", dir)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(dir))
	if err != nil {
		return "", err
	}
	return filepath.Join(parent, filepath.Base(dir)), nil
}

// newBranch resolves the commit a new branch is to start at and checks
// that branch is a valid name no branch has yet.
func (r *Repo) newBranch(ctx context.Context, commit, branch string) (string, error) {
	base, err := r.resolve(ctx, commit)
	if err != nil {
		return "", err
	}
	if err := r.checkBranch(ctx, branch); err != nil {
		return "", err
	}
	if _, err := run(ctx, r.main(), "rev-parse", "-q", "--verify", "refs/heads/"+branch); err == nil {
		return "", errors.New("branch exists")
	}
	return base, nil
}

// checkBranch accepts a valid branch name that cannot be read as an option.
func (r *Repo) checkBranch(ctx context.Context, branch string) error {
	if branch == "" || strings.HasPrefix(branch, "-") {
		return fmt.Errorf("invalid branch name %q", branch)
	}
	if _, err := run(ctx, r.main(), "check-ref-format", "refs/heads/"+branch); err != nil {
		return fmt.Errorf("invalid branch name %q: %w", branch, err)
	}
	return nil
}

// adminFor finds the admin directory git keeps for the worktree at dir by
// reading git's own records (each admin dir's gitdir file names the
// worktree's `.git`), never the worktree's pointer back.
func (r *Repo) adminFor(dir string) (string, error) {
	root := filepath.Join(r.GitDir, "worktrees")
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read worktree records: %w", err)
	}
	for _, e := range entries {
		admin := filepath.Join(root, e.Name())
		data, err := os.ReadFile(filepath.Join(admin, "gitdir"))
		if err != nil {
			continue // not a worktree record, or one being made or pruned
		}
		p := strings.TrimSpace(string(data))
		if !filepath.IsAbs(p) {
			p = filepath.Join(admin, p)
		}
		if filepath.Dir(filepath.Clean(p)) == dir {
			return admin, nil
		}
	}
	return "", fmt.Errorf("no worktree record for %s", dir)
}

// Open finds the worktree of branch (made by Add) from git's own records:
// `git worktree list` in the main repository and refs/reasonix/base. A
// branch whose worktree was removed gives a Tree with Dir "".
func (r *Repo) Open(ctx context.Context, branch string) (*Tree, error) {
	fail := func(err error) (*Tree, error) { return nil, fmt.Errorf("open worktree %s: %w", branch, err) }
	if err := r.checkBranch(ctx, branch); err != nil {
		return fail(err)
	}
	mu := r.admin()
	mu.RLock()
	defer mu.RUnlock()
	if _, err := r.resolve(ctx, "refs/heads/"+branch); err != nil {
		return fail(err)
	}
	base, err := r.resolve(ctx, baseRefs+branch)
	if err != nil {
		return fail(fmt.Errorf("no base recorded: %w", err))
	}
	dirs, err := r.worktrees(ctx)
	if err != nil {
		return fail(err)
	}
	t := &Tree{Branch: branch, Base: base}
	if dir := dirs[branch]; dir != "" {
		if t.admin, err = r.adminFor(dir); err != nil {
			return fail(err)
		}
		t.Dir = dir
	}
	return t, nil
}

// worktrees maps each branch checked out in a linked worktree whose
// directory still exists to that directory.
func (r *Repo) worktrees(ctx context.Context) (map[string]string, error) {
	out, err := run(ctx, r.main(), "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	dirs := map[string]string{}
	var dir string
	n := 0 // the first record is the main worktree, which is not one of ours
	for _, f := range splitZ(out) {
		if p, ok := strings.CutPrefix(f, "worktree "); ok {
			dir, n = p, n+1
		} else if b, ok := strings.CutPrefix(f, "branch refs/heads/"); ok && n > 1 {
			if info, err := os.Lstat(dir); err == nil && info.IsDir() {
				dirs[b] = dir
			}
		}
	}
	return dirs, nil
}

// Commit records everything in t's worktree that is not ignored as one
// commit whose parent is the branch's head, and moves the branch to it. It
// returns the commit and the paths that differ from t.Base (sorted,
// slash-separated). With no change at all it returns the branch head and
// no paths.
func (r *Repo) Commit(ctx context.Context, t *Tree, message string) (string, []string, error) {
	fail := func(err error) (string, []string, error) {
		return "", nil, fmt.Errorf("commit worktree %s: %w", t.Branch, err)
	}
	if t.Dir == "" || t.admin == "" {
		return fail(errors.New("worktree has no directory (removed, or not made by Add or Open)"))
	}
	head, err := r.resolve(ctx, "refs/heads/"+t.Branch)
	if err != nil {
		return fail(err)
	}
	tree, err := writeTree(ctx, t.cmd(), filepath.Join(t.admin, "index"), head)
	if err != nil {
		return fail(err)
	}
	out, err := run(ctx, r.main(), "rev-parse", head+"^{tree}")
	if err != nil {
		return fail(err)
	}
	if line(out) == tree {
		return head, nil, nil
	}
	commit, err := commitTree(ctx, r.main(), tree, message, head)
	if err != nil {
		return fail(err)
	}
	// The old value makes this fail rather than drop a commit someone
	// else put on the branch meanwhile.
	if _, err := run(ctx, r.main(), "update-ref", "-m", "reasonix commit", "refs/heads/"+t.Branch, commit, head); err != nil {
		return fail(err)
	}
	out, err = run(ctx, r.main(), "diff-tree", "-r", "-z", "--no-renames", "--name-only", t.Base, commit)
	if err != nil {
		return fail(err)
	}
	changed := splitZ(out)
	slices.Sort(changed)
	return commit, changed, nil
}

// Remove removes t's worktree (its directory and git's record of it) and,
// with dropBranch, its branch and base ref.
func (r *Repo) Remove(ctx context.Context, t *Tree, dropBranch bool) error {
	mu := r.admin()
	mu.Lock()
	defer mu.Unlock()
	if t.Dir != "" {
		if _, err := run(ctx, r.main(), "worktree", "remove", "--force", "--", t.Dir); err != nil {
			// git refuses a worktree whose `.git` pointer the agent broke.
			// Its directory goes anyway, but only when git's own record
			// says it is the worktree: Dir alone is not proof.
			if admin, aerr := r.adminFor(t.Dir); aerr != nil || admin != t.admin {
				return fmt.Errorf("remove worktree %s: %w", t.Branch, err)
			}
			if rmErr := os.RemoveAll(t.Dir); rmErr != nil {
				return fmt.Errorf("remove worktree %s: %w", t.Branch, errors.Join(err, rmErr))
			}
		}
	}
	if _, err := run(ctx, r.main(), "worktree", "prune"); err != nil {
		return fmt.Errorf("remove worktree %s: %w", t.Branch, err)
	}
	if dropBranch {
		for _, ref := range []string{"refs/heads/" + t.Branch, baseRefs + t.Branch} {
			if _, err := run(ctx, r.main(), "update-ref", "-d", ref); err != nil {
				return fmt.Errorf("remove worktree %s: %w", t.Branch, err)
			}
		}
	}
	return nil
}

// Kept is a branch under a prefix with what is known of it.
type Kept struct {
	Branch string // short branch name
	Head   string // the commit it points at
	Base   string // its recorded base, "" when Add did not make it
	Dir    string // its worktree's directory, "" when it has none
}

// List lists the branches whose short name starts with prefix (such as
// "reasonix/"), sorted by branch.
func (r *Repo) List(ctx context.Context, prefix string) ([]Kept, error) {
	out, err := run(ctx, r.main(), "for-each-ref", "--format=%(refname)%00%(objectname)", "refs/heads/", baseRefs)
	if err != nil {
		return nil, fmt.Errorf("list branches: %w", err)
	}
	heads, bases := map[string]string{}, map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, id, _ := strings.Cut(l, "\x00")
		if b, ok := strings.CutPrefix(name, "refs/heads/"); ok {
			heads[b] = id
		} else if b, ok := strings.CutPrefix(name, baseRefs); ok {
			bases[b] = id
		}
	}
	mu := r.admin()
	mu.RLock()
	dirs, err := r.worktrees(ctx)
	mu.RUnlock()
	if err != nil {
		return nil, err
	}
	var kept []Kept
	for b, h := range heads {
		if strings.HasPrefix(b, prefix) {
			kept = append(kept, Kept{Branch: b, Head: h, Base: bases[b], Dir: dirs[b]})
		}
	}
	slices.SortFunc(kept, func(a, b Kept) int { return strings.Compare(a.Branch, b.Branch) })
	return kept, nil
}
