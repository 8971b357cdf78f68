package goal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"reasonix/core/atomicfile"
)

// Statuses of a goal record. Running is the only unfinished one a crash
// can leave behind; Paused and Blocked wait for the user; the rest are
// ends.
const (
	StatusRunning  = "running"
	StatusComplete = "complete"
	StatusBlocked  = "blocked"
	StatusPaused   = "paused"
	StatusLimit    = "limit"
	StatusStopped  = "stopped"
	StatusFailed   = "failed"
)

// Strategies of a goal.
const (
	StrategySimple   = "simple"
	StrategyResearch = "research"
)

// Limits bound one goal. Zero means no limit, except MaxTurns, which has
// the safety default DefaultMaxTurns.
type Limits struct {
	MaxTurns  int           `json:"max_turns,omitempty"`
	MaxTokens int           `json:"max_tokens,omitempty"`
	MaxTime   time.Duration `json:"max_time,omitempty"`
}

// DefaultMaxTurns is the safety continuation limit of a goal started
// without --max-turns: a goal that never reports an end still stops.
const DefaultMaxTurns = 1000

// Record is the durable state of one goal: enough to tell where it stands
// and to continue it after the process died.
type Record struct {
	ID        string `json:"id"`
	Session   string `json:"session"`
	Workspace string `json:"workspace,omitempty"`
	Objective string `json:"objective"`
	Strategy  string `json:"strategy"`
	Status    string `json:"status"`
	Limits    Limits `json:"limits"`
	// Turns, Tokens and Elapsed are what the goal has used so far; they
	// carry over a resume.
	Turns   int           `json:"turns"`
	Tokens  int           `json:"tokens"`
	Elapsed time.Duration `json:"elapsed"`
	// Summary is the model's last report (or the host's reason at an end).
	Summary string `json:"summary,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Blocked is the normalised blocked reason and how many reports in a
	// row gave it.
	Blocked      string `json:"blocked,omitempty"`
	BlockedCount int    `json:"blocked_count,omitempty"`
	Todo         []Item `json:"todo,omitempty"`
	Lease        Lease  `json:"lease"`
	// Research is the AutoResearch directory, for that strategy.
	Research  string    `json:"research,omitempty"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Unfinished reports whether the goal can be resumed.
func (r *Record) Unfinished() bool {
	switch r.Status {
	case StatusRunning, StatusPaused, StatusBlocked, StatusLimit, StatusFailed:
		return true
	}
	return false
}

// ErrNoGoal is returned when a workspace has no goal to show or resume.
var ErrNoGoal = errors.New("no goal")

// Save writes r to dir/<id>.json atomically: a crash leaves the previous
// record or this one, never a torn file.
func Save(dir string, r *Record) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save goal %s: %w", r.ID, err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("save goal %s: %w", r.ID, err)
	}
	if err := atomicfile.Write(filepath.Join(dir, r.ID+".json"), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("save goal %s: %w", r.ID, err)
	}
	return nil
}

// DamagedError is the error of a goal record file that exists but does
// not hold a goal record: it was cut short, overwritten or edited by hand.
// It is never taken for "no goal": the goal was there, and what it held
// is lost. Session is the goal's session when it could still be read from
// the damaged file, so its conversation can be continued.
type DamagedError struct {
	ID, Path string
	Session  string
	Err      error
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("goal %s is damaged: %v", e.ID, e.Err)
}

func (e *DamagedError) Unwrap() error { return e.Err }

// Load reads the record id from dir. A file that does not parse, or whose
// record names another goal or an unknown status, is a *DamagedError.
func Load(dir, id string) (*Record, error) {
	if id == "" || id != filepath.Base(id) || strings.HasPrefix(id, ".") {
		return nil, fmt.Errorf("goal %q: not a goal id", id)
	}
	path := filepath.Join(dir, id+".json")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("goal %q: %w", id, ErrNoGoal)
	}
	if err != nil {
		return nil, fmt.Errorf("load goal %s: %w", id, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, &DamagedError{ID: id, Path: path, Session: salvageSession(data), Err: err}
	}
	if err := r.check(id); err != nil {
		return nil, &DamagedError{ID: id, Path: path, Session: r.Session, Err: err}
	}
	return &r, nil
}

// check says what makes a parsed record unusable as the goal id: Save
// names the file after the record's id, so another id means the file was
// copied or edited, and a status the controller never writes cannot be
// resumed or reported.
func (r *Record) check(id string) error {
	if r.ID != id {
		return fmt.Errorf("the record in %s.json is of goal %q", id, r.ID)
	}
	switch r.Status {
	case StatusRunning, StatusComplete, StatusBlocked, StatusPaused, StatusLimit, StatusStopped, StatusFailed:
		return nil
	}
	return fmt.Errorf("unknown status %q", r.Status)
}

// sessionField finds the session id in what is left of a record. Save
// writes it second, so a record cut short usually still has it. It is
// compiled on first use: the bounded repetition makes a large program,
// which cost every command a third of a millisecond at start.
var sessionField = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"session"\s*:\s*"([A-Za-z0-9._-]{1,200})"`)
})

// salvageSession is the session id a damaged record still names, or "".
func salvageSession(data []byte) string {
	if m := sessionField().FindSubmatch(data); m != nil {
		return string(m[1])
	}
	return ""
}

// List reads every record in dir, newest first. A missing dir is an empty
// list; a damaged record is left out, so one bad file does not hide the
// others (Scan also returns it).
func List(dir string) ([]*Record, error) {
	out, _, err := Scan(dir)
	return out, err
}

// Scan reads every record in dir, newest first, and returns the damaged
// ones (and any it could not read) apart, by id, newest first, so that a
// listing can show them rather than leave them out. A missing dir holds
// nothing.
func Scan(dir string) ([]*Record, []*DamagedError, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list goals: %w", err)
	}
	var (
		out     []*Record
		damaged []*DamagedError
	)
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		// No goal id is hidden: such a file is not a record.
		if !ok || e.IsDir() || strings.HasPrefix(id, ".") {
			continue
		}
		r, err := Load(dir, id)
		var d *DamagedError
		switch {
		case err == nil:
			out = append(out, r)
		case errors.Is(err, ErrNoGoal):
			// Removed since the listing.
		case errors.As(err, &d):
			damaged = append(damaged, d)
		default:
			// Unreadable is as lost to the listing as damaged, and one
			// such file must not hide the others.
			damaged = append(damaged, &DamagedError{ID: id, Path: filepath.Join(dir, e.Name()), Err: errors.Unwrap(err)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].StartedAt.Equal(out[j].StartedAt) {
			return out[i].StartedAt.After(out[j].StartedAt)
		}
		return out[i].ID > out[j].ID
	})
	// Goal ids begin with their start time, so by id is newest first too.
	sort.Slice(damaged, func(i, j int) bool { return damaged[i].ID > damaged[j].ID })
	return out, damaged, nil
}

// Latest is the newest record matching keep, or ErrNoGoal. Damaged
// records are not candidates: Scan says which they are.
func Latest(dir string, keep func(*Record) bool) (*Record, error) {
	all, err := List(dir)
	if err != nil {
		return nil, err
	}
	for _, r := range all {
		if keep == nil || keep(r) {
			return r, nil
		}
	}
	return nil, ErrNoGoal
}
