package goalctl

import (
	"fmt"
	"sync"
	"time"

	"reasonix/actors/agent"
	"reasonix/core/goal"
	"reasonix/core/provider"
)

// Meter is a goal's step budget, shared by the goal controller and the
// executor it runs. Armed for a goal turn, it holds the turn to what is
// left of the goal's token and time budgets, and runs the progress lease
// over the turn's tool-call rounds: the round that brings the
// reassessment nudge, or runs the lease out, ends the turn, and the
// controller reads the lease back when the turn is over. Disarmed (between
// goal turns, and for ordinary turns) it stops nothing.
type Meter struct {
	mu sync.Mutex
	// box holds the todo list, whose completions count as progress.
	box *GoalBox
	now func() time.Time

	armed  bool
	limits goal.Limits
	// tokens is what the goal had used when the turn began; spent what the
	// turn has used since.
	tokens, spent int
	// The goal's time is base plus the time since started.
	base    time.Duration
	started time.Time
	lease   goal.Lease
	// rounds counts the turn's tool-call rounds; verdict is the lease's
	// word on the last of them.
	rounds  int
	verdict goal.Verdict
}

// NewMeter is a disarmed meter reading the clock through now (nil:
// time.Now).
func NewMeter(now func() time.Time) *Meter {
	if now == nil {
		now = time.Now
	}
	return &Meter{now: now}
}

// Watch makes box's todo completions count as progress.
func (m *Meter) Watch(box *GoalBox) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.box = box
}

// Arm opens a goal turn of rec, whose run began at started with base of
// the goal's time already used.
func (m *Meter) Arm(rec *goal.Record, base time.Duration, started time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.armed, m.limits = true, rec.Limits
	m.tokens, m.spent = rec.Tokens, 0
	m.base, m.started = base, started
	m.lease = rec.Lease
	m.lease.Seen = append([]string(nil), rec.Lease.Seen...)
	m.rounds, m.verdict = 0, goal.Idle
}

// Disarm closes the goal turn and returns the lease as the turn left it,
// how many tool-call rounds the turn had and the lease's last verdict.
func (m *Meter) Disarm() (goal.Lease, int, goal.Verdict) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.armed = false
	return m.lease, m.rounds, m.verdict
}

// Spend counts tokens the turn used.
func (m *Meter) Spend(tokens int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.spent += tokens
}

// Exhausted checks tokens and time; turns are counted between goal turns.
func (m *Meter) Exhausted() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.armed {
		return ""
	}
	return m.limits.Reached(0, m.tokens+m.spent, m.base+m.now().Sub(m.started))
}

// Round closes one tool-call round. Its acts are its successful calls
// other than goal and todo, by tool and arguments, and the todo list's
// completed items; a round with one not seen before renews the lease.
func (m *Meter) Round(calls []provider.ToolCall, results []*agent.ToolResult) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.armed {
		return ""
	}
	var acts []string
	if m.box != nil {
		acts = goal.Completions(m.box.List())
	}
	for i, c := range calls {
		if i >= len(results) || results[i] == nil || results[i].IsError || c.Name == goal.ToolGoal || c.Name == goal.ToolTodo {
			continue
		}
		acts = append(acts, c.Name+"\x00"+c.Arguments)
	}
	m.rounds++
	m.verdict = m.lease.Round(acts)
	switch m.verdict {
	case goal.Nudge:
		return fmt.Sprintf("no progress for %d tool rounds: the goal's next turn asks for a reassessment", m.lease.NoProgress)
	case goal.Pause:
		return fmt.Sprintf("no progress for %d tool rounds", m.lease.NoProgress)
	}
	return ""
}
