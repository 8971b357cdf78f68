package goal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDamagedRecords: a record file that is cut short, garbage, of
// another goal or of a status never written is a *DamagedError naming
// the cause, never "no goal"; Scan lists it apart from the good records,
// and List and Latest still serve the good ones.
func TestDamagedRecords(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	good := &Record{ID: "g20260102-030405000-aaaa", Session: "20260102-030405-1a2b3c4d", Objective: "fix it",
		Status: StatusRunning, StartedAt: at}
	full := func(t *testing.T) []byte {
		t.Helper()
		dir := t.TempDir()
		if err := Save(dir, good); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, good.ID+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}(t)
	tests := []struct {
		name, id    string
		data        []byte
		cause       string
		wantSession string
	}{
		{"cut short", "g2", full[:len(full)/2], "unexpected end of JSON input", good.Session},
		{"empty", "g3", nil, "unexpected end of JSON input", ""},
		{"garbage", "g4", []byte("\x00\x01garbage"), "invalid character", ""},
		{"another goal's record", "g5", full, `is of goal "` + good.ID + `"`, good.Session},
		{"unknown status", "g6", []byte(`{"id":"g6","session":"s6","status":"ruining"}`), `unknown status "ruining"`, "s6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := Save(dir, good); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tt.id+".json")
			if err := os.WriteFile(path, tt.data, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir, tt.id)
			var d *DamagedError
			if !errors.As(err, &d) || errors.Is(err, ErrNoGoal) {
				t.Fatalf("load: %v, want a damaged record", err)
			}
			if d.ID != tt.id || d.Path != path || d.Session != tt.wantSession || !strings.Contains(d.Err.Error(), tt.cause) ||
				!strings.HasPrefix(err.Error(), "goal "+tt.id+" is damaged: ") {
				t.Fatalf("damage %+v (%v)", d, err)
			}
			recs, damaged, err := Scan(dir)
			if err != nil || len(recs) != 1 || recs[0].ID != good.ID || len(damaged) != 1 || damaged[0].ID != tt.id {
				t.Fatalf("scan: %v records, %v damaged, err %v", recs, damaged, err)
			}
			if l, err := Latest(dir, (*Record).Unfinished); err != nil || l.ID != good.ID {
				t.Fatalf("latest %+v, err %v", l, err)
			}
		})
	}
}

// TestScanOrdersDamagedNewestFirst: damaged records are listed by id,
// which begins with the start time, newest first; a directory and a
// temporary file of Save are not records at all.
func TestScanOrdersDamagedNewestFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, id := range []string{"g20260101-000000000-a", "g20260301-000000000-c", "g20260201-000000000-b"} {
		if err := os.WriteFile(filepath.Join(dir, id+".json"), []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "g20260401-000000000-d.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".g20260501-000000000-e.json.123.tmp"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	recs, damaged, err := Scan(dir)
	if err != nil || len(recs) != 0 {
		t.Fatalf("records %v, err %v", recs, err)
	}
	var ids []string
	for _, d := range damaged {
		ids = append(ids, d.ID)
	}
	if got := strings.Join(ids, " "); got != "g20260301-000000000-c g20260201-000000000-b g20260101-000000000-a" {
		t.Fatalf("damaged %s", got)
	}
}
