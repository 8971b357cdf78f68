package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent/team"
	"reasonix/actors/fleet/fleetmsg"
)

// Background work passes through the session: a background task's
// result and a subagent's message for its parent go to the agent that
// delegated; a message for an agent goes to the scheduler; an agent with
// results and no turn asks here for one (a wake turn, started now or
// after the running turn and the queued prompts).

// background routes the background messages.
func (s *sessionActor) background(c actor.Context, msg any) {
	switch m := msg.(type) {
	case *fleetmsg.TaskEnded:
		to := s.delegator
		if w := s.fleets[m.FleetID]; w != nil && w.replyTo != nil {
			to = w.replyTo
		}
		if to != nil {
			c.Send(to, m)
		}
	case *fleetmsg.MessageToParent:
		if s.delegator != nil {
			c.Send(s.delegator, m)
		}
	case *fleetmsg.SendMessage:
		if s.scheduler == nil {
			c.Respond(&fleetmsg.MessageSent{Ref: m.Ref, Error: "the session has no subagents"})
		} else {
			c.Forward(s.scheduler)
		}
		s.Answer()
	case *team.BackgroundWake:
		if s.spec.Goal != nil || s.spec.Planner != nil {
			// A goal's or a two-model run's turns are not the executor's
			// to start: the results wait for its next step.
			return
		}
		s.wake = true
		s.next(c)
	case *team.QueryBackground:
		if s.delegator == nil {
			c.Respond(&team.BackgroundStatus{})
		} else {
			c.Forward(s.delegator)
		}
		s.Answer()
	case *team.CancelBackground:
		if s.delegator != nil {
			c.Send(s.delegator, m)
		}
	}
}

// Background reports the background work of the session's delegating
// agent: its agents still running and what it has not read yet.
func (s *Session) Background(timeout time.Duration) (*team.BackgroundStatus, error) {
	res, err := s.sys.Root().RequestFuture(s.pid, &team.QueryBackground{}, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("background status: %w", err)
	}
	st, ok := res.(*team.BackgroundStatus)
	if !ok {
		return nil, fmt.Errorf("background status: unexpected reply %T", res)
	}
	return st, nil
}

// Wake asks for a turn that gives the conversation the background results
// waiting for it; with nothing waiting no turn runs.
func (s *Session) Wake() {
	s.sys.Send(s.pid, &team.BackgroundWake{})
}

// CancelBackground cancels every background task still running; their
// results (cancelled) still come.
func (s *Session) CancelBackground() {
	s.sys.Send(s.pid, &team.CancelBackground{})
}

// SendMessage writes to one of the session's agents as the user: to is
// a task id or name. A running agent reads it at its next step; one that
// finished runs one more turn with it.
func (s *Session) SendMessage(to, text string, timeout time.Duration) (*fleetmsg.MessageSent, error) {
	res, err := s.sys.Root().RequestFuture(s.pid, &fleetmsg.SendMessage{From: "user", To: to, Text: text}, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("send message: %w", err)
	}
	sent, ok := res.(*fleetmsg.MessageSent)
	if !ok {
		return nil, fmt.Errorf("send message: unexpected reply %T", res)
	}
	if sent.Error != "" {
		return sent, fmt.Errorf("send message: %s", sent.Error)
	}
	return sent, nil
}
