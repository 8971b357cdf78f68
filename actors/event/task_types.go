package event

import (
	"time"

	"reasonix/core/provider"
)

// TaskSpec is one subagent task as the task, fleet and parallel_tasks tools
// describe it. It is plain data so it can cross a process boundary when
// subagents move to worker hosts.
type TaskSpec struct {
	ID     string
	Prompt string
	// Profile names a subagent profile; empty means the general one.
	Profile string
	// Writer marks a task that may modify files; WritePaths are its claims
	// (empty for a writer: the whole workspace).
	Writer     bool
	WritePaths []string
	// Model and Effort are this call's overrides; the profile rules decide
	// the effective values.
	Model  string
	Effort string
	// Budget is this task's explicit ceilings; a dimension it leaves zero
	// gets an even share of what is left of FleetBudget when it starts.
	Budget Budget
	// FleetBudget is the ceiling of the whole call the task belongs to,
	// the same on each of its tasks.
	FleetBudget Budget
	// Name, when set, addresses the task in send_message, unique in its
	// session.
	Name string
	// Of and Continue make the task a follow-up turn of an agent that
	// ended: Of is that task's id and Continue its transcript, whose
	// conversation the follow-up goes on with (Prompt is the message it
	// answers). Follow-ups run in this process.
	Of       string
	Continue string
	// Isolation is how a writer is kept from its siblings: "" or
	// IsolationClaims (its write_paths, which overlapping writers wait
	// for) or IsolationWorktree (a git worktree of its own, merged back
	// when it ends). Workdir is that worktree's directory, set by the
	// scheduler when it made it: the task's file tools and bash are rooted
	// there.
	Isolation string
	Workdir   string
}

// The writer isolations (TaskSpec.Isolation).
const (
	IsolationClaims   = "claims"
	IsolationWorktree = "worktree"
)

// Merge is what became of a worktree task's changes.
type Merge struct {
	// Status is MergeMerged (in the parent's working tree), MergeConflict
	// (kept on Branch; the parent's files untouched), MergeKept (the task
	// did not end ok: kept on Branch, not merged) or MergeNone (it changed
	// nothing).
	Status string `json:"status"`
	// Branch is where the changes are (a kept one's, until dropped).
	Branch string `json:"branch,omitempty"`
	// Files are the paths merged, or for a kept task those it changed;
	// Conflicts the paths that did not merge.
	Files     []string `json:"files,omitempty"`
	Conflicts []string `json:"conflicts,omitempty"`
	// Error says why a merge could not be tried (the changes are kept).
	Error string `json:"error,omitempty"`
}

// The merge statuses (Merge.Status).
const (
	MergeMerged   = "merged"
	MergeConflict = "conflict"
	MergeKept     = "kept"
	MergeNone     = "unchanged"
	// MergePending is a journalled result whose merge had not happened
	// yet; a resume merges it.
	MergePending = "pending"
)

// TaskResult is how one task ended.
type TaskResult struct {
	TaskID string
	Status string
	// Text is the subagent's final answer (possibly partial when it did
	// not succeed).
	Text     string
	Error    string
	Steps    int
	Usage    provider.Usage
	Duration time.Duration
	// Turns counts the task's model requests and CacheHitPct the share of
	// its prompt tokens served from the provider's cache.
	Turns       int
	CacheHitPct float64
	// Cost is what the task's usage cost at its model's configured
	// price; zero when none is configured.
	Cost float64
	// Budget is the ceilings the task ran under (nil for none) and
	// OverBudget the one it reached: "tokens", "turns", "seconds" or
	// "cost".
	Budget     *Budget
	OverBudget string
	// Merge is what became of a worktree task's changes; nil for any
	// other task.
	Merge *Merge
	// Changes are a worktree task's changes as a worker sends them back,
	// to merge here; nil for a task that ran in this process.
	Changes *Changes
}

// Changes are what a writer changed in a worktree on a worker: Patch the
// binary-safe diff from the worktree's snapshot to its end, Files the
// paths it changes, Error why there is none.
type Changes struct {
	Patch []byte   `json:"patch,omitempty"`
	Files []string `json:"files,omitempty"`
	Error string   `json:"error,omitempty"`
}
