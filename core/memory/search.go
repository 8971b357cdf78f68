package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"

	// The pure-Go SQLite driver ("sqlite"), whose FTS5 module ranks with
	// bm25(); the binary stays free of cgo.
	_ "modernc.org/sqlite"
)

const (
	// RelativeFloor is the fraction of the best hit's BM25 score another
	// hit needs to be kept. The best hit is always kept; a hit under a
	// quarter of its score usually matched only on words that are common
	// across the memories, which is noise beside a real match.
	RelativeFloor = 0.25
	// MaxHits caps the hits one search returns.
	MaxHits = 10
	// maxQueryTerms bounds the OR query; words beyond it are ignored.
	maxQueryTerms = 32
)

// Column weights for bm25(): a word in the name or the description says
// more about what a memory is for than the same word in its body.
const (
	weightName        = 3.0
	weightDescription = 2.0
	weightBody        = 1.0
)

// Hit is one search result.
type Hit struct {
	Entry
	// Score is the BM25 relevance, larger is better (FTS5's bm25() with
	// its sign flipped).
	Score float64
}

// ErrEmptyQuery reports a query with no letters or digits to search for.
var ErrEmptyQuery = errors.New("the query has no words to search for")

// Search ranks the active memories of scopes (every available one when
// none are given) against query with BM25 and returns the best hits, best
// first, cut by RelativeFloor and MaxHits. Every word of the query counts
// (an OR query), so a memory that shares any word can match; ranking does
// the rest. Where a name is in both scopes only the winning memory is
// searched, as List reports it.
//
// The index is an FTS5 table in a private in-memory database built for
// this one query: memories are files meant to be edited by hand, so
// reading them fresh is the only index that is never stale, and a few
// hundred small files index in milliseconds.
func (s *Store) Search(ctx context.Context, query string, scopes ...Scope) ([]Hit, error) {
	terms := queryTerms(query)
	if len(terms) == 0 {
		return nil, ErrEmptyQuery
	}
	entries, err := s.List(scopes...)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, nil
	}
	scores, err := rank(ctx, entries, terms)
	if err != nil {
		return nil, fmt.Errorf("search memories: %w", err)
	}
	return cut(entries, scores), nil
}

// queryTerms splits a query into its distinct lowercased words (runs of
// letters and digits), each quoted as an FTS5 string so no character of
// the query is read as FTS5 syntax.
func queryTerms(q string) []string {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	var out []string
	seen := map[string]bool{}
	for _, w := range words {
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, `"`+w+`"`)
		if len(out) == maxQueryTerms {
			break
		}
	}
	return out
}

// scored is one memory's index in the entries and its score.
type scored struct {
	i     int
	score float64
}

// rank indexes entries and scores those that match terms, best first.
func rank(ctx context.Context, entries []Entry, terms []string) ([]scored, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	// Every pooled connection to :memory: is a database of its own; one
	// connection keeps the table and the query together.
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx,
		`CREATE VIRTUAL TABLE mem USING fts5(name, description, body, tokenize = 'unicode61 remove_diacritics 2')`); err != nil {
		return nil, fmt.Errorf("create index: %w", err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	ins, err := tx.PrepareContext(ctx, `INSERT INTO mem(rowid, name, description, body) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	defer ins.Close()
	for i, e := range entries {
		// The name is indexed as words: db-host is found by "db" and "host".
		if _, err := ins.ExecContext(ctx, i, strings.NewReplacer("-", " ", "_", " ").Replace(e.Name), e.Description, e.Body); err != nil {
			return nil, fmt.Errorf("index %s: %w", e.Ref(), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	rows, err := conn.QueryContext(ctx,
		`SELECT rowid, bm25(mem, ?, ?, ?) AS s FROM mem WHERE mem MATCH ? ORDER BY s, rowid`,
		weightName, weightDescription, weightBody, strings.Join(terms, " OR "))
	if err != nil {
		return nil, fmt.Errorf("query index: %w", err)
	}
	defer rows.Close()
	var out []scored
	for rows.Next() {
		var h scored
		if err := rows.Scan(&h.i, &h.score); err != nil {
			return nil, err
		}
		h.score = -h.score // bm25() is negative, more negative is better
		out = append(out, h)
	}
	return out, rows.Err()
}

// cut keeps the best hit and every hit scoring at least RelativeFloor of
// it, at most MaxHits.
func cut(entries []Entry, scores []scored) []Hit {
	if len(scores) == 0 {
		return nil
	}
	floor := scores[0].score * RelativeFloor
	var out []Hit
	for n, h := range scores {
		if n > 0 && h.score < floor || len(out) == MaxHits {
			break
		}
		out = append(out, Hit{Entry: entries[h.i], Score: h.score})
	}
	return out
}
