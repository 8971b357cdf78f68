package actors

import (
	"sync"

	"reasonix/actors/event"
	"reasonix/core/provider"
)

// taskGate stands between a subagent and the bus. The scheduler closes it
// as it publishes the task's task_done, under the same lock the subagent
// publishes under, so no event of a task can follow its task_done on the
// stream, whatever the subagent is still doing while it stops. On the way
// it meters the task: every usage event is one model turn, and a task
// whose tokens or turns reach its budget is reported to the scheduler
// once, through over.
type taskGate struct {
	mu     sync.Mutex
	closed bool

	budget event.Budget
	over   func(what string)
	// reached is the ceiling the task reached, once it has.
	reached string
	turns   int
	usage   provider.Usage
	// price, when known, turns usage into cost.
	price *event.Price
}

// publish puts ev on bus unless the gate is closed.
func (g *taskGate) publish(bus *event.Bus, ev event.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	if u, ok := ev.(*event.UsageReported); ok {
		g.meter(u.Usage)
	}
	bus.Publish(ev)
}

// meter counts one model turn and checks the budget.
func (g *taskGate) meter(u provider.Usage) {
	g.turns++
	g.usage.Add(u)
	if g.over == nil || g.reached != "" {
		return
	}
	what := ""
	switch {
	case g.budget.Tokens > 0 && g.usage.PromptTokens+g.usage.CompletionTokens >= g.budget.Tokens:
		what = "tokens"
	case g.budget.Turns > 0 && g.turns >= g.budget.Turns:
		what = "turns"
	case g.budget.Cost > 0 && g.price != nil && g.price.Cost(g.usage) >= g.budget.Cost:
		what = "cost"
	}
	if what != "" {
		g.reached = what
		g.over(what)
	}
}

// exhausted returns the ceiling the task has reached, or "".
func (g *taskGate) exhausted() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reached
}

// spent returns the turns, usage and cost (zero without a price) metered
// so far.
func (g *taskGate) spent() (int, provider.Usage, float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cost := 0.0
	if g.price != nil {
		cost = g.price.Cost(g.usage)
	}
	return g.turns, g.usage, cost
}

// close publishes last, the task's final event, and shuts the gate.
func (g *taskGate) close(bus *event.Bus, last event.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if bus != nil && !g.closed {
		bus.Publish(last)
	}
	g.closed = true
}
