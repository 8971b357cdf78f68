package history

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"reasonix/core/compact"
	"reasonix/core/provider"
	"reasonix/core/session"
)

// testHome is a Reasonix home with one current project.
type testHome struct {
	t        testing.TB
	home     string
	project  string // the project's workspace path
	sessions string // its transcript directory
}

func newTestHome(t testing.TB) *testHome {
	t.Helper()
	home := t.TempDir()
	project := filepath.Join(home, "work", "app")
	return &testHome{t: t, home: home, project: project, sessions: session.ProjectDir(home, project)}
}

// transcript writes a new transcript with a header and msgs in dir and
// returns its path.
func (h *testHome) transcript(dir, id string, created time.Time, msgs ...provider.Message) string {
	h.t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	path := filepath.Join(dir, id+".jsonl")
	hdr := session.Header{Version: session.FormatVersion, ID: id, Created: created, Cwd: h.project, Model: "m"}
	writeLines(h.t, path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, record("header", hdr))
	h.append(path, msgs...)
	return path
}

// append adds msgs to a transcript as complete lines.
func (h *testHome) append(path string, msgs ...provider.Message) {
	h.t.Helper()
	var lines [][]byte
	for _, m := range msgs {
		lines = append(lines, record("message", m))
	}
	writeLines(h.t, path, os.O_APPEND|os.O_WRONLY, lines...)
}

// archive writes an archive file of recs and returns its path.
func (h *testHome) archive(at time.Time, recs ...compact.ArchiveRecord) string {
	h.t.Helper()
	path, err := compact.WriteArchive(compact.ArchiveDir(h.home), at, recs)
	if err != nil {
		h.t.Fatal(err)
	}
	return path
}

// record encodes one transcript line as session.Store writes it.
func record(typ string, v any) []byte {
	m := map[string]any{"type": typ, typ: v}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

func writeLines(t testing.TB, path string, flag int, lines ...[]byte) {
	t.Helper()
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if _, err := f.Write(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func user(s string) provider.Message { return provider.Message{Role: provider.RoleUser, Content: s} }
func assistant(s string) provider.Message {
	return provider.Message{Role: provider.RoleAssistant, Content: s}
}
func toolResult(id, s string) provider.Message {
	return provider.Message{Role: provider.RoleTool, ToolCallID: id, Content: s}
}

func (h *testHome) open() *Index {
	h.t.Helper()
	ix, err := Open(context.Background(), h.home)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		if err := ix.Close(); err != nil {
			h.t.Error(err)
		}
	})
	return ix
}

func (h *testHome) search(ix *Index, text string, scope Scope) Result {
	h.t.Helper()
	res, err := ix.Search(context.Background(), Query{Text: text, Scope: scope, Sessions: h.sessions})
	if err != nil {
		h.t.Fatalf("search %q: %v", text, err)
	}
	return res
}

// refs lists the refs of a result's hits.
func refs(res Result) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Ref.String())
	}
	return out
}

// rowCount is how many messages the index holds.
func rowCount(t testing.TB, ix *Index) int {
	t.Helper()
	var n int
	if err := ix.db.QueryRow("SELECT count(*) FROM messages").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

var day = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)
