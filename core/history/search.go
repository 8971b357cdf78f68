package history

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"reasonix/core/text"
)

// FloorRatio is the relative score floor: a hit scoring less than this
// fraction of the best hit's BM25 score is dropped (the memory tool uses
// the same fraction). A message that shares a rare word with the query
// scores several times one that shares only a common word, so a quarter
// keeps the messages that matched what makes the query specific and
// sheds the ones that matched its filler, while messages matching the
// same terms, whose scores differ by length and repetition (rarely by 4x),
// all stay.
const FloorRatio = 0.25

// Search limits.
const (
	DefaultLimit = 8
	MaxLimit     = 50
)

// snippetRunes bounds a hit's snippet.
const snippetRunes = 240

// Query is one search.
type Query struct {
	// Text is free text: words, "quoted phrases" and prefix* words. It is
	// never read as FTS5 syntax.
	Text  string
	Scope Scope
	// Sessions is the project's transcript directory, which
	// ScopeProject searches.
	Sessions string
	// Limit is the most hits returned: DefaultLimit when 0, at most
	// MaxLimit.
	Limit int
}

// Hit is one matching message.
type Hit struct {
	Ref Ref
	// Session is the session the message belongs to.
	Session string
	// Source is the project's slug, or ArchiveSource.
	Source string
	Role   string
	// Time is when the session started (transcripts carry no time per
	// message) or, for an archived message, when it was archived; zero
	// when unknown.
	Time time.Time
	// Snippet is the text around the match on one line, matched words
	// marked **like this**.
	Snippet string
	// Score is the BM25 score, higher is better.
	Score float64
	// Path is the file the message is in.
	Path string

	rowid int64
}

// Result is what a search found.
type Result struct {
	Hits []Hit
	// BelowFloor counts the hits among the best Limit that were dropped
	// by the relative score floor.
	BelowFloor int
	// Common lists the query's terms that were too common to choose
	// candidates: messages that contain only these were not considered.
	Common []string
	// Ignored lists the query's terms that were not searched for: words
	// in so many messages that they tell none apart, and, when Partial,
	// the common terms.
	Ignored []string
	// Partial is set when even the rarest term matched more messages
	// than one search ranks: only the newest of them were ranked.
	Partial bool
	// Sync is the index update the search did first.
	Sync SyncStats
}

// ErrNoTerms is returned for a query with nothing searchable in it.
var ErrNoTerms = errors.New("the query has no words to search for")

// rankBudget bounds how many messages one search scores. Finding the
// messages that contain a word is cheap; scoring them with bm25() costs
// about 2 µs each, and a common word is in hundreds of thousands of them.
// So the rarest terms of a query, up to this many matches together,
// choose the candidates, and the commoner terms only add to their scores:
// a message that shares only common words with the query would fall
// under the floor anyway. A query whose rarest term alone matches more
// ranks the newest rankBudget of those messages (Result.Partial).
const rankBudget = 30_000

// Search syncs the files of the query's scope and returns the best
// matches, best first.
func (ix *Index) Search(ctx context.Context, q Query) (Result, error) {
	var res Result
	terms := parseTerms(q.Text)
	if len(terms) == 0 {
		return res, ErrNoTerms
	}
	limit := q.Limit
	switch {
	case limit <= 0:
		limit = DefaultLimit
	case limit > MaxLimit:
		limit = MaxLimit
	}
	dirs, err := Dirs(ix.home, q.Sessions, q.Scope)
	if err != nil {
		return res, fmt.Errorf("search history: %w", err)
	}
	if res.Sync, err = ix.sync(ctx, dirs, q.Scope == ScopeGlobal, nil); err != nil {
		return res, err
	}
	filter := ""
	if q.Scope == ScopeProject {
		filter = "scope : " + quote(scopeToken(sourceOf(ix.home, q.Sessions))) + " AND "
	}
	plan, err := ix.plan(ctx, filter, terms)
	if err != nil {
		return res, fmt.Errorf("search history: %w", err)
	}
	res.Partial, res.Common, res.Ignored = plan.partial, plan.common, plan.ignored
	for _, expr := range plan.exprs {
		hits, err := ix.query(ctx, expr, plan.minRowid, limit)
		if err != nil {
			return res, fmt.Errorf("search history: %w", err)
		}
		res.Hits = append(res.Hits, hits...)
	}
	slices.SortFunc(res.Hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.rowid, b.rowid))
	})
	res.Hits = res.Hits[:min(limit, len(res.Hits))]
	if len(res.Hits) == 0 {
		return res, nil
	}
	keep := 1
	for keep < len(res.Hits) && res.Hits[keep].Score >= FloorRatio*res.Hits[0].Score {
		keep++
	}
	res.BelowFloor = len(res.Hits) - keep
	res.Hits = res.Hits[:keep]
	if err := ix.fillPaths(ctx, res.Hits); err != nil {
		return res, fmt.Errorf("search history: %w", err)
	}
	return res, nil
}

