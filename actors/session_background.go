package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent/team"
	"reasonix/actors/fleet/fleetmsg"
)

// background routes background work: results and messages for the
// parent go to the agent that delegated, messages for an agent to the
// scheduler, and an agent with results but no turn asks here for one.
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
	case *fleetmsg.MessageToParent, *fleetmsg.FollowupStarted, *team.CancelBackground:
		if s.delegator != nil {
			c.Send(s.delegator, msg)
		}
	case *fleetmsg.SendMessage:
		s.forwardOr(c, s.scheduler, &fleetmsg.MessageSent{Ref: m.Ref, Error: "the session has no subagents"})
	case *team.BackgroundWake:
		if s.spec.Planner != nil {
			return // the coordinator's turns: read at the executor's next step
		}
		if s.delegator == nil {
			s.delegator = c.Sender()
		}
		s.wake = true
		s.next(c)
	case *team.BackgroundStatus:
		// The delegator's answer to askWake: a turn only for what is
		// still waiting (a turn since the wake may have delivered it).
		if s.ledger.Settle(wakeKey) && m.Undelivered > 0 {
			s.wake, s.checkedWake = true, true
			s.next(c)
		}
	case *team.QueryBackground:
		s.forwardOr(c, s.delegator, &team.BackgroundStatus{})
	}
}

// forwardOr passes the question being handled on to to, or answers it
// with none when there is nobody to ask.
func (s *sessionActor) forwardOr(c actor.Context, to *actor.PID, none any) {
	if to == nil {
		c.Respond(none)
	} else {
		c.Forward(to)
	}
	s.Answer()
}

// askWake asks the delegator whether anything still waits for a wake
// turn; its answer (a BackgroundStatus) starts one, or nothing. So a wake
// that a turn made moot never becomes a turn, and the session is busy
// only while a turn really runs.
func (s *sessionActor) askWake(c actor.Context) {
	s.wake = false
	// Through the ledger: an executor gone or wedged cannot hold wakes up.
	s.ledger.Request(c, wakeKey, s.delegator, &team.QueryBackground{}, wakeAsk, func(actor.Context, string) {})
}

// wakeKey is the ledger entry of askWake's question, wakeAsk its deadline.
const (
	wakeKey = "wake"
	wakeAsk = 10 * time.Second
)

// Background reports the background work of the session's delegating
// agent: its agents still running and what it has not read yet.
func (s *Session) Background(timeout time.Duration) (*team.BackgroundStatus, error) {
	return ask[team.BackgroundStatus](s, &team.QueryBackground{}, timeout, "background status")
}

// ask sends msg to the session and waits at most timeout for its reply, a
// *T; what names the question in errors.
func ask[T any](s *Session, msg any, timeout time.Duration, what string) (*T, error) {
	res, err := s.sys.Root().RequestFuture(s.pid, msg, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, ok := res.(*T)
	if !ok {
		return nil, fmt.Errorf("%s: unexpected reply %T", what, res)
	}
	return out, nil
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
	sent, err := ask[fleetmsg.MessageSent](s, &fleetmsg.SendMessage{From: "user", To: to, Text: text}, timeout, "send message")
	if err == nil && sent.Error != "" {
		err = fmt.Errorf("send message: %s", sent.Error)
	}
	return sent, err
}
