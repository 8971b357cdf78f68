// Package history searches what earlier sessions said: the saved session
// transcripts and the compaction archives, through a full-text index.
//
// The JSONL files are the source of truth. The index, an SQLite FTS5
// database at <home>/index/history.db, is derived from them and can be
// thrown away and rebuilt at any time (Reindex). It holds one row per
// message (its text, role, session, source and time) and, per file, how
// many bytes of it are indexed. Files only grow by appending, so keeping
// the index current is cheap: Sync stats the files of a scope and indexes
// the complete lines appended since the last look; a file that shrank or
// was replaced is indexed again from the start. Search syncs its scope
// first, so it never answers from a stale index and never rereads a file
// that has not changed. A line without its newline is an append still in
// progress and waits for the next sync.
//
// Being derived, a damaged index is never an error the user must mend:
// SearchHome and ReindexHome, which the tool and the commands use, move an
// index that SQLite finds damaged aside (to history.db.damaged) and work
// on a new one, once, and say so in a Repair.
//
// Several processes may share the index: it runs in WAL mode with a busy
// timeout, and every file is indexed inside a write transaction that
// rechecks what is already indexed, so two processes never index the same
// bytes twice.
//
// Search ranks matches with BM25 and keeps only hits that score at least
// FloorRatio of the best one, which drops the long tail of messages that
// share nothing with the query but a common word. Scoring is the costly
// part, so a search scores a bounded number of candidates: they are
// chosen by the query's rarer terms, common terms only add to their
// scores, and words in a large share of all messages are ignored (see
// rankBudget). A hit's Ref names its file and message ordinal; Around
// reads the file itself and returns the messages around that ordinal.
//
// The package also registers the read-only built-in tool "history", which
// exposes search and around to the model.
package history
