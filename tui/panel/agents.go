package panel

import (
	"strings"

	"reasonix/actors/event"
	"reasonix/core/text"
)

// agentLine is an agent the session started, kept after its fleet folds
// out of the panel so it can still be listed and written to.
type agentLine struct {
	id, name, prompt, state string
	background              bool
}

// noteAgent keeps the agent lines up to date with ev.
func (f *Fleet) noteAgent(task string, ev event.Event) {
	a := f.agents[task]
	if a == nil {
		if _, ok := ev.(*event.TaskQueued); !ok {
			return
		}
		if f.agents == nil {
			f.agents = map[string]*agentLine{}
		}
		a = &agentLine{id: task}
		f.agents[task] = a
		f.agentOrder = append(f.agentOrder, task)
	}
	switch e := ev.(type) {
	case *event.TaskQueued:
		a.name, a.prompt, a.background, a.state = clean(e.Name), clean(e.Prompt), e.Background, stateQueued
	case *event.TaskStarted:
		a.state = stateRunning
	case *event.TaskDone:
		a.state = e.Status
	}
}

// Tasks lists the fleet's background tasks for /tasks, one line each: id,
// name, state and prompt, the newest last. Without any it says so, and
// how a task is written to.
func (f *Fleet) Tasks() string {
	var b strings.Builder
	for _, id := range f.agentOrder {
		a := f.agents[id]
		if !a.background {
			continue
		}
		b.WriteString(a.id)
		if a.name != "" {
			b.WriteString(" (" + a.name + ")")
		}
		b.WriteString("  " + a.state + "  " + text.OneLine(a.prompt, 60) + "\n")
	}
	if b.Len() == 0 {
		return "no background tasks (a task or fleet call with \"background\": true runs one)"
	}
	return b.String() + "@<task> <message> writes to one: a running task reads it at its next step, a finished one answers it in one more turn"
}

// Addressed reads a message to an agent, "@<task> <text>" where task is
// the id or name of one of the fleet's tasks: anything else (a file
// reference such as @notes.txt) is not one.
func (f *Fleet) Addressed(input string) (to, msg string, ok bool) {
	rest, found := strings.CutPrefix(input, "@")
	if !found {
		return "", "", false
	}
	to, msg, _ = strings.Cut(rest, " ")
	msg = strings.TrimSpace(msg)
	if to == "" || msg == "" {
		return "", "", false
	}
	for _, a := range f.agents {
		if a.id == to || a.name != "" && a.name == to {
			return to, msg, true
		}
	}
	return "", "", false
}

// fresh reports whether an event with meta m is new to the panel (a
// replay of one it folded already is not), and notes its seq.
func (f *Fleet) fresh(m *event.Meta) bool {
	if m.Seq == 0 {
		return true
	}
	if m.Seq <= f.seq {
		return false
	}
	f.seq = m.Seq
	return true
}
