package goal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
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

// Load reads the record id from dir.
func Load(dir, id string) (*Record, error) {
	if id == "" || id != filepath.Base(id) || strings.HasPrefix(id, ".") {
		return nil, fmt.Errorf("goal %q: not a goal id", id)
	}
	data, err := os.ReadFile(filepath.Join(dir, id+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("goal %q: %w", id, ErrNoGoal)
	}
	if err != nil {
		return nil, fmt.Errorf("load goal %s: %w", id, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("load goal %s: %w", id, err)
	}
	return &r, nil
}

// List reads every record in dir, newest first. A missing dir is an empty
// list; a record that does not parse is skipped, so one bad file does not
// hide the others.
func List(dir string) ([]*Record, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list goals: %w", err)
	}
	var out []*Record
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		if r, err := Load(dir, id); err == nil {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].StartedAt.Equal(out[j].StartedAt) {
			return out[i].StartedAt.After(out[j].StartedAt)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// Latest is the newest record matching keep, or ErrNoGoal.
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
