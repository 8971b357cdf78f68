package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// MaxPatch caps what Patch returns: a worker sends its writer's changes in
// one message.
const MaxPatch = 32 << 20

// ErrPatch is wrapped by ApplyPatch's error when the patch does not apply
// to the commit it was asked to apply to.
var ErrPatch = errors.New("the patch does not apply")

// Patch is the diff from base to commit as git apply takes it, binary
// files included: full blob ids, so an apply elsewhere can fall back on a
// three-way merge where it knows the blobs; no renames, no colour, no
// external diff or text conversion the user's config may ask for.
func (r *Repo) Patch(ctx context.Context, base, commit string) ([]byte, error) {
	out, err := run(ctx, r.main(), "diff", "--binary", "--full-index", "--no-renames", "--no-color",
		"--no-ext-diff", "--no-textconv", "--end-of-options", base, commit, "--")
	if err != nil {
		return nil, fmt.Errorf("patch %s..%s: %w", base, commit, err)
	}
	if len(out) > MaxPatch {
		return nil, fmt.Errorf("patch %s..%s: %d bytes, over the %d a patch may have", base, commit, len(out), MaxPatch)
	}
	return out, nil
}

// ApplyPatch makes a commit of patch applied to the commit onto, in the
// object store alone (through a private index: no working tree is
// touched, the real index neither), and starts the new branch there with
// onto recorded as its base, as Add records it, so Open, List, Merge and
// Remove take it as a worktree's branch whose worktree is gone. A patch
// that does not apply, not even three-way, is an error wrapping ErrPatch,
// and nothing is made. It returns the commit.
func (r *Repo) ApplyPatch(ctx context.Context, onto, branch string, patch []byte) (string, error) {
	fail := func(err error) (string, error) { return "", fmt.Errorf("apply patch to %s: %w", branch, err) }
	base, err := r.newBranch(ctx, onto, branch)
	if err != nil {
		return fail(err)
	}
	dir, err := os.MkdirTemp("", "reasonix-apply-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	c := r.main()
	c.index = filepath.Join(dir, "index")
	if _, err := run(ctx, c, "read-tree", base); err != nil {
		return fail(err)
	}
	c.stdin = bytes.NewReader(patch)
	if _, err := run(ctx, c, "apply", "--cached", "--whitespace=nowarn", "-"); err != nil {
		c.stdin = bytes.NewReader(patch)
		if _, err3 := run(ctx, c, "apply", "--cached", "--3way", "--whitespace=nowarn", "-"); err3 != nil {
			return fail(fmt.Errorf("%w: %w", ErrPatch, err))
		}
	}
	c.stdin = nil
	out, err := run(ctx, c, "write-tree")
	if err != nil {
		return fail(err)
	}
	commit, err := commitTree(ctx, r.main(), line(out), "reasonix: "+branch, base)
	if err != nil {
		return fail(err)
	}
	// The zero old value makes the update fail on a branch made meanwhile.
	if _, err := run(ctx, r.main(), "update-ref", "refs/heads/"+branch, commit, ""); err != nil {
		return fail(err)
	}
	if _, err := run(ctx, r.main(), "update-ref", baseRefs+branch, base); err != nil {
		return fail(err)
	}
	return commit, nil
}
