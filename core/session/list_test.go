package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/core/goal"
	"reasonix/core/provider"
	"reasonix/core/text"
)

// writeSession writes a closed transcript of h with the given user
// prompts, each answered, and returns its path.
func writeSession(t *testing.T, dir string, h Header, prompts ...string) string {
	t.Helper()
	s, err := Create(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Append(provider.Message{Role: provider.RoleSystem, Content: "sys"}))
	for _, p := range prompts {
		must(s.Append(provider.Message{Role: provider.RoleUser, Content: p}))
		must(s.Append(provider.Message{Role: provider.RoleAssistant, Content: "answer to " + p}))
	}
	must(s.Close())
	return s.Path()
}

func TestList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	long := strings.Repeat("é", 100)
	writeSession(t, dir, Header{ID: "a-old", Created: t0, Model: "m1"}, "first")
	writeSession(t, dir, Header{ID: "c-new", Created: t0.Add(2 * time.Hour), Model: "m2"}, "one", "two\n  lines", long)
	writeSession(t, dir, Header{ID: "b-mid", Created: t0.Add(time.Hour)})
	// Two started in the same second: the later id is newer.
	writeSession(t, dir, Header{ID: "d-tie-1", Created: t0.Add(time.Hour)}, "x")
	writeSession(t, dir, Header{ID: "d-tie-2", Created: t0.Add(time.Hour)}, "y")
	// Subagents of c-new are not sessions of their own.
	writeSession(t, dir, Header{ID: "e-sub", Created: t0.Add(3 * time.Hour), Parent: "c-new", Task: "t1"}, "sub task")
	// Neither are files that are not transcripts, nor an empty transcript
	// whose header never reached the disk.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f-empty.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "g-dir.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}

	got, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range got {
		ids = append(ids, s.ID)
	}
	if want := "c-new d-tie-2 d-tie-1 b-mid a-old"; strings.Join(ids, " ") != want {
		t.Fatalf("order = %v, want %s", ids, want)
	}
	c := got[0]
	if c.Turns != 3 || c.Model != "m2" || !c.Started.Equal(t0.Add(2*time.Hour)) || c.Path != filepath.Join(dir, "c-new.jsonl") {
		t.Errorf("summary = %+v", c)
	}
	if want := strings.Repeat("é", 79) + "…"; c.LastPrompt != want {
		t.Errorf("last prompt = %q, want 80 runes ending in an ellipsis", c.LastPrompt)
	}
	if b := got[3]; b.Turns != 0 || b.LastPrompt != "" {
		t.Errorf("session without prompts = %+v", b)
	}
}

