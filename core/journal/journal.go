package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// Path is the journal database of a reasonix home.
func Path(home string) string { return filepath.Join(home, "state", "fleets.db") }

// busyTimeoutMS lets processes that share the database take turns.
const busyTimeoutMS = 10_000

// Record kinds, the scheduler's inputs.
const (
	KindSubmit = "submit"
	KindStart  = "start"
	KindFinish = "finish"
	KindCancel = "cancel"
	KindExpire = "expire"
	KindReply  = "reply"
	// KindRequeue records that a running task lost its attempt (its worker
	// went away) and is queued again. Its payload is the caller's; the
	// fleet writes {"worker", "attempt", "why"}: the node the attempt ran
	// on, the number of the attempt that was lost, and why.
	KindRequeue = "requeue"
	// KindMessage records a message one of the fleet's tasks sent to
	// the fleet's submitter (send_message to "parent"), written before it
	// is passed on, so that one the submitter never read can still reach
	// it after a crash. Its payload is the caller's; the fleet writes
	// {"id", "from", "name", "text"}.
	KindMessage = "message"
	// KindWorktree records the git worktree a worktree writer was given,
	// before it starts; KindMerge what became of its changes once they
	// were merged (or kept), after its finish record, whose result says
	// the merge is pending. Payloads are the caller's; the fleet writes
	// {"branch", "dir", "base"} and an event.Merge.
	KindWorktree = "worktree"
	KindMerge    = "merge"
)

// Record is one journalled input of a fleet.
type Record struct {
	// Fleet is the fleet's key, "<session>/<fleet id>".
	Fleet string `json:"fleet"`
	// Seq numbers a fleet's records from 1; Append assigns it.
	Seq  int64  `json:"seq"`
	Kind string `json:"kind"`
	// Task is the task the record is about; empty for a whole fleet.
	Task string    `json:"task,omitempty"`
	At   time.Time `json:"at"`
	// Data is the record's payload (a submit's tasks, a finish's result).
	Data json.RawMessage `json:"data,omitempty"`
}

// Fleet summarises one journalled fleet.
type Fleet struct {
	Key     string
	Created time.Time
	Updated time.Time
	Records int
	// Replied says the fleet's result was delivered to its caller.
	Replied bool
}

// Journal is an open journal database, safe for concurrent use.
type Journal struct {
	db *sql.DB
}

// Open opens (creating it when missing) the journal of a reasonix home.
func Open(ctx context.Context, home string) (*Journal, error) {
	if home == "" {
		return nil, errors.New("open fleet journal: no reasonix home")
	}
	return OpenPath(ctx, Path(home))
}

// OpenPath opens the journal database at path.
func OpenPath(ctx context.Context, path string) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open fleet journal: %w", err)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open fleet journal: %w", err)
	}
	// One connection: appends are serialised anyway, and it keeps each
	// statement inside its transaction.
	db.SetMaxOpenConns(1)
	const schema = `CREATE TABLE IF NOT EXISTS records (
		fleet TEXT NOT NULL,
		seq   INTEGER NOT NULL,
		kind  TEXT NOT NULL,
		task  TEXT NOT NULL DEFAULT '',
		at    INTEGER NOT NULL,
		data  TEXT,
		PRIMARY KEY (fleet, seq)
	) WITHOUT ROWID`
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return nil, errors.Join(fmt.Errorf("open fleet journal %s: %w", path, err), db.Close())
	}
	return &Journal{db: db}, nil
}

// dsn is the driver's URI for path: WAL so readers never wait for the
// writer, synchronous FULL so a committed record survives power loss, and
// BEGIN IMMEDIATE so an append holds the write lock from its first read.
func dsn(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeoutMS))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	q.Set("_txlock", "immediate")
	return (&url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}).String()
}

// Close closes the database.
func (j *Journal) Close() error {
	if err := j.db.Close(); err != nil {
		return fmt.Errorf("close fleet journal: %w", err)
	}
	return nil
}

