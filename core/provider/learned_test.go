package provider

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStartFromLearned(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name                  string
		rec                   learnedRecord
		age                   time.Duration
		max                   int
		window, recover, edge int
	}{
		{"nothing learned", learnedRecord{}, 0, 64, InitialWindow, 64, 0},
		{"limited, fresh", learnedRecord{Limit: 8, Clean: 8, Updated: now}, 0, 64, 8, 8, 9},
		{"limited, one half-life old", learnedRecord{Limit: 8, Clean: 8, Updated: now}, learnedHalfLife, 64, (8 + InitialWindow) / 2, 8, 9},
		{"limited, too old", learnedRecord{Limit: 8, Clean: 8, Updated: now}, learnedMaxAge + time.Minute, 64, InitialWindow, 64, 0},
		{"limited above the ceiling", learnedRecord{Limit: 48, Clean: 48, Updated: now}, 0, 16, 16, 16, 49},
		{"wide and clean, fresh", learnedRecord{Clean: 64, Updated: now}, 0, 64, 64, 64, 0},
		{"wide and clean, ceiling lower", learnedRecord{Clean: 64, Updated: now}, 0, 40, 40, 40, 0},
		{"wide and clean, two half-lives old", learnedRecord{Clean: 64, Updated: now}, 2 * learnedHalfLife, 64, (64 + 3*InitialWindow) / 4, 64, 0},
		{"clean but never above the default", learnedRecord{Clean: 3, Updated: now}, 0, 64, InitialWindow, 64, 0},
		{"from the future", learnedRecord{Limit: 8, Updated: now}, -time.Hour, 64, InitialWindow, 64, 0},
	}
	for _, c := range cases {
		w, r, e := startFrom(c.rec, c.age, c.max)
		if w != c.window || r != c.recover || e != c.edge {
			t.Errorf("%s: start (window, recover, edge) = (%d, %d, %d), want (%d, %d, %d)", c.name, w, r, e, c.window, c.recover, c.edge)
		}
	}
}

// TestLearnedLimitCarriesOver is one process learning an endpoint's limit
// (a simulated fleet pressing on a hard limit of 8) and saving it, and
// the next process's limiter for that endpoint starting at the limit
// instead of InitialWindow; another endpoint the first process drove wide
// without a refusal starts at its ceiling.
func TestLearnedLimitCarriesOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "endpoints.json")
	UseLearned(path)
	t.Cleanup(func() { UseLearned("") })

	limited := "http://learned.test/" + t.Name() + "/limited"
	wide := "http://learned.test/" + t.Name() + "/wide"
	l := EndpointLimiter(limited, 64)
	if got := l.Stats().Window; got != InitialWindow {
		t.Fatalf("a new endpoint starts at %d, want %d", got, InitialWindow)
	}
	simulate(t, l, 8, 400)
	w := EndpointLimiter(wide, 64)
	simulate(t, w, 1000, 400)
	if err := SaveLearned(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f learnedFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	if rec := f.Endpoints[limited]; rec.Limit < 6 || rec.Limit > 8 {
		t.Fatalf("learned limit of the limited endpoint = %+v, want 6..8:\n%s", rec, data)
	}
	if rec := f.Endpoints[wide]; rec.Limit != 0 || rec.Clean <= InitialWindow {
		t.Fatalf("record of the wide endpoint = %+v, want no limit and clean above %d:\n%s", rec, InitialWindow, data)
	}

	// The next process: fresh limiters for the same endpoints.
	limMu.Lock()
	delete(limiters, limited)
	delete(limiters, wide)
	limMu.Unlock()
	UseLearned(path)
	if got, want := EndpointLimiter(limited, 64).Stats().Window, f.Endpoints[limited].Limit; got != want {
		t.Errorf("the limited endpoint starts at %d, want its learned limit %d", got, want)
	}
	if got := EndpointLimiter(wide, 64).Stats().Window; got != 64 {
		t.Errorf("the wide endpoint starts at %d, want its ceiling 64", got)
	}
	throttled, _ := simulate(t, EndpointLimiter(limited, 64), 8, 400)
	if throttled > 8 {
		t.Errorf("starting from the learned limit, %d requests were refused, want at most 8 (probes only)", throttled)
	}
}