// TestLatestIsLastUsed: --continue goes on with the session whose
// transcript was written last, whenever it started; equal times fall back
// to the later start; a subagent profile's own run and a task's transcript
// are never picked, however recent.
func TestLatestIsLastUsed(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	type sess struct {
		h       Header
		written time.Time
	}
	tests := []struct {
		name     string
		sessions []sess
		want     string
	}{
		{"written last beats started last", []sess{
			{Header{ID: "old", Created: t0}, t0.Add(3 * time.Hour)},
			{Header{ID: "new", Created: t0.Add(time.Hour)}, t0.Add(2 * time.Hour)},
		}, "old"},
		{"equal times: the later start", []sess{
			{Header{ID: "old", Created: t0}, t0.Add(time.Hour)},
			{Header{ID: "new", Created: t0.Add(time.Minute)}, t0.Add(time.Hour)},
		}, "new"},
		{"a profile's own run is never picked", []sess{
			{Header{ID: "mine", Created: t0}, t0.Add(time.Hour)},
			{Header{ID: "try", Created: t0.Add(time.Hour), Kind: KindSubagent, Profile: "explore"}, t0.Add(2 * time.Hour)},
		}, "mine"},
		{"a task's transcript is never picked", []sess{
			{Header{ID: "mine", Created: t0}, t0.Add(time.Hour)},
			{Header{ID: "mine-f1-1-r2", Created: t0.Add(time.Hour), Parent: "mine", Task: "f1.1"}, t0.Add(2 * time.Hour)},
		}, "mine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, s := range tt.sessions {
				path := writeSession(t, dir, s.h, "hello")
				if err := os.Chtimes(path, s.written, s.written); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Latest(dir)
			if err != nil || got.ID != tt.want {
				t.Fatalf("Latest = %+v, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// TestLatestMovesWithAppends: appending to an older session makes it the
// latest; reopening it without writing does not.
func TestLatestMovesWithAppends(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Now().Add(-time.Hour)
	first := writeSession(t, dir, Header{ID: "first", Created: t0}, "one")
	second := writeSession(t, dir, Header{ID: "second", Created: t0.Add(time.Minute)}, "two")
	for i, p := range []string{first, second} {
		at := t0.Add(time.Duration(i+1) * time.Minute)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	latest := func() string {
		t.Helper()
		s, err := Latest(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s.ID
	}
	if got := latest(); got != "second" {
		t.Fatalf("before: Latest = %s, want second", got)
	}
	s, err := Reopen(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := latest(); got != "second" {
		t.Fatalf("after a reopen that wrote nothing: Latest = %s, want second", got)
	}
	s, err = Reopen(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(s.Append(provider.Message{Role: provider.RoleUser, Content: "again"}), s.Close()); err != nil {
		t.Fatal(err)
	}
	if got := latest(); got != "first" {
		t.Fatalf("after an append: Latest = %s, want first", got)
	}
}

// TestListLeavesOutProfileRuns: a `reasonix subagent` session is not a
// session of the workspace's list, like a task's transcript.
func TestListLeavesOutProfileRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeSession(t, dir, Header{ID: "mine", Created: time.Now()}, "x")
	writeSession(t, dir, Header{ID: "try", Created: time.Now(), Kind: KindSubagent, Profile: "explore"}, "look")
	got, err := List(dir)
	if err != nil || len(got) != 1 || got[0].ID != "mine" {
		t.Fatalf("List = %+v, %v; want only mine", got, err)
	}
	h, _, _, err := Load(filepath.Join(dir, "try.jsonl"))
	if err != nil || h.Kind != KindSubagent || h.Profile != "explore" || !h.Subagent() {
		t.Fatalf("header = %+v, %v", h, err)
	}
}

func TestFreeID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if got := FreeID(dir, "p-f1-1"); got != "p-f1-1" {
		t.Fatalf("in an empty dir: %s", got)
	}
	writeSession(t, dir, Header{ID: "p-f1-1", Parent: "p"})
	writeSession(t, dir, Header{ID: "p-f1-1-r2", Parent: "p"})
	if got := FreeID(dir, "p-f1-1"); got != "p-f1-1-r3" {
		t.Fatalf("after two runs: %s, want p-f1-1-r3", got)
	}
}

func TestListDamaged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeSession(t, dir, Header{ID: "good", Created: time.Now()}, "fine")
	torn := writeSession(t, dir, Header{ID: "torn", Created: time.Now().Add(-time.Hour)}, "kept")
	f, err := os.OpenFile(torn, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"type":"message","message":{"role":"user","content":"lo`)
	f.Close()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(testHeader+"{oops\n"+testMsg), 0o600); err != nil {
		t.Fatal(err)
	}

	got, err := List(dir)
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("err = %v, want one naming %s", err, bad)
	}
	if len(got) != 2 || got[0].ID != "good" || got[1].ID != "torn" || got[1].LastPrompt != "kept" {
		t.Fatalf("summaries = %+v, want good then torn (its torn prompt dropped)", got)
	}
}

func TestListOneLineCut(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"short", "short"},
		{"  two\n\tlines  ", "two lines"},
		{strings.Repeat("a", 80), strings.Repeat("a", 80)},
		{strings.Repeat("a", 81), strings.Repeat("a", 79) + "…"},
		{strings.Repeat("日本", 50), strings.Repeat("日本", 39) + "日…"},
	}
	for _, tt := range tests {
		if got := text.OneLine(tt.in, promptRunes); got != tt.want {
			t.Errorf("text.OneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLatestEmpty(t *testing.T) {
	t.Parallel()
	for name, dir := range map[string]string{
		"missing dir":   filepath.Join(t.TempDir(), "none"),
		"subagent only": t.TempDir(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if name == "subagent only" {
				writeSession(t, dir, Header{ID: "s", Parent: "p"}, "x")
			}
			list, err := List(dir)
			if err != nil || len(list) != 0 {
				t.Fatalf("List = %+v, %v", list, err)
			}
			if _, err := Latest(dir); !errors.Is(err, ErrNoSession) {
				t.Fatalf("Latest = %v, want ErrNoSession", err)
			}
		})
	}
}

// BenchmarkList lists a project of 300 sessions of 40 turns each, with a
// tool result of 16 KiB per turn.
func BenchmarkList(b *testing.B) {
	dir := b.TempDir()
	out := strings.Repeat("x", 16<<10)
	for i := range 300 {
		s, err := Create(dir, Header{ID: NewID(time.Unix(int64(i), 0)), Created: time.Unix(int64(i), 0)})
		if err != nil {
			b.Fatal(err)
		}
		for range 40 {
			_ = s.Append(provider.Message{Role: provider.RoleUser, Content: "do the thing"})
			_ = s.Append(provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c", Name: "bash", Arguments: `{}`}}})
			_ = s.Append(provider.Message{Role: provider.RoleTool, ToolCallID: "c", Content: out})
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if list, err := List(dir); err != nil || len(list) != 300 {
			b.Fatalf("%d sessions, %v", len(list), err)
		}
	}
}

// TestListNamesGoalSessions: a goal session's last prompt is its goal
// turn; the listing names the objective instead of the goal block.
func TestListNamesGoalSessions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := &goal.Record{ID: "g1", Objective: "make the build green"}
	writeSession(t, dir, Header{ID: "s1", Created: time.Now()}, goal.Turn(r, goal.Continue))
	got, err := List(dir)
	if err != nil || len(got) != 1 {
		t.Fatalf("List = %v, %v", got, err)
	}
	if got[0].LastPrompt != "goal: make the build green" {
		t.Errorf("last prompt = %q", got[0].LastPrompt)
	}
}
