package team

import (
	"strings"
	"sync"

	"reasonix/actors/event"
	"reasonix/core/provider"
)

// TaskMeter stands between a subagent and the bus. The scheduler closes it
// as it publishes the task's task_done, under the same lock the subagent
// publishes under, so no event of a task can follow its task_done on the
// stream, whatever the subagent is still doing while it stops. On the way
// it meters the task: every usage event is one model turn, and a task
// whose tokens or turns reach its budget is reported to the scheduler
// once, through over.
type TaskMeter struct {
	mu     sync.Mutex
	closed bool

	Budget event.Budget
	Over   func(what string)
	// reached is the ceiling the task reached, once it has.
	reached string
	turns   int
	usage   provider.Usage
	// price, when known, turns usage into cost.
	Price *event.Price
	// tool is the last tool the task called and tail its output's last
	// lines (the one being written last), for task_status.
	tool string
	tail []string
}

// liveLines is how many lines of a task's output Live keeps.
const liveLines = 8

// SetPrice sets the price that turns usage into cost (a remote task's,
// once its worker reported its model).
func (g *TaskMeter) SetPrice(p *event.Price) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.Price = p
}

// Publish puts ev on bus unless the meter is closed.
func (g *TaskMeter) Publish(bus *event.Bus, ev event.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	switch e := ev.(type) {
	case *event.UsageReported:
		g.meter(e.Usage)
	case *event.ToolStarted:
		g.tool = e.Tool
	case *event.TextDelta:
		g.write(e.Text)
	}
	bus.Publish(ev)
}

// write adds streamed text to the tail.
func (g *TaskMeter) write(s string) {
	parts := strings.Split(s, "\n")
	if len(g.tail) == 0 {
		g.tail = []string{""}
	}
	g.tail[len(g.tail)-1] += parts[0]
	g.tail = append(g.tail, parts[1:]...)
	if over := len(g.tail) - liveLines; over > 0 {
		g.tail = append([]string(nil), g.tail[over:]...)
	}
}

// Live returns the task's last tool, its tokens so far and the last lines
// of its output.
func (g *TaskMeter) Live() (tool string, tokens int, lines []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, l := range g.tail {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return g.tool, g.usage.PromptTokens + g.usage.CompletionTokens, lines
}

// meter counts one model turn and checks the budget.
func (g *TaskMeter) meter(u provider.Usage) {
	g.turns++
	g.usage.Add(u)
	if g.Over == nil || g.reached != "" {
		return
	}
	what := ""
	switch {
	case g.Budget.Tokens > 0 && g.usage.PromptTokens+g.usage.CompletionTokens >= g.Budget.Tokens:
		what = "tokens"
	case g.Budget.Turns > 0 && g.turns >= g.Budget.Turns:
		what = "turns"
	case g.Budget.Cost > 0 && g.Price != nil && g.Price.Cost(g.usage) >= g.Budget.Cost:
		what = "cost"
	}
	if what != "" {
		g.reached = what
		g.Over(what)
	}
}

// Exhausted returns the ceiling the task has reached, or "".
func (g *TaskMeter) Exhausted() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reached
}

// Spent returns the turns, usage and cost (zero without a price) metered
// so far.
func (g *TaskMeter) Spent() (int, provider.Usage, float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cost := 0.0
	if g.Price != nil {
		cost = g.Price.Cost(g.usage)
	}
	return g.turns, g.usage, cost
}

// Close publishes last, the task's final event, and closes the meter.
func (g *TaskMeter) Close(bus *event.Bus, last event.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if bus != nil && !g.closed {
		bus.Publish(last)
	}
	g.closed = true
}