// A term in at least stopFraction of the messages is a stop word: BM25
// gives it next to no weight (none at all from half of the messages on),
// yet computing that weight reads every message that has it. Whether a
// term is one is estimated from the newest stopSample messages.
const (
	stopFraction = 0.4
	stopSample   = 4096
)

// searchPlan is how a query runs: the MATCH expressions whose best hits
// together are the query's best hits, and the lowest rowid to consider.
type searchPlan struct {
	exprs    []string
	minRowid int64
	partial  bool
	common   []string
	ignored  []string
}

// plan splits the terms by how many messages in scope contain them (see
// rankBudget). Stop words are dropped. With rare terms R and common terms
// C, the candidates are the messages with any of R, found as "R AND C"
// and "R NOT C": both expressions name every phrase of the query, and
// bm25() sums over the phrases a message contains, so each hit scores
// exactly as it would for "R OR C". When R alone is too common, C is
// dropped too and the newest matches of R are ranked.
func (ix *Index) plan(ctx context.Context, filter string, terms []term) (searchPlan, error) {
	var p searchPlan
	type counted struct {
		expr string
		df   int
		text string
	}
	var (
		cs     []counted
		sample *stopWindow
	)
	for _, t := range terms {
		expr := phrase(t)
		n, err := ix.countUpTo(ctx, filter+expr, ix.budget+1)
		if err != nil {
			return p, err
		}
		if n == 0 {
			continue
		}
		if n > ix.budget {
			if sample == nil {
				if sample, err = ix.stopWindow(ctx); err != nil {
					return p, err
				}
			}
			stop, err := sample.isStop(ctx, ix, expr)
			if err != nil {
				return p, err
			}
			if stop {
				p.ignored = append(p.ignored, t.text)
				continue
			}
		}
		cs = append(cs, counted{expr: expr, df: n, text: t.text})
	}
	if len(cs) == 0 {
		if len(p.ignored) > 0 {
			// Nothing but stop words: rank by them after all.
			return ix.planOnly(ctx, filter, terms, p.ignored)
		}
		return p, nil
	}
	slices.SortStableFunc(cs, func(a, b counted) int { return cmp.Compare(a.df, b.df) })
	var rare, common []string
	sum := 0
	for i, c := range cs {
		if i == 0 || sum+c.df <= ix.budget {
			rare = append(rare, c.expr)
			sum += c.df
			continue
		}
		common = append(common, c.expr)
		p.common = append(p.common, c.text)
	}
	r := filter + "(" + strings.Join(rare, " OR ") + ")"
	if sum > ix.budget {
		// The rarest term alone is too common to rank every match.
		p.partial = true
		p.ignored = append(p.ignored, p.common...)
		p.common = nil
		p.exprs = []string{r}
		return p, ix.newestFrom(ctx, r, &p)
	}
	if len(common) == 0 {
		p.exprs = []string{r}
	} else {
		c := "(" + strings.Join(common, " OR ") + ")"
		p.exprs = []string{r + " AND " + c, r + " NOT " + c}
	}
	return p, nil
}

// planOnly is the plan for a query of stop words only: the newest
// matches of any of them, ranked.
func (ix *Index) planOnly(ctx context.Context, filter string, terms []term, texts []string) (searchPlan, error) {
	var exprs []string
	for _, t := range terms {
		if slices.Contains(texts, t.text) {
			exprs = append(exprs, phrase(t))
		}
	}
	p := searchPlan{partial: true}
	r := filter + "(" + strings.Join(exprs, " OR ") + ")"
	p.exprs = []string{r}
	return p, ix.newestFrom(ctx, r, &p)
}

// newestFrom sets the plan's lowest rowid so that only the newest budget
// matches of expr are ranked.
func (ix *Index) newestFrom(ctx context.Context, expr string, p *searchPlan) error {
	err := ix.db.QueryRowContext(ctx,
		"SELECT rowid FROM messages WHERE messages MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
		expr, ix.budget-1).Scan(&p.minRowid)
	if errors.Is(err, sql.ErrNoRows) {
		p.partial = false // fewer matches than the budget after all
		return nil
	}
	return err
}

// stopWindow is the sample the stop-word test counts in: the newest
// messages, from rowid from on, n of them.
type stopWindow struct {
	from int64
	n    int
}

func (ix *Index) stopWindow(ctx context.Context) (*stopWindow, error) {
	var w stopWindow
	err := ix.db.QueryRowContext(ctx,
		"SELECT coalesce(min(rowid), 0), count(*) FROM (SELECT rowid FROM messages ORDER BY rowid DESC LIMIT ?)",
		stopSample).Scan(&w.from, &w.n)
	return &w, err
}

// isStop reports whether the term expr is a stop word in the sample.
func (w *stopWindow) isStop(ctx context.Context, ix *Index, expr string) (bool, error) {
	if w.n == 0 {
		return false, nil
	}
	var n int
	err := ix.db.QueryRowContext(ctx,
		"SELECT count(*) FROM messages WHERE messages MATCH ? AND rowid >= ?", expr, w.from).Scan(&n)
	return float64(n) >= stopFraction*float64(w.n), err
}

