package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"reasonix/core/provider"
	"reasonix/core/tool"
)

// damage is one way an index file gets damaged.
type damage struct {
	name string
	hurt func(t *testing.T, path string)
}

var damages = []damage{
	{"truncated to half", func(t *testing.T, path string) {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, info.Size()/2); err != nil {
			t.Fatal(err)
		}
	}},
	{"header overwritten", func(t *testing.T, path string) { overwrite(t, path, 0, 100) }},
	// Page 1 (the schema) stays whole, so the index opens and the damage
	// shows only when the search reads the tables.
	{"pages after the first overwritten", func(t *testing.T, path string) { overwrite(t, path, 4096, 1<<20) }},
}

// overwrite fills n bytes of the file from off (as far as it goes) with
// garbage.
func overwrite(t *testing.T, path string, off, n int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := off; i < off+n && i < int64(len(data)); i++ {
		data[i] = 0x5a
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// damagedHome is a home with a transcript that mentions "ocelot" and an
// index of it that hurt then damaged. The index is closed first, so that
// its write-ahead log is folded into the file being damaged.
func damagedHome(t *testing.T, hurt func(*testing.T, string)) *testHome {
	t.Helper()
	h := newTestHome(t)
	var msgs []provider.Message
	for i := range 400 {
		msgs = append(msgs, user(fmt.Sprintf("message %d pads the index over several pages of the database file", i)))
	}
	msgs = append(msgs, assistant("the ocelot migration ran at dawn"))
	h.transcript(h.sessions, "s1", day, msgs...)
	ix, err := Open(context.Background(), h.home)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Search(context.Background(), Query{Text: "ocelot", Scope: ScopeProject, Sessions: h.sessions}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(Path(h.home) + "-wal"); err == nil {
		t.Fatal("the index's log outlived its last connection; the damage would not reach the data")
	}
	hurt(t, Path(h.home))
	return h
}

// TestSearchRepairsDamagedIndex: a search that finds the index damaged,
// whether when it opens it or while it reads it, moves it aside, builds a
// new one and answers from it, and says so; the search after it finds
// the new index whole and says nothing.
func TestSearchRepairsDamagedIndex(t *testing.T) {
	t.Parallel()
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			h := damagedHome(t, d.hurt)
			// Without the repair the damage is an error.
			if ix, err := Open(context.Background(), h.home); err == nil {
				_, err = ix.Search(context.Background(), Query{Text: "ocelot", Scope: ScopeProject, Sessions: h.sessions})
				ix.Close()
				if !damaged(err) {
					t.Fatalf("the damage did not show: %v", err)
				}
			} else if !damaged(err) {
				t.Fatalf("open: %v, want a damaged database", err)
			}
			q := Query{Text: "ocelot", Scope: ScopeProject, Sessions: h.sessions}
			res, rep, err := SearchHome(context.Background(), h.home, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Snippet, "**ocelot**") {
				t.Fatalf("hits %v", refs(res))
			}
			if rep == nil || rep.Moved != Path(h.home)+DamagedSuffix || !strings.Contains(rep.Cause, "malformed") && !strings.Contains(rep.Cause, "not a database") {
				t.Fatalf("repair %+v", rep)
			}
			if !strings.Contains(rep.Notice(), "history index was damaged ("+rep.Cause+")") || !strings.Contains(rep.Notice(), rep.Moved) {
				t.Errorf("notice %q", rep.Notice())
			}
			if _, err := os.Stat(rep.Moved); err != nil {
				t.Errorf("the damaged index was not kept: %v", err)
			}
			res, rep, err = SearchHome(context.Background(), h.home, q)
			if err != nil || rep != nil || len(res.Hits) != 1 {
				t.Fatalf("second search: %v hits, repair %+v, err %v", refs(res), rep, err)
			}
		})
	}
}

// TestReindexRepairsDamagedIndex: reindex on a damaged index, which
// cannot even empty it, moves it aside and builds a new one from every
// file.
func TestReindexRepairsDamagedIndex(t *testing.T) {
	t.Parallel()
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			h := damagedHome(t, d.hurt)
			dirs, err := Dirs(h.home, h.sessions, ScopeGlobal)
			if err != nil {
				t.Fatal(err)
			}
			st, rep, err := ReindexHome(context.Background(), h.home, dirs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep == nil || rep.Moved == "" || st.Files != 1 || st.Messages != 401 {
				t.Fatalf("stats %+v, repair %+v", st, rep)
			}
			res, rep, err := SearchHome(context.Background(), h.home, Query{Text: "ocelot", Scope: ScopeGlobal})
			if err != nil || rep != nil || len(res.Hits) != 1 {
				t.Fatalf("search after reindex: %v hits, repair %+v, err %v", refs(res), rep, err)
			}
		})
	}
}

