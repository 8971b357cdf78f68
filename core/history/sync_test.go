package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"reasonix/core/compact"
	"reasonix/core/provider"
	"reasonix/core/session"
)

func TestIncrementalSync(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	path := h.transcript(h.sessions, "s", day, user("first penguin"), assistant("second penguin"))
	h.transcript(h.sessions, "quiet", day, user("nothing to see"))
	ix := h.open()
	ctx := context.Background()

	st, err := ix.Sync(ctx, h.sessions)
	if err != nil || st.Files != 2 || st.Read != 2 || st.Messages != 3 {
		t.Fatalf("first sync = %+v, %v; want 2 files read, 3 messages", st, err)
	}
	st, err = ix.Sync(ctx, h.sessions)
	if err != nil || st.Read != 0 || st.Messages != 0 {
		t.Fatalf("sync of unchanged files = %+v, %v; want nothing read", st, err)
	}
	h.append(path, user("third penguin"), toolResult("c", "fourth penguin"))
	st, err = ix.Sync(ctx, h.sessions)
	if err != nil || st.Read != 1 || st.Messages != 2 {
		t.Fatalf("sync after append = %+v, %v; want 1 file read, 2 messages", st, err)
	}
	if n := rowCount(t, ix); n != 5 {
		t.Errorf("index holds %d messages, want 5 (nothing indexed twice)", n)
	}
	got := refs(h.search(ix, "penguin", ScopeProject))
	slices.Sort(got)
	if want := []string{"s#1", "s#2", "s#3", "s#4"}; !slices.Equal(got, want) {
		t.Errorf("refs = %v, want %v", got, want)
	}
}

func TestUpdateIndexesOneFile(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	path := h.transcript(h.sessions, "s", day, user("okapi one"))
	ix := h.open()
	ctx := context.Background()
	if n, err := ix.Update(ctx, path); err != nil || n != 1 {
		t.Fatalf("Update = %d, %v; want 1", n, err)
	}
	h.append(path, assistant("okapi two"))
	if n, err := ix.Update(ctx, path); err != nil || n != 1 {
		t.Fatalf("Update after append = %d, %v; want 1", n, err)
	}
	if n, err := ix.Update(ctx, path); err != nil || n != 0 {
		t.Fatalf("Update of an unchanged file = %d, %v; want 0", n, err)
	}
	// The search that follows finds the file up to date and reads nothing.
	res := h.search(ix, "okapi", ScopeProject)
	if len(res.Hits) != 2 || res.Sync.Read != 0 {
		t.Errorf("hits %v, sync %+v; want 2 hits and no file read", refs(res), res.Sync)
	}
}

func TestTornLineWaits(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	path := h.transcript(h.sessions, "s", day, user("complete gnu"))
	line := record("message", assistant("torn gnu"))
	writeLines(t, path, os.O_APPEND|os.O_WRONLY, line[:len(line)/2])
	ix := h.open()

	if got := refs(h.search(ix, "gnu", ScopeProject)); !slices.Equal(got, []string{"s#1"}) {
		t.Fatalf("refs = %v, want only the complete line s#1", got)
	}
	writeLines(t, path, os.O_APPEND|os.O_WRONLY, line[len(line)/2:])
	got := refs(h.search(ix, "gnu", ScopeProject))
	slices.Sort(got)
	if !slices.Equal(got, []string{"s#1", "s#2"}) {
		t.Fatalf("refs after the line completed = %v, want [s#1 s#2]", got)
	}
	w, err := Around(h.home, h.sessions, Ref{Name: "s", Ordinal: 2}, 0)
	if err != nil || len(w.Messages) != 1 || w.Messages[0].Text != "torn gnu" {
		t.Errorf("around s#2 = %+v, %v", w, err)
	}
}