// Append writes r as the fleet's next record, in one transaction that is
// synced before Append returns, and returns its sequence number.
func (j *Journal) Append(ctx context.Context, r Record) (int64, error) {
	seqs, err := j.AppendAll(ctx, []Record{r})
	if err != nil {
		return 0, err
	}
	return seqs[0], nil
}

// AppendAll writes rs, each as the next record of its fleet, in order, in
// one transaction that is synced before it returns: all of them or none.
// It returns their sequence numbers. One sync for many records is what
// lets a scheduler start a whole wave of tasks at the cost of one.
func (j *Journal) AppendAll(ctx context.Context, rs []Record) ([]int64, error) {
	for i := range rs {
		r := &rs[i]
		if r.Fleet == "" || r.Kind == "" {
			return nil, errors.New("append fleet record: fleet and kind are required")
		}
		// A payload that is not JSON would read back as damage (Check).
		if len(r.Data) > 0 && !json.Valid(r.Data) {
			return nil, fmt.Errorf("append fleet record: %s of fleet %s: %w", r.Kind, r.Fleet, ErrNotJSON)
		}
		if r.At.IsZero() {
			r.At = time.Now()
		}
	}
	tx, err := j.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("append fleet record: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	next := map[string]int64{}
	seqs := make([]int64, len(rs))
	for i, r := range rs {
		seq, ok := next[r.Fleet]
		if !ok {
			if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM records WHERE fleet = ?`, r.Fleet).Scan(&seq); err != nil {
				return nil, fmt.Errorf("append fleet record: %w", err)
			}
		}
		seq++
		next[r.Fleet] = seq
		var data any
		if len(r.Data) > 0 {
			data = string(r.Data)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO records (fleet, seq, kind, task, at, data) VALUES (?, ?, ?, ?, ?, ?)`,
			r.Fleet, seq, r.Kind, r.Task, r.At.UnixNano(), data); err != nil {
			return nil, fmt.Errorf("append fleet record: %w", err)
		}
		seqs[i] = seq
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("append fleet record: %w", err)
	}
	return seqs, nil
}

// Records returns a fleet's records in order.
func (j *Journal) Records(ctx context.Context, fleet string) ([]Record, error) {
	rows, err := j.db.QueryContext(ctx, `SELECT seq, kind, task, at, data FROM records WHERE fleet = ? ORDER BY seq`, fleet)
	if err != nil {
		return nil, fmt.Errorf("read fleet %s: %w", fleet, err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		r := Record{Fleet: fleet}
		var at int64
		var data sql.NullString
		if err := rows.Scan(&r.Seq, &r.Kind, &r.Task, &at, &data); err != nil {
			return nil, fmt.Errorf("read fleet %s: %w", fleet, err)
		}
		r.At = time.Unix(0, at)
		if data.Valid {
			r.Data = json.RawMessage(data.String)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read fleet %s: %w", fleet, err)
	}
	return out, nil
}

// Fleets lists the journalled fleets, newest first.
func (j *Journal) Fleets(ctx context.Context) ([]Fleet, error) {
	rows, err := j.db.QueryContext(ctx, `SELECT fleet, MIN(at), MAX(at), COUNT(*), SUM(kind = 'reply') FROM records GROUP BY fleet ORDER BY MIN(at) DESC, fleet`)
	if err != nil {
		return nil, fmt.Errorf("list fleets: %w", err)
	}
	defer rows.Close()
	var out []Fleet
	for rows.Next() {
		var f Fleet
		var created, updated int64
		var replied int
		if err := rows.Scan(&f.Key, &created, &updated, &f.Records, &replied); err != nil {
			return nil, fmt.Errorf("list fleets: %w", err)
		}
		f.Created, f.Updated, f.Replied = time.Unix(0, created), time.Unix(0, updated), replied > 0
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list fleets: %w", err)
	}
	return out, nil
}
