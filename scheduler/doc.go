// Package scheduler decides which subagent tasks of a session may run. It is
// the admission policy behind the task, fleet and parallel_tasks tools: a
// pure, deterministic type that owns no goroutines, reads no clock and does
// no I/O. Callers pass the current time into every operation and apply the
// decisions it returns; the scheduler actor in package actors is the only
// intended caller, so a Queue is not safe for concurrent use.
//
// Nodes. A task runs on a node: the local process (named "", with
// Config.MaxRunning slots, possibly set to zero later) or a worker added
// with SetNode. Each node holds at most its Slots tasks, so the run cap is
// the sum of the up nodes' slots. A reader may run on any up node; a
// writer only on one whose write paths cover all its claims, and the local
// node covers everything. Among the eligible nodes with a free slot a
// writer goes to the one with the longest covering write path, then the
// most free slots; a reader to the most free slots; ties go to the local
// node, then to the worker added first. A down node takes no new task but
// keeps the tasks placed on it until the caller requeues or finishes them.
//
// Caps. At most Config.MaxWriters running tasks are writers, on all nodes
// together. A writer declares the workspace
// paths it may modify; a writer with no paths reserves the whole workspace.
// Two writers conflict when a path of one equals, contains or lies under a
// path of the other, comparing whole path components, so "a/b" covers
// "a/b/c.go" but not "a/bc". Conflicting writers never run at the same
// time, wherever they run. Readers never conflict with anything.
//
// Order. Next admits queued tasks in submission order, skipping a task that
// cannot start now instead of stopping at it: a reader only waits for a run
// slot, so readers are never held up by a waiting writer, and a writer may
// start ahead of an earlier writer that is blocked by the writer cap, by a
// conflict or by the lack of a node for it. To keep that from starving
// anyone, each waiting writer counts
// the later writers conflicting with it that started first; once the count
// reaches MaxPasses the writer holds its paths, and no later writer that
// conflicts with it starts before it does. Readers keep flowing past it.
// So no task is overtaken without limit: nothing overtakes a reader, and at
// most MaxPasses conflicting writers overtake a writer. As long as running
// tasks keep finishing, every queued task starts: if each runs for at most
// d and the caller calls Next after every Finish, a task with k tasks ahead
// of it at submission waits at most (k+1)·(MaxPasses+2)·d. That bound
// assumes the nodes stay as they are: a writer whose only covering node is
// down waits until it is back, and if it already holds its paths, later
// writers conflicting with it wait too.
//
// Attempts. When a worker is lost, the caller hands each running task on
// it back with Requeue: it returns to the queue at its submission position
// and its next start is its next attempt. After MaxAttempts starts Requeue
// refuses (ErrAttempts) and the caller ends the task with Finish.
//
// Ending. Every task accepted by Submit ends exactly once, and the call that
// ends it says so (Requeue is not an end):
//
//   - Cancel of a queued task, or CancelFleet listing it in Dropped, ends it
//     at once with OutcomeCancelled.
//   - Cancel of a running task, CancelFleet listing it in Stopping, and
//     Expired listing it once its deadline has passed, only mark it
//     stopping. The task keeps its slots, because its subagent may still be
//     writing, until the caller has stopped it and calls Finish.
//   - Finish ends a running or stopping task, frees its slots and reports
//     the outcome: OutcomeFinished, or the cancel or expiry that stopped it.
//
// Finish and Cancel fail on an ended task, so a second Finish cannot release
// a slot twice. Write paths are normalised against Config.Root at
// Submit; a path escaping the root is rejected there. Paths are compared as
// text: symbolic links are not resolved and case is significant.
//
// Replay rebuilds a fleet from its journal (core/journal): the result of
// each finished task exactly once, the tasks still pending (a task whose
// last start was followed by a requeue record counts as queued, not as
// interrupted), and a fresh Queue holding the ones to run again.
package scheduler