func TestShrunkOrReplacedFileIsReindexed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("cut back", func(t *testing.T) {
		t.Parallel()
		h := newTestHome(t)
		path := h.transcript(h.sessions, "s", day, user("kept heron"), assistant("dropped egret"))
		ix := h.open()
		if n := len(h.search(ix, "egret", ScopeProject).Hits); n != 1 {
			t.Fatalf("%d hits before the cut", n)
		}
		st, _ := os.Stat(path)
		cut := int64(len(record("message", assistant("dropped egret"))))
		if err := os.Truncate(path, st.Size()-cut); err != nil {
			t.Fatal(err)
		}
		if got := refs(h.search(ix, "egret", ScopeProject)); len(got) != 0 {
			t.Errorf("the cut message is still found: %v", got)
		}
		if got := refs(h.search(ix, "heron", ScopeProject)); !slices.Equal(got, []string{"s#1"}) {
			t.Errorf("heron refs = %v", got)
		}
		if n := rowCount(t, ix); n != 1 {
			t.Errorf("index holds %d messages, want 1", n)
		}
	})
	t.Run("cut back and grown past the old end", func(t *testing.T) {
		t.Parallel()
		h := newTestHome(t)
		path := h.transcript(h.sessions, "s", day, user("kept heron"), assistant("dropped egret"))
		ix := h.open()
		h.search(ix, "egret", ScopeProject)
		st, _ := os.Stat(path)
		cut := int64(len(record("message", assistant("dropped egret"))))
		if err := os.Truncate(path, st.Size()-cut); err != nil {
			t.Fatal(err)
		}
		h.append(path, assistant("a much longer replacement about a stork, longer than before"))
		if got := refs(h.search(ix, "egret", ScopeProject)); len(got) != 0 {
			t.Errorf("the cut message is still found: %v", got)
		}
		if got := refs(h.search(ix, "stork", ScopeProject)); !slices.Equal(got, []string{"s#2"}) {
			t.Errorf("stork refs = %v, want [s#2]", got)
		}
		if n := rowCount(t, ix); n != 2 {
			t.Errorf("index holds %d messages, want 2", n)
		}
	})
	t.Run("replaced", func(t *testing.T) {
		t.Parallel()
		h := newTestHome(t)
		path := h.transcript(h.sessions, "s", day, user("old ibis"))
		ix := h.open()
		h.search(ix, "ibis", ScopeProject)
		tmp := filepath.Join(t.TempDir(), "s.jsonl")
		h2 := *h
		h2.transcript(filepath.Dir(tmp), "s", day, user("new ibis"), user("more ibis"))
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		res := h.search(ix, "ibis", ScopeProject)
		got := refs(res)
		slices.Sort(got)
		if !slices.Equal(got, []string{"s#1", "s#2"}) || rowCount(t, ix) != 2 {
			t.Errorf("refs = %v with %d rows, want [s#1 s#2] and 2", got, rowCount(t, ix))
		}
		for _, hit := range res.Hits {
			if strings.Contains(hit.Snippet, "old") {
				t.Errorf("the replaced text is still indexed: %q", hit.Snippet)
			}
		}
	})
	t.Run("removed", func(t *testing.T) {
		t.Parallel()
		h := newTestHome(t)
		path := h.transcript(h.sessions, "s", day, user("vanishing crane"))
		ix := h.open()
		h.search(ix, "crane", ScopeProject)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		res := h.search(ix, "crane", ScopeProject)
		if len(res.Hits) != 0 || res.Sync.Removed != 1 || rowCount(t, ix) != 0 {
			t.Errorf("hits %v, sync %+v, rows %d; want the file dropped", refs(res), res.Sync, rowCount(t, ix))
		}
	})
	t.Run("removed project", func(t *testing.T) {
		t.Parallel()
		h := newTestHome(t)
		other := session.ProjectDir(h.home, "/elsewhere")
		h.transcript(other, "o", day, user("vanishing crane"))
		ix := h.open()
		if n := len(h.search(ix, "crane", ScopeGlobal).Hits); n != 1 {
			t.Fatalf("%d hits before removal", n)
		}
		if err := os.RemoveAll(filepath.Dir(other)); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Sync(ctx, h.sessions); err != nil {
			t.Fatal(err)
		}
		if res := h.search(ix, "crane", ScopeGlobal); len(res.Hits) != 0 || rowCount(t, ix) != 0 {
			t.Errorf("hits %v after the project was removed", refs(res))
		}
	})
}

// TestRecordsOtherThanMessagesSkipped: headers, compaction markers,
// unknown records and damaged lines take no ordinal, in the index and in
// Around alike.
func TestRecordsOtherThanMessagesSkipped(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	path := h.transcript(h.sessions, "s", day, user("alpha yak"))
	writeLines(t, path, os.O_APPEND|os.O_WRONLY,
		[]byte(`{"type":"compaction","compaction":{"tier":"fold","summary":"yak summary"}}`+"\n"),
		[]byte("{not json yak\n"),
		[]byte(`{"type":"future","future":{"text":"yak"}}`+"\n"))
	h.append(path, assistant("beta yak"))
	ix := h.open()
	got := refs(h.search(ix, "yak", ScopeProject))
	slices.Sort(got)
	if !slices.Equal(got, []string{"s#1", "s#2"}) {
		t.Fatalf("refs = %v, want [s#1 s#2]", got)
	}
	w, err := Around(h.home, h.sessions, Ref{Name: "s", Ordinal: 2}, 0)
	if err != nil || w.Messages[0].Text != "beta yak" || w.Total != 2 {
		t.Errorf("around s#2 = %+v, %v", w, err)
	}
}

