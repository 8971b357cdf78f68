// Package journal is the durable record of fleets: every input the
// scheduler acts on (a fleet submitted, a task started, a task finished
// with its result, a running task requeued after its worker was lost, a
// cancellation, an expiry, the fleet's reply) is
// appended, in its own synced SQLite transaction, before the scheduler
// applies it. Replaying a fleet's records (scheduler.Replay) rebuilds its
// queue after the process died, so finished tasks keep their results and
// are never run again.
//
// The database lives under the reasonix home (Path), in WAL mode so that
// `reasonix fleet list` and `status` read while a run writes. Records are
// opaque JSON to this package; their meaning belongs to the scheduler.
// Check finds what a harmed or edited file did to a fleet's records (a
// record of no known kind, a payload that is not JSON, records missing),
// so that readers report damage as damage and use what is intact.
package journal
