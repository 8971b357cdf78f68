// Package scheduler decides which subagent tasks of a session may run. It is
// the admission policy behind the task, fleet and parallel_tasks tools: a
// pure, deterministic type that owns no goroutines, reads no clock and does
// no I/O. Callers pass the current time into every operation and apply the
// decisions it returns; the scheduler actor in package actors is the only
// intended caller, so a Queue is not safe for concurrent use.
//
// Caps. At most Config.MaxRunning tasks hold a run slot and at most
// Config.MaxWriters of them are writers. A writer declares the workspace
// paths it may modify; a writer with no paths reserves the whole workspace.
// Two writers conflict when a path of one equals, contains or lies under a
// path of the other, comparing whole path components, so "a/b" covers
// "a/b/c.go" but not "a/bc". Conflicting writers never run at the same
// time. Readers never conflict with anything.
//
// Order. Next admits queued tasks in submission order, skipping a task that
// cannot start now instead of stopping at it: a reader only waits for a run
// slot, so readers are never held up by a waiting writer, and a writer may
// start ahead of an earlier writer that is blocked by the writer cap or by a
// conflict. To keep that from starving anyone, each waiting writer counts
// the later writers conflicting with it that started first; once the count
// reaches MaxPasses the writer holds its paths, and no later writer that
// conflicts with it starts before it does. Readers keep flowing past it.
// So no task is overtaken without limit: nothing overtakes a reader, and at
// most MaxPasses conflicting writers overtake a writer. As long as running
// tasks keep finishing, every queued task starts: if each runs for at most
// d and the caller calls Next after every Finish, a task with k tasks ahead
// of it at submission waits at most (k+1)·(MaxPasses+2)·d.
//
// Ending. Every task accepted by Submit ends exactly once, and the call that
// ends it says so:
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
// each finished task exactly once, the tasks still pending, and a fresh
// Queue holding the ones to run again.
package scheduler
