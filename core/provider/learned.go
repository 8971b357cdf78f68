package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"reasonix/core/atomicfile"
)

// LearnedFile is where, under the Reasonix home, the endpoints' learned
// concurrency limits are kept between processes.
const LearnedFile = "state/endpoints.json"

// How long what was learned about an endpoint counts. A record's weight
// halves every learnedHalfLife; past learnedMaxAge it is ignored. A
// provider's limit moves (plans change, load varies), so old knowledge
// drifts back to InitialWindow rather than holding a window down, or up,
// for good.
const (
	learnedHalfLife = time.Hour
	learnedMaxAge   = 24 * time.Hour
)

// learnedRecord is what one process's limiter learned about an endpoint.
type learnedRecord struct {
	// Limit is the highest in-flight level the endpoint accepted while it
	// turned away requests above it; zero when it turned none away.
	Limit int `json:"limit,omitempty"`
	// Clean is the highest in-flight level at which a request succeeded.
	Clean int `json:"clean"`
	// Updated is when it was learned.
	Updated time.Time `json:"updated"`
}

type learnedFile struct {
	Version   int                      `json:"version"`
	Endpoints map[string]learnedRecord `json:"endpoints"`
}

var (
	learnMu   sync.Mutex
	learnPath string
	learned   map[string]learnedRecord
)

// UseLearned makes the endpoint limiters created from now on start from
// what the file at path (normally <home>/state/endpoints.json) records of
// their endpoint, and SaveLearned write what they learn back to it. A
// missing file is an empty one; a damaged one is ignored (it only ever
// holds hints) and replaced at the next save. An empty path stops it.
func UseLearned(path string) {
	recs := map[string]learnedRecord{}
	if path != "" {
		recs, _ = readLearned(path)
	}
	learnMu.Lock()
	defer learnMu.Unlock()
	learnPath, learned = path, recs
}

func readLearned(path string) (map[string]learnedRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return map[string]learnedRecord{}, nil
		}
		return map[string]learnedRecord{}, fmt.Errorf("read learned limits: %w", err)
	}
	var f learnedFile
	if err := json.Unmarshal(data, &f); err != nil || f.Endpoints == nil {
		return map[string]learnedRecord{}, fmt.Errorf("read learned limits: %s is not a limits file", path)
	}
	return f.Endpoints, nil
}

// learnedFor is the record of endpoint in the file in use, and that
// file's path ("" when UseLearned was not called).
func learnedFor(endpoint string) (learnedRecord, string) {
	learnMu.Lock()
	defer learnMu.Unlock()
	return learned[endpoint], learnPath
}

// startFrom is where a limiter with ceiling max starts, given what was
// learned about its endpoint age ago: the window, the level below which
// each success adds one (recover), and the level known to be refused
// (edge, zero when none is known). With nothing learned it is
// min(max, InitialWindow). A limited endpoint starts at the limit it
// accepted, and probes past it slowly; one that took high concurrency
// without refusing starts there, up to the ceiling. Both move back
// towards InitialWindow as the record ages.
func startFrom(rec learnedRecord, age time.Duration, max int) (window, recover, edge int) {
	window, recover = min(max, InitialWindow), max
	if rec.Updated.IsZero() || age < 0 || age > learnedMaxAge {
		return window, recover, 0
	}
	target := rec.Limit
	if target == 0 {
		if rec.Clean <= InitialWindow {
			return window, recover, 0 // nothing learned above the default
		}
		target = rec.Clean
	}
	w := math.Exp2(-float64(age) / float64(learnedHalfLife))
	start := int(math.Round(w*float64(target) + (1-w)*float64(InitialWindow)))
	window = max1(min(max, start))
	if rec.Limit > 0 {
		recover, edge = min(max, rec.Limit), rec.Limit+1
	}
	return window, recover, edge
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// SaveLearned writes what each endpoint limiter created after UseLearned
// learned about its endpoint to the file it started from: the limit, if
// the endpoint refused requests, and the highest level that succeeded. A
// limiter that learned nothing beyond the default window (say, one chat,
// a request at a time) leaves its endpoint's record as it was, so old
// knowledge keeps aging rather than being refreshed by no evidence.
// Records of other endpoints in the file are kept.
func SaveLearned() error {
	now := time.Now()
	byPath := map[string]map[string]learnedRecord{}
	limMu.Lock()
	for endpoint, l := range limiters {
		l.mu.Lock()
		path, rec, ok := l.store, learnedRecord{Clean: l.peakClean, Updated: now}, false
		if l.throttled > 0 {
			if rec.Limit = l.learnedLimit(); rec.Limit == 0 {
				rec.Limit = max1(l.recover)
			}
			ok = true
		} else if l.peakClean > InitialWindow {
			ok = true
		}
		l.mu.Unlock()
		if path == "" || !ok {
			continue
		}
		if byPath[path] == nil {
			byPath[path] = map[string]learnedRecord{}
		}
		byPath[path][endpoint] = rec
	}
	limMu.Unlock()
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var errs []error
	for _, path := range paths {
		recs, _ := readLearned(path)
		for ep, rec := range byPath[path] {
			recs[ep] = rec
		}
		for ep, rec := range recs {
			if now.Sub(rec.Updated) > learnedMaxAge {
				delete(recs, ep)
			}
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			errs = append(errs, fmt.Errorf("save learned limits: %w", err))
			continue
		}
		if err := atomicfile.WriteJSON(path, learnedFile{Version: 1, Endpoints: recs}, 0o600); err != nil {
			errs = append(errs, fmt.Errorf("save learned limits: %w", err))
		}
	}
	return errors.Join(errs...)
}
