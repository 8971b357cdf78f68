package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
	"reasonix/core/session"
)

// TestE2ESessionsList runs two sessions with the real binary and lists
// them, as JSON and as a table.
func TestE2ESessionsList(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	if r := e.run("sessions", "list"); r.code != 0 || !strings.Contains(r.stdout, "No sessions yet") {
		t.Fatalf("empty listing:\n%s", r)
	}
	if r := e.run("sessions", "list", "--json"); r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("empty JSON listing:\n%s", r)
	}

	before := time.Now().Add(-time.Second)
	for _, p := range []string{"first task", "second task, with\na second line"} {
		e.srv.Push(providertest.Turn{Text: "done"})
		if r := e.run("run", p); r.code != 0 {
			t.Fatalf("run %q:\n%s", p, r)
		}
	}
	r := e.run("sessions", "list", "--json")
	if r.code != 0 {
		t.Fatalf("sessions list --json:\n%s", r)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("output is not a JSON array: %v\n%s", err, r)
	}
	if len(got) != 2 {
		t.Fatalf("listed %d sessions, want 2:\n%s", len(got), r.stdout)
	}
	transcripts := e.transcripts()
	wantPrompts := []string{"second task, with a second line", "first task"}
	var ids []string
	for i, s := range got {
		keys := make([]string, 0, len(s))
		for k := range s {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := "id last_prompt model path started turns"; strings.Join(keys, " ") != want {
			t.Fatalf("fields = %v, want %s", keys, want)
		}
		if s["last_prompt"] != wantPrompts[i] || s["turns"] != 1.0 || s["model"] == "" {
			t.Errorf("session %d = %v, want last prompt %q, one turn, a model", i, s, wantPrompts[i])
		}
		started, err := time.Parse(time.RFC3339, s["started"].(string))
		if err != nil || started.Before(before) || started.After(time.Now()) {
			t.Errorf("started = %v (%v), want between %v and now", s["started"], err, before)
		}
		path := s["path"].(string)
		if !slices.ContainsFunc(transcripts, func(p string) bool { return samePath(p, path) }) {
			t.Errorf("path %s is not one of the transcripts %v", path, transcripts)
		}
		h, _, _, err := session.Load(path)
		if err != nil || h.ID != s["id"] || h.Model != s["model"] {
			t.Errorf("transcript %s has header %+v (%v), listed as %v", path, h, err, s)
		}
		ids = append(ids, s["id"].(string))
	}
	if ids[0] == ids[1] {
		t.Fatalf("both sessions have id %s", ids[0])
	}

	r = e.run("sessions", "list")
	if r.code != 0 {
		t.Fatalf("sessions list:\n%s", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "LAST PROMPT") ||
		!strings.HasPrefix(lines[1], ids[0]) || !strings.HasSuffix(lines[1], wantPrompts[0]) ||
		!strings.HasPrefix(lines[2], ids[1]) || !strings.HasSuffix(lines[2], wantPrompts[1]) {
		t.Fatalf("table:\n%s", r.stdout)
	}

	// Another workspace has sessions of its own.
	other := t.TempDir()
	if r := e.run("sessions", "list", "--json", "--cwd", other); r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("listing of another workspace:\n%s", r)
	}
}
