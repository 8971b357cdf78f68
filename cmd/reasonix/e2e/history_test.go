package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/core/compact"
	"reasonix/core/history"
	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
	"reasonix/core/session"
)

// oldHistory writes, into the e2e home, a transcript of another project
// from five days ago and an archive from three days ago, both mentioning
// the phrase. It returns the ref of the transcript's matching message and
// the archive's file name.
func oldHistory(t *testing.T, e *e2e, phrase string) (ref, archive string) {
	t.Helper()
	created := time.Now().Add(-5 * 24 * time.Hour).UTC()
	id := session.NewID(created)
	dir := session.ProjectDir(e.home, filepath.Join(e.home, "old-project"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	add := func(typ string, v any) {
		b, err := json.Marshal(map[string]any{"type": typ, typ: v})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	add("header", session.Header{Version: session.FormatVersion, ID: id, Created: created, Model: "fake-model"})
	add("message", provider.Message{Role: provider.RoleUser, Content: "how do we run the data migration?"})
	add("message", provider.Message{Role: provider.RoleAssistant, Content: "We agreed: " + phrase + ", never by hand."})
	add("message", provider.Message{Role: provider.RoleUser, Content: "thanks"})
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	archivedAt := time.Now().Add(-3 * 24 * time.Hour)
	path, err := compact.WriteArchive(compact.ArchiveDir(e.home), archivedAt, []compact.ArchiveRecord{{
		Session: id, Index: 7, Tier: "fold", Time: archivedAt,
		Message: provider.Message{Role: provider.RoleTool, ToolCallID: "c1", Content: "migration log: " + phrase + " finished"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return id + "#2", filepath.Base(path)
}

// TestE2EHistoryToolGlobal: a new session's model searches every saved
// session with the history tool and reads around a hit; the results it
// receives hold what an older session in another project and a
// compaction archive said.
func TestE2EHistoryToolGlobal(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	const phrase = "run the ovenbird migrator with --dry-run first"
	ref, archive := oldHistory(t, e, phrase)
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "h1", Name: "history",
			Arguments: `{"query":"ovenbird migrator","scope":"global"}`}}},
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "h2", Name: "history",
			Arguments: `{"operation":"around","ref":"` + ref + `","radius":1}`}}},
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "h3", Name: "history",
			Arguments: `{"query":"ovenbird"}`}}},
		providertest.Turn{Text: "Use --dry-run first."},
	)
	r := e.run("run", "how did we run the migration last time?")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	if !strings.Contains(strings.Join(reqs[0].Tools, ","), "history") {
		t.Errorf("history is not offered: %v", reqs[0].Tools)
	}
	result := func(i int, id string) string {
		t.Helper()
		m := reqs[i].Last()
		if m.Role != "tool" || m.ToolCallID != id {
			t.Fatalf("request %d: last message is %s %q, want the result of %s", i, m.Role, m.ToolCallID, id)
		}
		if strings.HasPrefix(m.Content, "Error:") {
			t.Fatalf("result of %s is an error: %s", id, m.Content)
		}
		return m.Content
	}
	search := result(1, "h1")
	for _, want := range []string{"2 hits", "ref=" + ref, "ref=archive/" + strings.TrimSuffix(archive, ".jsonl") + "#1",
		"**ovenbird** **migrator**", "--dry-run first"} {
		if !strings.Contains(search, want) {
			t.Errorf("search result lacks %q:\n%s", want, search)
		}
	}
	around := result(2, "h2")
	for _, want := range []string{"messages 1-3 of 3 around #2", phrase, "how do we run the data migration?", "thanks"} {
		if !strings.Contains(around, want) {
			t.Errorf("around result lacks %q:\n%s", want, around)
		}
	}
	// The old session is another project's: the project scope does not
	// see it, and says how to widen the search.
	if project := result(3, "h3"); !strings.Contains(project, "No matches") || !strings.Contains(project, `scope="global"`) {
		t.Errorf("project-scope result:\n%s", project)
	}
	if _, err := os.Stat(history.Path(e.home)); err != nil {
		t.Errorf("no index was built: %v", err)
	}
}

// TestE2EHistoryCLI searches saved sessions and rebuilds the index with
// the real binary.
func TestE2EHistoryCLI(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	if r := e.run("history", "search", "anything"); r.code != 0 || !strings.Contains(r.stdout, "No matches") ||
		!strings.Contains(r.stdout, "--scope global") {
		t.Fatalf("search of an empty home:\n%s", r)
	}
	e.srv.Push(providertest.Turn{Text: "The capybara config lives in capy.toml."})
	if r := e.run("run", "where is the capybara config?"); r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	ref, _ := oldHistory(t, e, "the capybara migrator")

	r := e.run("history", "search", "capybara")
	if r.code != 0 || strings.Count(r.stdout, "#") != 2 || strings.Contains(r.stdout, ref) {
		t.Fatalf("project search should show this workspace's two messages only:\n%s", r)
	}
	r = e.run("history", "search", "--scope", "global", "--json", "capybara", "migrator")
	if r.code != 0 {
		t.Fatalf("global search:\n%s", r)
	}
	var hits []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &hits); err != nil {
		t.Fatalf("JSON output: %v\n%s", err, r.stdout)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h["ref"].(string))
		for _, k := range []string{"session", "source", "role", "time", "score", "snippet", "path"} {
			if _, ok := h[k]; !ok {
				t.Errorf("hit %v lacks %q", h["ref"], k)
			}
		}
	}
	if !slices.Contains(got, ref) || !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "archive/") }) {
		t.Errorf("global refs = %v, want %s and the archive", got, ref)
	}

	r = e.run("history", "reindex")
	if r.code != 0 || !strings.Contains(r.stdout, "Indexed 3 files, 6 messages") {
		t.Fatalf("reindex:\n%s", r)
	}
	if r := e.run("history", "search", "--scope", "global", "capybara"); r.code != 0 || !strings.Contains(r.stdout, ref) {
		t.Errorf("search after reindex:\n%s", r)
	}
	if r := e.run("history", "search", "***"); r.code != 2 || !strings.Contains(r.stderr, "no words to search for") {
		t.Errorf("a query without words:\n%s", r)
	}
}
