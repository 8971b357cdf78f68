package goalctl

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"reasonix/core/goal"
	"reasonix/core/tool"
)

// goalReport is what the model last reported through the goal tool.
type goalReport struct {
	Status  string
	Summary string
	Reason  string
}

// GoalBox is the goal and todo tools' mailbox: the tools write from a
// runner's goroutine, the goal controller takes what they wrote when the
// turn ends.
type GoalBox struct {
	mu     sync.Mutex
	report *goalReport
	todo   []goal.Item
	fresh  bool
	// onTodo, when set, is told each list the todo tool sets; it must not
	// block (the controller publishes an event).
	OnTodo func([]goal.Item)
}

func (b *GoalBox) putReport(r goalReport) {
	b.mu.Lock()
	b.report = &r
	b.mu.Unlock()
}

func (b *GoalBox) putTodo(items []goal.Item) {
	b.mu.Lock()
	b.todo, b.fresh = items, true
	b.mu.Unlock()
	b.told(items)
}

func (b *GoalBox) told(items []goal.Item) {
	if b.OnTodo != nil {
		b.OnTodo(append([]goal.Item{}, items...))
	}
}

// Take returns the last report (nil without one) and the todo list when
// it changed this turn.
func (b *GoalBox) Take() (*goalReport, []goal.Item, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, t, fresh := b.report, b.todo, b.fresh
	b.report, b.fresh = nil, false
	return r, t, fresh
}

// Seed sets the list a resumed goal starts from.
func (b *GoalBox) Seed(items []goal.Item) {
	b.mu.Lock()
	b.todo, b.fresh, b.report = items, false, nil
	b.mu.Unlock()
}

// List is the todo list as last set.
func (b *GoalBox) List() []goal.Item {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.todo
}

// GoalTool is the model's way to tell the controller where the goal
// stands.
type GoalTool struct{ Box *GoalBox }

func (*GoalTool) Name() string { return goal.ToolGoal }
func (*GoalTool) Description() string {
	return "Report where the active goal stands, once at the end of each turn of a goal: \"complete\" when the request, output format, constraints and verification are met (or reported as unverified), \"blocked\" with the reason when only the user can unblock you, \"in_progress\" with a summary of this turn otherwise."
}
func (*GoalTool) ReadOnly() bool { return true }
func (*GoalTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"status":{"type":"string","enum":["in_progress","complete","blocked"],"description":"Where the goal stands."},"summary":{"type":"string","description":"What was done and what remains."},"reason":{"type":"string","description":"With blocked: what only the user can provide or decide."}},"required":["status","summary"],"additionalProperties":false}`)
}
func (t *GoalTool) Execute(_ context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Status  string `json:"status" arg:"required"`
		Summary string `json:"summary" arg:"required"`
		Reason  string `json:"reason"`
	}
	if err := tool.DecodeArgs(goal.ToolGoal, raw, &args); err != nil {
		return "", err
	}
	switch args.Status {
	case "in_progress", goal.StatusComplete:
	case goal.StatusBlocked:
		if strings.TrimSpace(args.Reason) == "" {
			args.Reason = args.Summary
		}
	default:
		return "", fmt.Errorf("%s: status %q: want in_progress, complete or blocked", goal.ToolGoal, args.Status)
	}
	t.Box.putReport(goalReport{Status: args.Status, Summary: args.Summary, Reason: args.Reason})
	return "Recorded.", nil
}
