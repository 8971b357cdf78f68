package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/fleet/fleetmsg"
)

// The session is the front door of its scheduler: the executor sends its
// delegation calls here, and the session passes each to the scheduler
// through its ledger. A scheduler that stops (its repair itself failed, or
// something stopped it) is started again, and every fleet it held goes on
// in the new one from the fleet journal: finished tasks keep their
// results, the running ones run again (or fail, per agent.resume_running)
// and the queued ones start. Without a journal there is nothing to go on
// from, so those fleets fail and only later ones use the new scheduler.

// fleetWait is a fleet passed on to the scheduler and not yet answered.
type fleetWait struct {
	submit  *fleetmsg.SubmitFleet
	replyTo *actor.PID
	// cancelled says a CancelFleet came for it; a restarted scheduler is
	// told again.
	cancelled bool
}

// schedulerRestarts bounds how often the scheduler is started again within
// restartWindow: a scheduler that keeps dying is left stopped, and its
// fleets fail, rather than replaying a crash forever.
const (
	schedulerRestarts = 3
	restartWindow     = time.Minute
)

// fleetWaitKey is the session's ledger entry for a fleet at the scheduler.
func fleetWaitKey(id string) string { return "fleet/" + id }

// spawnScheduler starts the session's scheduler. Each incarnation has a
// name of its own, so the end of an old one is never taken for the end of
// the new.
func (s *sessionActor) spawnScheduler(c actor.Context) error {
	s.schedulerSeq++
	name := "scheduler"
	if s.schedulerSeq > 1 {
		name = fmt.Sprintf("scheduler-%d", s.schedulerSeq)
	}
	pid, err := c.SpawnNamed(fleet.FleetProps(s.sys, s.spec.Agent.Session, s.spec.Agent.Bus, *s.fleetSpec), name)
	if err != nil {
		s.scheduler = nil
		return fmt.Errorf("spawn scheduler: %w", err)
	}
	s.scheduler = pid
	return nil
}

// durable reports whether the scheduler journals its fleets.
func (s *sessionActor) durable() bool {
	return s.fleetSpec != nil && (s.fleetSpec.Journal != nil || s.fleetSpec.JournalHome != "")
}

// submitFleet takes a delegation call's fleet and passes it on. A durable
// fleet gets its journal key here, so a restarted scheduler finds it.
func (s *sessionActor) submitFleet(c actor.Context, m *fleetmsg.SubmitFleet) {
	fail := func(why string) {
		if c.Sender() != nil {
			c.Respond(failedFleet(m, why))
		}
	}
	switch {
	case s.fleetSpec == nil:
		fail("the session has no scheduler")
		return
	case m.FleetID == "" || s.fleets[m.FleetID] != nil:
		fail("duplicate or empty fleet id")
		return
	}
	sub := m
	if m.Key == "" && s.durable() {
		cp := *m
		cp.Key, cp.FromJournal = fleet.JournalKey(s.spec.Agent.Session, m.FleetID, time.Now()), true
		sub = &cp
	}
	s.fleets[m.FleetID] = &fleetWait{submit: sub, replyTo: c.Sender()}
	if c.Sender() != nil {
		s.delegator = c.Sender()
	}
	s.askScheduler(c, m.FleetID)
}

// askScheduler sends a waiting fleet to the current scheduler.
func (s *sessionActor) askScheduler(c actor.Context, id string) {
	w := s.fleets[id]
	if w == nil {
		return
	}
	sent := s.scheduler
	s.ledger.Request(c, fleetWaitKey(id), sent, w.submit, 0, func(c actor.Context, why string) {
		s.schedulerLost(c, id, sent, why)
	})
	if w.cancelled && sent != nil {
		c.Send(sent, &fleetmsg.CancelFleet{FleetID: id})
	}
}

// schedulerLost handles a fleet whose scheduler ended without answering:
// the scheduler is started again if it was the current one, and the fleet
// goes on there from its journal, or fails when it cannot.
func (s *sessionActor) schedulerLost(c actor.Context, id string, sent *actor.PID, why string) {
	w := s.fleets[id]
	if w == nil {
		return
	}
	if sent != nil && sent.Equal(s.scheduler) {
		s.restartScheduler(c)
	}
	if s.scheduler == nil || !w.submit.FromJournal {
		s.endFleet(c, id, failedFleet(w.submit, "scheduler "+why))
		return
	}
	s.askScheduler(c, id)
}

// restartScheduler starts a new scheduler in place of one that stopped,
// unless the session is stopping or the scheduler keeps dying.
func (s *sessionActor) restartScheduler(c actor.Context) {
	s.scheduler = nil
	if s.stopping || s.fleetSpec == nil {
		return
	}
	now := time.Now()
	recent := s.restarts[:0]
	for _, at := range s.restarts {
		if now.Sub(at) < restartWindow {
			recent = append(recent, at)
		}
	}
	s.restarts = recent
	if len(recent) >= schedulerRestarts {
		s.publish(&event.ErrorOccurred{Message: fmt.Sprintf("the scheduler stopped %d times within %s; it is not started again, and delegation fails from now on", len(recent)+1, restartWindow)})
		return
	}
	s.restarts = append(s.restarts, now)
	if err := s.spawnScheduler(c); err != nil {
		s.publish(&event.ErrorOccurred{Message: "the scheduler stopped and could not be started again: " + err.Error()})
		return
	}
	msg := "the scheduler stopped and was started again"
	if s.durable() {
		msg += "; its fleets go on from the fleet journal"
	}
	s.publish(&event.Notice{Level: "warn", Message: msg})
}

// endFleet delivers a fleet's result to the call that submitted it.
func (s *sessionActor) endFleet(c actor.Context, id string, res *fleetmsg.FleetResult) {
	w := s.fleets[id]
	if w == nil {
		return
	}
	delete(s.fleets, id)
	if w.replyTo != nil {
		c.Send(w.replyTo, res)
	}
}

// cancelFleet passes a cancel on, and remembers it for a restart.
func (s *sessionActor) cancelFleet(c actor.Context, m *fleetmsg.CancelFleet) {
	if w := s.fleets[m.FleetID]; w != nil {
		w.cancelled = true
	}
	if s.scheduler != nil {
		c.Send(s.scheduler, m)
	}
}

// repairFleets re-sends every fleet the session holds but no longer
// waits on (the crash fell between taking it and passing it on), and
// starts the scheduler again if its end was the message lost.
func (s *sessionActor) repairFleets(c actor.Context) {
	if s.fleetSpec == nil {
		return
	}
	if s.scheduler != nil && !s.sys.Alive(s.scheduler.Id) {
		s.restartScheduler(c)
	}
	for id := range s.fleets {
		if !s.ledger.Pending(fleetWaitKey(id)) {
			s.askScheduler(c, id)
		}
	}
}

// failedFleet is the result of a fleet none of whose tasks ran to an end.
func failedFleet(m *fleetmsg.SubmitFleet, why string) *fleetmsg.FleetResult {
	res := &fleetmsg.FleetResult{FleetID: m.FleetID}
	for _, t := range m.Tasks {
		if done, ok := m.Done[t.ID]; ok {
			res.Results = append(res.Results, done)
			continue
		}
		res.Results = append(res.Results, event.TaskResult{TaskID: t.ID, Status: event.TaskFailed, Error: why})
	}
	return res
}
