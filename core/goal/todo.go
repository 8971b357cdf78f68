package goal

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// Todo statuses.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// Item is one entry of a goal's todo list. Level 0 is a phase, level 1 a
// sub-step of the phase above it.
type Item struct {
	Content string `json:"content"`
	Status  string `json:"status"`
	Level   int    `json:"level,omitempty"`
}

// CheckTodo enforces the serial contract on a whole list: at most one item
// in progress; a sub-step has a phase above it; a phase's sub-steps
// complete in order, and while one of them is in progress (or any is
// unfinished) the phase stays pending, so it starts and signs off only
// after all of them.
func CheckTodo(items []Item) error {
	active := -1
	phase := -1
	for i, it := range items {
		if it.Content == "" {
			return fmt.Errorf("item %d: empty content", i+1)
		}
		switch it.Status {
		case TodoPending, TodoInProgress, TodoCompleted:
		default:
			return fmt.Errorf("item %d: status %q: want pending, in_progress or completed", i+1, it.Status)
		}
		if it.Status == TodoInProgress {
			if active >= 0 {
				return fmt.Errorf("items %d and %d are both in_progress: work on one at a time", active+1, i+1)
			}
			active = i
		}
		switch it.Level {
		case 0:
			phase = i
		case 1:
			if phase < 0 {
				return fmt.Errorf("item %d: a level-1 sub-step needs a level-0 phase above it", i+1)
			}
		default:
			return fmt.Errorf("item %d: level %d: want 0 (a phase) or 1 (a sub-step)", i+1, it.Level)
		}
	}
	for p := 0; p < len(items); p++ {
		if items[p].Level != 0 {
			continue
		}
		open := false
		for s := p + 1; s < len(items) && items[s].Level == 1; s++ {
			if items[s].Status == TodoCompleted && open {
				return fmt.Errorf("item %d: sub-steps complete in order; an earlier one is not completed", s+1)
			}
			if items[s].Status != TodoCompleted {
				open = true
			}
		}
		if open && items[p].Status != TodoPending {
			return fmt.Errorf("item %d: the phase stays pending until all its sub-steps are completed", p+1)
		}
	}
	return nil
}

// Completions lists the completed items' keys, for the lease.
func Completions(items []Item) []string {
	var out []string
	for _, it := range items {
		if it.Status == TodoCompleted {
			out = append(out, "done\x00"+it.Content)
		}
	}
	return out
}

// The progress lease: tool-call rounds without progress before the nudge
// and before the goal pauses.
const (
	NudgeAfter = 8
	PauseAfter = 16
)

// Lease tracks progress across a goal's tool-call rounds. Seen holds a hash
// of every act that counted once, so an exact repeat never renews the
// lease again.
type Lease struct {
	Seen       []string `json:"seen,omitempty"`
	NoProgress int      `json:"no_progress"`
	Nudged     bool     `json:"nudged,omitempty"`
}

// Verdict is what the lease says at the end of a round.
type Verdict int

// Lease verdicts.
const (
	Renewed Verdict = iota
	Idle
	Nudge
	Pause
)

// ErrLeaseExpired is the reason a goal pauses on its lease.
var ErrLeaseExpired = errors.New("no progress for 16 rounds")

// Round closes one round whose acts are keys: a new completion, or a
// successful read, command or mutation named by tool and arguments. A
// round with at least one unseen act renews the lease.
func (l *Lease) Round(acts []string) Verdict {
	seen := make(map[string]bool, len(l.Seen))
	for _, h := range l.Seen {
		seen[h] = true
	}
	renewed := false
	for _, a := range acts {
		sum := sha256.Sum256([]byte(a))
		h := hex.EncodeToString(sum[:8])
		if !seen[h] {
			seen[h] = true
			l.Seen = append(l.Seen, h)
			renewed = true
		}
	}
	if renewed {
		l.NoProgress, l.Nudged = 0, false
		return Renewed
	}
	l.NoProgress++
	switch {
	case l.NoProgress >= PauseAfter:
		return Pause
	case l.NoProgress >= NudgeAfter && !l.Nudged:
		l.Nudged = true
		return Nudge
	}
	return Idle
}
