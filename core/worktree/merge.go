package worktree

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// maxRounds is how many times Merge takes a new "ours" because the parent
// changed a file it was about to write, before it gives up.
const maxRounds = 3

// merging holds a mutex per Root: two writers that end together must not
// both find a file as their "ours" recorded it and then both write it.
// Another process can still race a Merge; the checks before each write
// are what protect the parent's work then.
var merging sync.Map

// MergeResult is what Merge did.
type MergeResult struct {
	Files     []string // paths written or removed in the working tree (sorted)
	Conflicts []string // paths that did not merge (sorted); when set, nothing was written
}

// MergeOptions adjusts a Merge.
type MergeOptions struct {
	// Check, when set, is asked about every path the merge would write or
	// remove (slash-separated, relative to Root); an error, or a panic,
	// refuses the path, which then counts as a conflict. Callers use it to
	// protect trust-bearing files.
	Check func(path string) error
}

// change is one path the merge changes relative to "ours", as diff-tree
// reports it. A mode of "000000" means absent on that side.
type change struct {
	path             string
	oldMode, newMode string
	oldID, newID     string
}

// absent is the mode diff-tree gives a side that lacks the path.
const absent = "000000"

// plan is one round's merge: the changes to apply, or why not.
type plan struct {
	changes   []change
	conflicts []string // paths git could not merge or that are refused
	stale     []change // paths the working tree no longer holds as ours recorded
}

