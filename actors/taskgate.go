package actors

import "sync"

// taskGate stands between a subagent and the bus. The scheduler closes it
// as it publishes the task's task_done, under the same lock the subagent
// publishes under, so no event of a task can follow its task_done on the
// stream, whatever the subagent is still doing while it stops.
type taskGate struct {
	mu     sync.Mutex
	closed bool
}

// publish puts ev on bus unless the gate is closed.
func (g *taskGate) publish(bus *Bus, ev Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		bus.Publish(ev)
	}
}

// close publishes last, the task's final event, and shuts the gate.
func (g *taskGate) close(bus *Bus, last Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if bus != nil && !g.closed {
		bus.Publish(last)
	}
	g.closed = true
}