// countUpTo counts the messages matching expr, stopping at limit.
func (ix *Index) countUpTo(ctx context.Context, expr string, limit int) (int, error) {
	var n int
	err := ix.db.QueryRowContext(ctx,
		"SELECT count(*) FROM (SELECT 1 FROM messages WHERE messages MATCH ? LIMIT ?)", expr, limit).Scan(&n)
	return n, err
}

// query returns the best limit hits of one MATCH expression among the
// messages from minRowid on.
func (ix *Index) query(ctx context.Context, expr string, minRowid int64, limit int) ([]Hit, error) {
	rows, err := ix.db.QueryContext(ctx,
		`SELECT rowid, rank, role, session, source, time, snippet(messages, 0, '**', '**', '…', 24)
		FROM messages WHERE messages MATCH ? AND rowid >= ? ORDER BY rank, rowid LIMIT ?`,
		expr, minRowid, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var (
			h      Hit
			rank   float64
			millis int64
		)
		if err := rows.Scan(&h.rowid, &rank, &h.Role, &h.Session, &h.Source, &millis, &h.Snippet); err != nil {
			return nil, err
		}
		// bm25() is negative, better matches more so.
		h.Score = -rank
		if millis > 0 {
			h.Time = time.UnixMilli(millis).UTC()
		}
		h.Snippet = text.OneLine(h.Snippet, snippetRunes)
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

// phrase is the FTS5 expression for one term: a double-quoted string
// confined to the text column. Inside the quotes FTS5 syntax (operators,
// column filters, parentheses, NEAR) has no meaning, so no query is a
// syntax error; the tokenizer splits a term like "busy_timeout" into a
// phrase that matches the words in order.
func phrase(t term) string {
	p := "text : " + quote(t.text)
	if t.prefix {
		p += " *"
	}
	return p
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// fillPaths sets each hit's Path and Ref from its file's id.
func (ix *Index) fillPaths(ctx context.Context, hits []Hit) error {
	type file struct {
		path    string
		archive bool
	}
	files := map[int64]file{}
	for i := range hits {
		id := hits[i].rowid >> 32
		f, ok := files[id]
		if !ok {
			if err := ix.db.QueryRowContext(ctx, "SELECT path, archive FROM files WHERE id = ?", id).Scan(&f.path, &f.archive); err != nil {
				return err
			}
			files[id] = f
		}
		hits[i].Path = f.path
		hits[i].Ref = refFor(f.path, f.archive, int(hits[i].rowid&0xFFFFFFFF))
	}
	return nil
}

// FormatSearch renders a search result for the model: one entry per hit
// with its ref, and, when nothing was found, how to search again.
func FormatSearch(q Query, res Result) string {
	var b strings.Builder
	where := "this project's sessions"
	if q.Scope == ScopeGlobal {
		where = "all saved sessions and compaction archives"
	}
	if len(res.Hits) == 0 {
		fmt.Fprintf(&b, "No matches for %q in %s.\n", q.Text, where)
		b.WriteString("Retry with rarer, more specific terms: identifiers, file or function names, exact error text, " +
			"names of people or tools; fewer common words.")
		if q.Scope != ScopeGlobal {
			b.WriteString(" Or widen the search with scope=\"global\" to cover every project's sessions and the compaction archives.")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s for %q in %s, best first", plural(len(res.Hits), "hit"), q.Text, where)
	if res.BelowFloor > 0 {
		fmt.Fprintf(&b, " (%s scoring under %d%% of the best left out)", plural(res.BelowFloor, "weaker match"), int(FloorRatio*100))
	}
	b.WriteString(":\n")
	if len(res.Common) > 0 {
		fmt.Fprintf(&b, "Messages containing only the common terms %s were not considered.\n", quotedList(res.Common))
	}
	if len(res.Ignored) > 0 {
		fmt.Fprintf(&b, "The terms %s are in too many messages to tell them apart and were ignored.\n", quotedList(res.Ignored))
	}
	if res.Partial {
		fmt.Fprintf(&b, "Even the query's rarest term is in more than %d messages, so only the newest of those were ranked; "+
			"add a rarer term for a complete search.\n", rankBudget)
	}
	for i, h := range res.Hits {
		fmt.Fprintf(&b, "\n[%d] ref=%s role=%s session=%s", i+1, h.Ref, h.Role, h.Session)
		if h.Source == ArchiveSource {
			b.WriteString(" source=archive")
			if !h.Time.IsZero() {
				fmt.Fprintf(&b, " archived=%s", h.Time.Format(timeLayout))
			}
		} else {
			fmt.Fprintf(&b, " project=%s", h.Source)
			if !h.Time.IsZero() {
				fmt.Fprintf(&b, " started=%s", h.Time.Format(timeLayout))
			}
		}
		fmt.Fprintf(&b, "\n    %s\n", h.Snippet)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// timeLayout shows times to the minute, in UTC.
const timeLayout = "2006-01-02T15:04Z"

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ch") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func quotedList(terms []string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = strconv.Quote(t)
	}
	return strings.Join(q, ", ")
}