// Merge brings the changes from base to commit into r's working tree: a
// three-way merge of what the working tree holds now ("ours", a private
// snapshot) and commit, against base. When it merges cleanly the
// difference between ours and the merged tree is applied to the working
// tree; when it does not, nothing is written and the conflicting paths are
// returned.
//
// A path is written or removed only while the working tree still holds
// exactly what ours recorded there; when the parent changed one meanwhile,
// Merge takes a new ours and merges again, up to maxRounds times. A path
// that differs from ours in two rounds running although ours did not
// change (an ignored file or a directory in the way, or content git
// converts) is a conflict. Merging a commit already merged finds nothing
// to do, which is also why a round that stops half-way (a file changed in
// the moment between the checks and its write) can simply be merged
// again; should that round then conflict, Merge returns an error along
// with the result, whose Files say what was already written.
func (r *Repo) Merge(ctx context.Context, base, commit string, o MergeOptions) (MergeResult, error) {
	fail := func(res MergeResult, err error) (MergeResult, error) {
		return res, fmt.Errorf("merge %s: %w", commit, err)
	}
	mu, _ := merging.LoadOrStore(r.Root, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	base, theirs, err := r.theirs(ctx, base, commit)
	if err != nil {
		return fail(MergeResult{}, err)
	}
	if theirs == "" {
		return MergeResult{}, nil
	}
	var written []string
	var lastStale []change
	for range maxRounds {
		ours, err := r.snapshot(ctx, base)
		if err != nil {
			return fail(result(written, nil), err)
		}
		p, err := r.plan(ctx, ours, theirs, o)
		if err != nil {
			return fail(result(written, nil), err)
		}
		for _, c := range p.stale {
			if slices.Contains(lastStale, c) {
				p.conflicts = append(p.conflicts, c.path)
			}
		}
		if len(p.conflicts) > 0 {
			res := result(written, p.conflicts)
			if len(written) > 0 {
				return fail(res, errors.New("the working tree changed while the merge was written: it is partly applied"))
			}
			return res, nil
		}
		if lastStale = p.stale; len(p.stale) > 0 {
			continue
		}
		done, err := r.apply(ctx, p.changes, &written)
		if err != nil {
			return fail(result(written, nil), err)
		}
		if done {
			return result(written, nil), nil
		}
	}
	return fail(result(written, nil), fmt.Errorf("the working tree kept changing under the merge; gave up after %d rounds", maxRounds))
}

// theirs resolves base and returns it with a commit of commit's tree whose
// only parent is base: ours gets the same parent, so git's merge base is
// exactly base (git 2.39 has no merge-tree --merge-base). Theirs is ""
// when commit changes nothing relative to base.
func (r *Repo) theirs(ctx context.Context, base, commit string) (string, string, error) {
	b, err := r.resolve(ctx, base)
	if err != nil {
		return "", "", err
	}
	c, err := r.resolve(ctx, commit)
	if err != nil {
		return "", "", err
	}
	out, err := run(ctx, r.main(), "rev-parse", b+"^{tree}", c+"^{tree}")
	if err != nil {
		return "", "", err
	}
	trees := strings.Fields(string(out))
	if len(trees) != 2 {
		return "", "", fmt.Errorf("unexpected rev-parse output %q", out)
	}
	if trees[0] == trees[1] {
		return b, "", nil
	}
	theirs, err := commitTree(ctx, r.main(), trees[1], "reasonix merge of "+c, b)
	return b, theirs, err
}

// result is a MergeResult with both lists sorted and without repeats.
func result(files, conflicts []string) MergeResult {
	sortUniq := func(s []string) []string {
		s = slices.Clone(s)
		slices.Sort(s)
		return slices.Compact(s)
	}
	return MergeResult{Files: sortUniq(files), Conflicts: sortUniq(conflicts)}
}

// plan merges ours and theirs and decides, without writing anything, what
// the round would change and whether it may.
func (r *Repo) plan(ctx context.Context, ours, theirs string, o MergeOptions) (plan, error) {
	out, err := run(ctx, r.main(), "merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", ours, theirs)
	fields := splitZ(out)
	if exitCode(err) == 1 && len(fields) > 1 {
		return plan{conflicts: fields[1:]}, nil
	}
	if err != nil || len(fields) == 0 {
		return plan{}, fmt.Errorf("merge-tree: %w (output %q)", err, out)
	}
	changes, err := r.diff(ctx, ours, fields[0])
	if err != nil {
		return plan{}, err
	}
	var p plan
	for _, c := range changes {
		if refusedPath(c.path) || c.newMode == "120000" || c.newMode == "160000" ||
			c.oldMode == "160000" || refuses(o.Check, c.path) {
			p.conflicts = append(p.conflicts, c.path)
		}
	}
	if len(p.conflicts) > 0 {
		return p, nil
	}
	deleting := map[string]bool{}
	for _, c := range changes {
		if c.newMode == absent {
			deleting[c.path] = true
		}
	}
	for _, c := range changes {
		switch v, err := r.verdict(c, deleting); {
		case err != nil:
			return plan{}, err
		case v == blocked:
			p.conflicts = append(p.conflicts, c.path)
		case v == stale:
			p.stale = append(p.stale, c)
		}
	}
	p.changes = changes
	return p, nil
}

// diff lists what differs from tree a to tree b, path by path.
func (r *Repo) diff(ctx context.Context, a, b string) ([]change, error) {
	out, err := run(ctx, r.main(), "diff-tree", "-r", "-z", "--no-renames", a, b)
	if err != nil {
		return nil, err
	}
	fields := splitZ(out)
	var changes []change
	for i := 0; i+1 < len(fields); i += 2 {
		f := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(f) != 5 {
			return nil, fmt.Errorf("unexpected diff-tree record %q", fields[i])
		}
		changes = append(changes, change{path: fields[i+1], oldMode: f[0], newMode: f[1], oldID: f[2], newID: f[3]})
	}
	return changes, nil
}

// refuses asks check about path; an error or a panic is a refusal.
func refuses(check func(string) error, path string) (refused bool) {
	if check == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			refused = true
		}
	}()
	return check(path) != nil
}

// hfsIgnorable drops the zero-width code points HFS+ ignores in names,
// which would make ".g\u200cit" name the same directory as ".git".
var hfsIgnorable = strings.NewReplacer("\u200c", "", "\u200d", "", "\u200e", "", "\u200f", "",
	"\u202a", "", "\u202b", "", "\u202c", "", "\u202d", "", "\u202e", "", "\u206a", "",
	"\u206b", "", "\u206c", "", "\u206d", "", "\u206e", "", "\u206f", "", "\ufeff", "")

// refusedPath reports a path Merge never writes: one with a component git
// would take for its own directory (in any case, or as NTFS and HFS+ spell
// it), or one that could climb out of Root.
func refusedPath(p string) bool {
	if p == "" || strings.ContainsAny(p, "\\\x00") {
		return true
	}
	for _, part := range strings.Split(p, "/") {
		name := strings.TrimRight(hfsIgnorable.Replace(part), " .")
		if part == "" || part == "." || part == ".." || strings.EqualFold(name, ".git") || strings.EqualFold(part, "git~1") {
			return true
		}
	}
	return false
}
