package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	// The pure-Go SQLite driver, registered as "sqlite"; it includes FTS5.
	_ "modernc.org/sqlite"
)

// schemaVersion is stored as the database's user_version. An index of
// another version is dropped and rebuilt: it is derived data.
const schemaVersion = 3

// busyTimeoutMS is how long a statement waits for another process's
// write transaction before failing. Sync commits in batches (see
// batchFiles), so a wait is normally milliseconds.
const busyTimeoutMS = 10_000

// Path is where the index of the Reasonix home lives.
func Path(home string) string { return filepath.Join(home, "index", "history.db") }

// Index is an open history index. It is meant for one call's work (open,
// sync, search, close) and is not safe for concurrent use; several
// Indexes, in one process or many, may share the database.
type Index struct {
	db   *sql.DB
	home string
	// budget is rankBudget; tests lower it.
	budget int
}

// Open opens the index of home, creating it (and <home>/index) when
// missing and rebuilding its tables when they are of another version.
func Open(ctx context.Context, home string) (*Index, error) {
	if home == "" {
		return nil, errors.New("open history index: no reasonix home")
	}
	path := Path(home)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open history index: %w", err)
	}
	// Processes that open a new index at once race to switch it to WAL,
	// which SQLite refuses with SQLITE_BUSY without waiting out the busy
	// timeout: such an open is tried again, a few times, a moment later.
	for try := 1; ; try++ {
		ix, err := openAt(ctx, home, path)
		if err == nil || !busy(err) || try == openTries {
			return ix, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(try) * 25 * time.Millisecond):
		}
	}
}

// openTries bounds the opens a busy database gets.
const openTries = 8

func openAt(ctx context.Context, home, path string) (*Index, error) {
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open history index: %w", err)
	}
	// One connection: the work of one call is sequential, and it keeps
	// every statement inside the transaction that is open.
	db.SetMaxOpenConns(1)
	ix := &Index{db: db, home: home, budget: rankBudget}
	if err := ix.migrate(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("open history index %s: %w", path, err), db.Close())
	}
	return ix, nil
}

// dsn is the driver's URI for path: WAL so readers never wait for the
// writer, a busy timeout so processes take turns at writing, and BEGIN
// IMMEDIATE so a write transaction holds the lock from its first
// statement (a deferred one that reads and then writes can fail at once
// with SQLITE_BUSY when another process wrote in between).
func dsn(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive letter
	}
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeoutMS))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	return (&url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}).String()
}

// Close closes the database.
func (ix *Index) Close() error {
	if err := ix.db.Close(); err != nil {
		return fmt.Errorf("close history index: %w", err)
	}
	return nil
}

// The messages table holds one row per message. Its rowid is the file's
// id in the high 32 bits and the message's ordinal in the low ones, so a
// file's rows are one rowid range, which FTS5 deletes without scanning.
// The scope column holds one token naming the message's source (see
// scopeToken): a project search is the query AND that token, which FTS5
// answers by intersecting lists instead of filtering every match. It has
// weight 0 in the ranking, so it never changes a score.
const schema = `
CREATE TABLE files (
	id      INTEGER PRIMARY KEY,
	path    TEXT NOT NULL UNIQUE,
	dir     TEXT NOT NULL,
	source  TEXT NOT NULL,
	archive INTEGER NOT NULL,
	session TEXT NOT NULL,
	started INTEGER NOT NULL,
	size    INTEGER NOT NULL,
	mtime   INTEGER NOT NULL,
	ident   TEXT NOT NULL,
	offset  INTEGER NOT NULL,
	ordinal INTEGER NOT NULL,
	tail    BLOB NOT NULL
);
CREATE INDEX files_dir ON files(dir);
CREATE TABLE dirs (
	dir    TEXT PRIMARY KEY,
	digest BLOB NOT NULL
);
CREATE VIRTUAL TABLE messages USING fts5(
	text,
	scope,
	role UNINDEXED,
	session UNINDEXED,
	source UNINDEXED,
	time UNINDEXED,
	tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO messages(messages, rank) VALUES ('rank', 'bm25(1.0, 0.0)');
`

// migrate creates the tables, or replaces tables of another version.
func (ix *Index) migrate(ctx context.Context) error {
	var v int
	if err := ix.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v == schemaVersion {
		return nil
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Another process may have migrated while this one waited for the lock.
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v == schemaVersion {
		return nil
	}
	if err := createTables(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

// createTables drops whatever tables exist and creates empty ones.
func createTables(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{"DROP TABLE IF EXISTS messages", "DROP TABLE IF EXISTS files", "DROP TABLE IF EXISTS dirs", schema,
		fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}