// TestNotIndexed: the history tool's own calls and results are not
// indexed, so a search never finds earlier searches, and neither is the
// system prompt; the messages still count for refs.
func TestNotIndexed(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	h.transcript(h.sessions, "s", day,
		provider.Message{Role: provider.RoleSystem, Content: "You are an agent; the axolotl tools are grep and history."},
		user("find what we said about the axolotl"),
		provider.Message{Role: provider.RoleAssistant, Content: "", ToolCalls: []provider.ToolCall{
			{ID: "h", Name: "history", Arguments: `{"query":"axolotl"}`},
			{ID: "g", Name: "grep", Arguments: `{"pattern":"axolotl"}`}}},
		provider.Message{Role: provider.RoleTool, ToolCallID: "h", Name: "history", Content: "[1] ref=x#1 **axolotl**"},
		provider.Message{Role: provider.RoleTool, ToolCallID: "g", Name: "grep", Content: "zoo.go:3: axolotl"},
	)
	ix := h.open()
	got := refs(h.search(ix, "axolotl", ScopeProject))
	slices.Sort(got)
	if want := []string{"s#2", "s#3", "s#5"}; !slices.Equal(got, want) {
		t.Errorf("refs = %v, want %v (the grep call but not the history call, no history result, no system prompt)", got, want)
	}
	if got := refs(h.search(ix, "query", ScopeProject)); len(got) != 0 {
		t.Errorf("the history call's arguments are indexed: %v", got)
	}
}

// TestConcurrentSyncs: several indexes (as several processes would) sync
// the same files at once; every message is indexed exactly once.
func TestConcurrentSyncs(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	for i := range 20 {
		var msgs []provider.Message
		for j := range 30 {
			msgs = append(msgs, user(fmt.Sprintf("lemur %d %d", i, j)))
		}
		h.transcript(h.sessions, fmt.Sprintf("s%02d", i), day, msgs...)
	}
	const workers = 4
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			ix, err := Open(context.Background(), h.home)
			if err != nil {
				errs <- err
				return
			}
			_, err = ix.Search(context.Background(), Query{Text: "lemur", Scope: ScopeGlobal, Sessions: h.sessions})
			errs <- errors.Join(err, ix.Close())
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := rowCount(t, h.open()); n != 600 {
		t.Errorf("index holds %d messages, want 600", n)
	}
}

func TestReindex(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	h.transcript(h.sessions, "a", day, user("tapir one"), assistant("tapir two"))
	h.transcript(h.sessions, "b", day, user("tapir three"))
	h.archive(day, compact.ArchiveRecord{Session: "a", Time: day, Message: user("tapir archived")})
	ix := h.open()
	h.search(ix, "tapir", ScopeGlobal)
	dirs, err := Dirs(h.home, h.sessions, ScopeGlobal)
	if err != nil {
		t.Fatal(err)
	}
	var calls []int
	st, err := ix.Reindex(context.Background(), dirs, func(done, total int) {
		if total != 3 {
			t.Errorf("progress total = %d, want 3", total)
		}
		calls = append(calls, done)
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 3 || st.Read != 3 || st.Messages != 4 {
		t.Errorf("stats = %+v, want 3 files read and 4 messages", st)
	}
	if !slices.Equal(calls, []int{1, 2, 3}) {
		t.Errorf("progress calls = %v", calls)
	}
	if n := rowCount(t, ix); n != 4 {
		t.Errorf("index holds %d messages, want 4", n)
	}
}

func TestOldSchemaIsRebuilt(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	h.transcript(h.sessions, "s", day, user("quokka"))
	ix, err := Open(context.Background(), h.home)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.db.Exec("DROP TABLE messages; CREATE TABLE messages(x); PRAGMA user_version = 0"); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if got := refs(h.search(h.open(), "quokka", ScopeProject)); !slices.Equal(got, []string{"s#1"}) {
		t.Errorf("refs = %v after reopening an old index", got)
	}
}

func TestOpenWithoutHome(t *testing.T) {
	t.Parallel()
	if _, err := Open(context.Background(), ""); err == nil {
		t.Fatal("Open without a home succeeded")
	}
}

// TestUnreadableDirectorySkipped: a project directory that cannot be
// listed does not make the global search fail.
func TestUnreadableDirectorySkipped(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	h.transcript(h.sessions, "s", day, user("resilient marmot"))
	broken := filepath.Join(h.home, "projects", "broken")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	// "sessions" is a file: listing it fails.
	if err := os.WriteFile(filepath.Join(broken, "sessions"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := h.search(h.open(), "marmot", ScopeGlobal)
	if got := refs(res); !slices.Equal(got, []string{"s#1"}) || res.Sync.Skipped != 1 {
		t.Errorf("refs = %v, sync %+v; want [s#1] with one directory skipped", got, res.Sync)
	}
}