// TestHealthyIndexIsNotRepaired: errors that do not say the file is
// damaged (a cancelled search, a query without words) leave the index
// where it is, and a healthy index gets no notice.
func TestHealthyIndexIsNotRepaired(t *testing.T) {
	t.Parallel()
	h := damagedHome(t, func(*testing.T, string) {})
	before, err := os.Stat(Path(h.home))
	if err != nil {
		t.Fatal(err)
	}
	if _, rep, err := SearchHome(context.Background(), h.home, Query{Text: "ocelot", Scope: ScopeGlobal}); err != nil || rep != nil {
		t.Fatalf("repair %+v, err %v", rep, err)
	}
	if _, rep, err := SearchHome(context.Background(), h.home, Query{Text: "!!", Scope: ScopeGlobal}); !errors.Is(err, ErrNoTerms) || rep != nil {
		t.Fatalf("repair %+v, err %v", rep, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, rep, err := SearchHome(ctx, h.home, Query{Text: "ocelot", Scope: ScopeGlobal}); err == nil || rep != nil {
		t.Fatalf("cancelled: repair %+v, err %v", rep, err)
	}
	after, err := os.Stat(Path(h.home))
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("the index was replaced: %v", err)
	}
	if _, err := os.Stat(Path(h.home) + DamagedSuffix); err == nil {
		t.Fatal("a healthy index was moved aside")
	}
}

// corruptErr is an error as SQLite's driver reports damage.
type corruptErr struct{ code int }

func (e corruptErr) Error() string {
	return fmt.Sprintf("database disk image is malformed (%d)", e.code)
}
func (e corruptErr) Code() int { return e.code }

// TestRepairOnce: an index still damaged after the repair is an error,
// not a second repair; an extended result code counts as its primary one.
func TestRepairOnce(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	calls := 0
	rep, err := withRepair(context.Background(), h.home, func(*Index) error {
		calls++
		return fmt.Errorf("search history: %w", corruptErr{code: 267}) // SQLITE_CORRUPT_VTAB
	})
	if calls != 2 || rep == nil || !damaged(err) {
		t.Fatalf("%d calls, repair %+v, err %v", calls, rep, err)
	}
	if damaged(fmt.Errorf("x: %w", corruptErr{code: 5})) { // SQLITE_BUSY
		t.Error("a busy database was taken for a damaged one")
	}
}

// TestMoveAsideLeavesAnotherRepair: when the file at the index's path is
// no longer the one found damaged, another process has repaired it, and
// its new index is not moved.
func TestMoveAsideLeavesAnotherRepair(t *testing.T) {
	t.Parallel()
	h := damagedHome(t, func(*testing.T, string) {})
	path := Path(h.home)
	old, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".other"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	moved, err := moveAside(path, old)
	if err != nil || moved != "" {
		t.Fatalf("moved %q, err %v", moved, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the other process's index is gone: %v", err)
	}
}

// TestToolNoticesRepair: the history tool's answer from a repaired index
// begins with the notice, so the model (and the user reading the call)
// knows why; the next call's answer has none.
func TestToolNoticesRepair(t *testing.T) {
	t.Parallel()
	h := damagedHome(t, damages[0].hurt)
	tl := historyFor(t, tool.Env{Home: h.home, Sessions: h.sessions})
	out, err := tl.Execute(context.Background(), []byte(`{"query":"ocelot"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "Note: the history index was damaged (") || !strings.Contains(out, "1 hit for") {
		t.Fatalf("answer:\n%s", out)
	}
	out, err = tl.Execute(context.Background(), []byte(`{"query":"ocelot"}`))
	if err != nil || strings.Contains(out, "damaged") {
		t.Fatalf("second answer (%v):\n%s", err, out)
	}
}

// TestRepairMovesTheLog: while another process still has the damaged
// index open, its write-ahead log stays beside it; the log goes with the
// damaged copy, apart from the new index, which still answers.
func TestRepairMovesTheLog(t *testing.T) {
	t.Parallel()
	h := damagedHome(t, func(*testing.T, string) {})
	// The other process: its latest write is in the log.
	other, err := Open(context.Background(), h.home)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close() // on the damaged file: whatever it says is moot
	path := h.transcript(h.sessions, "s2", day, assistant("a second ocelot"))
	if _, err := other.Update(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	damages[0].hurt(t, Path(h.home))
	res, rep, err := SearchHome(context.Background(), h.home, Query{Text: "ocelot", Scope: ScopeProject, Sessions: h.sessions})
	if err != nil || rep == nil || len(res.Hits) != 2 {
		t.Fatalf("%v hits, repair %+v, err %v", refs(res), rep, err)
	}
	if _, err := os.Stat(rep.Moved + "-wal"); err != nil {
		t.Errorf("the log did not go with the damaged index: %v", err)
	}
}
