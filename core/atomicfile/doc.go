// Package atomicfile replaces files so that a reader, or a crash, sees the
// old content or the new one and never a mix.
//
// Write puts the data in a temporary file in the target's directory (the
// only place a rename is guaranteed to be atomic), flushes it to disk, gives
// it its final permissions and renames it over the target; on Unix the
// directory is flushed too, so the rename itself survives a crash. Until the
// rename the temporary file is readable by its owner only, so a secret is
// never exposed, and on any failure it is removed. Callers resolve symlinks
// and create parent directories themselves: both are policy, and it differs
// between them.
package atomicfile
