// Package session holds a conversation's transcript on disk; the
// transcript is the source of truth a session is resumed from.
//
// A transcript is a JSONL file: a header record, then one record per message
// in the order the session appended them. Each record is written with a
// single write call and ends in a newline, so a process killed mid-run
// leaves a file that Load reads up to the last complete message; a torn
// final record is dropped and reported as a Warning, not an error. The
// format is versioned so a later resume can read old files.
//
// Writing: Create (or Open, which does not wait for the disk) starts a new
// transcript; Reopen appends to an existing one, so a resumed session keeps
// one file. A Store holds an advisory lock, <path>.lock, until Close: a
// second Create or Reopen of the same transcript fails with ErrBusy while
// the holder lives. On Unix it is flock(2), which the kernel drops when
// the holder dies, so a stale lock is taken over; on Windows it is an
// unshared, delete-on-close file (best effort); elsewhere there is no lock.
//
// Resuming is Load, Repair, Reopen, then appending what Repair added:
//
//	h, msgs, torn, err := session.Load(path) // torn != nil: warn
//	msgs, added := session.Repair(msgs)      // close calls a kill left open
//	store, err := session.Reopen(path)       // ErrBusy if still running
//	for _, m := range added { store.Append(m) }
//
// Repair adds nothing to a list it already repaired, so the repair is
// recorded once however often a session is resumed. Loaded messages are
// the messages that were appended, field for field, so the next request
// repeats the bytes of the previous ones and the provider's prompt cache
// keeps hitting; the one exception is text that is not valid UTF-8, which
// JSON cannot hold and which comes back with U+FFFD in its place.
//
// List and Latest find the top-level sessions of a project directory
// (ProjectDir) for `reasonix sessions list` and --continue; subagent
// transcripts (Header.Subagent: a task's, with Parent set, or a profile's
// own run, KindSubagent) are left out. Latest is the session used last:
// the one whose transcript was written last, not the one started last.
package session
