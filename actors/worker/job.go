package worker

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/fleet/isolate"
	"reasonix/actors/kernel"
	"reasonix/actors/remote"
	"reasonix/core/permission"
	"reasonix/core/provider"
)

// Batching of a job's events: a batch closes at jobBatchItems events or
// jobBatchWindow after its first one, whichever comes first, so a burst of
// stream deltas costs one message and a lone event waits only a moment.
const (
	JobBatchItems  = 64
	jobBatchWindow = 5 * time.Millisecond
)

// jobSpec is one attempt as the worker accepted it.
type jobSpec struct {
	task    event.TaskSpec
	attempt int
	// session is the parent session: the executor runs under its id, so
	// events and approval ids read as the parent's own.
	session string
	agent   agent.AgentSpec
	// proxy receives every message of the attempt.
	proxy   *actor.PID
	posture string
	grace   time.Duration
	price   *event.Price
	// silenced, set by the worker, says the scheduler gave the attempt
	// up: nothing more goes to the proxy.
	silenced *atomic.Bool
	// lend says the scheduler lends its endpoint windows (window.go).
	lend bool
	// wt is a worktree writer's worktree, made by iso; its changes go back
	// with the attempt's end.
	iso isolate.Isolator
	wt  *isolate.Worktree
}

// jobCancel stops a job's attempt. quiet says its scheduler has given the
// attempt up (lease lost, bye, a newer epoch): nothing more is sent to it.
type jobCancel struct {
	why   string
	quiet bool
}

// jobBatch carries events from a job's relay goroutine to the job, in
// order. drained says the relay reached the job's flush mark: every event
// published before it is in this batch or an earlier one.
type jobBatch struct {
	items   []remote.TaskEvent
	drained bool
}

// jobReap kills an attempt that ignored its cancellation past the grace.
type jobReap struct{}

// jobOverBudget tells the job its task reached a ceiling.
type jobOverBudget struct{ what string }

// jobRelayLost says the relay goroutine died: no more events can go out.
type jobRelayLost struct{ reason string }

// jobFlush is the mark a job publishes on its own bus once its executor
// has ended; the relay answers it with a drained batch. It never leaves
// the job.
type jobFlush struct{ event.Meta }

// Kind implements Event.
func (*jobFlush) Kind() string { return "job_flush" }

// job runs one attempt of a task on a worker: its executor publishes on a
// bus of the job's own, a goroutine relays that bus in order to the job,
// and the job numbers the events and sends them to the task's proxy in
// batches, then exactly one workerFinished whose Last is the number of the
// last event sent. A job that is stopped any other way still sends its
// end, unless its scheduler has given it up.
type job struct {
	sys  *kernel.System
	spec jobSpec
	log  *slog.Logger

	self, parent, exec *actor.PID
	bus                *event.Bus
	sub                *event.Subscription
	stopRelay          context.CancelFunc
	relayDead          bool

	// n is the number of events sent so far.
	n uint64
	// result is the executor's end, once it has one; flushing says the
	// flush mark is out.
	result   *agent.TurnFinished
	flushing bool
	// sent says the end went out (or, quiet, would have).
	sent      bool
	quiet     bool
	cancelled string
	over      string
	reaper    *time.Timer
	// ledger holds the executor's turn: it ends with its TurnFinished, or
	// failed when the executor stops without one.
	ledger *kernel.Ledger
	// lender borrows the attempt's endpoint slots from the scheduler;
	// nil when the scheduler lends none.
	lender *borrowed
}

// turnKey is the job's ledger entry for its executor's turn.
const turnKey = "turn"

func jobProps(sys *kernel.System, spec jobSpec, log *slog.Logger) *actor.Props {
	log = log.With("task", spec.task.ID, "attempt", spec.attempt, "session", spec.session)
	return kernel.Props("job", log, func() actor.Actor {
		return &job{sys: sys, spec: spec, log: log, ledger: kernel.NewLedger(sys)}
	})
}

// Receive implements actor.Actor.
func (j *job) Receive(c actor.Context) {
	if j.ledger.Receive(c, c.Message()) || j.onSlot(c, c.Message()) {
		return
	}
	switch m := c.Message().(type) {
	case *actor.Started:
		j.begin(c)
	case *jobBatch:
		j.relay(c, m)
	case *agent.TurnFinished:
		if j.ledger.Settle(turnKey) && j.result == nil {
			j.ended(c, m)
		}
	case *jobCancel:
		j.cancel(c, m.why, m.quiet)
	case *jobOverBudget:
		if j.over == "" {
			j.over = m.what
			j.cancel(c, "over its "+m.what+" budget", false)
		}
	case *jobReap:
		if j.result == nil && j.exec != nil {
			j.log.Warn("subagent did not stop in time; killing it")
			c.Stop(j.exec)
			j.ended(c, &agent.TurnFinished{Status: event.StatusCancelled, Error: "killed: it did not stop within " + j.spec.grace.String() + " of " + j.cancelled})
		}
	case *agent.ApprovalResponse:
		if j.exec != nil && j.result == nil {
			c.Send(j.exec, m)
		}
	case *agent.SetPosture:
		if j.exec != nil && j.result == nil {
			c.Send(j.exec, m)
		}
	case *jobRelayLost:
		j.relayDead = true
		j.log.Error("event relay died", "reason", m.reason)
		if j.result == nil {
			j.cancel(c, "its event relay failed", false)
		} else {
			j.finish(c)
		}
	case *actor.Terminated:
		if j.exec != nil && m.Who != nil && m.Who.Equal(j.exec) {
			j.exec = nil // its unanswered turn was the ledger's
		}
	case *kernel.Crashed:
		j.repair(c, m)
	case *actor.Stopping:
		j.stopping(c)
	}
}

// begin starts the relay and the executor. It records self and parent
// last, so repair tells a begin that did not complete by j.self alone,
// wherever it stopped.
func (j *job) begin(c actor.Context) {
	j.bus = event.NewBus(event.WithHistory(0))
	j.sub = j.bus.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	j.stopRelay = cancel
	sys, self, sub, log := j.sys, c.Self(), j.sub, j.log
	sys.Go(func() { relayJobEvents(ctx, sys, sub, self, log) },
		func(reason any, _ []byte) { sys.Send(self, &jobRelayLost{reason: fmt.Sprint(reason)}) })

	ag := j.spec.agent
	ag.Session, ag.Task = j.spec.session, j.spec.task.ID
	ag.Bus = j.bus
	// Unattended, as on the scheduler: a crashing tool fails the task.
	ag.FailOnCrash = true
	if j.spec.posture != "" {
		ag.Permissions.Posture = permission.Posture(j.spec.posture)
	}
	// The worker meters its attempt at the source too: once a ceiling is
	// reached no request leaves for the endpoint, whatever happens to the
	// messages on the way to the scheduler, whose own meter stays the
	// authority on the task's budget.
	meter := &team.TaskMeter{Budget: j.spec.task.Budget, Price: j.spec.price,
		Over: func(what string) { sys.Send(self, &jobOverBudget{what: what}) }}
	ag.Meter = meter
	if !j.spec.task.Budget.IsZero() {
		ag.Provider = &fleet.MeteredProvider{Provider: ag.Provider, Meter: meter}
	}
	if j.spec.lend {
		j.lender = newBorrowed(sys, self)
		ag.Provider = provider.Lending(ag.Provider, j.lender)
	}
	j.exec = c.Spawn(agent.ExecutorProps(j.sys, ag))
	j.ledger.Request(c, turnKey, j.exec, &agent.RunTurn{Input: j.spec.task.Prompt}, 0, func(c actor.Context, _ string) {
		if j.result == nil {
			j.ended(c, &agent.TurnFinished{Status: event.StatusFailed, Error: "subagent stopped before finishing its task"})
		}
	})
	j.self, j.parent = self, c.Parent()
}

// relay sends a batch on to the proxy, numbered on from the last.
func (j *job) relay(c actor.Context, m *jobBatch) {
	if j.sent {
		return
	}
	if len(m.items) > 0 && !j.muted() {
		remote.SendWorker(j.sys, c, j.spec.proxy, &remote.TaskEvents{Task: j.spec.task.ID, Attempt: j.spec.attempt, First: j.n + 1, Items: m.items})
		j.n += uint64(len(m.items))
	}
	if m.drained && j.result != nil {
		j.finish(c)
	}
}

// ended records the executor's end and flushes the relay: the end goes
// out once every event published before it has.
func (j *job) ended(c actor.Context, m *agent.TurnFinished) {
	j.result = m
	if j.reaper != nil {
		j.reaper.Stop()
	}
	j.flush(c)
}

func (j *job) flush(c actor.Context) {
	if j.relayDead {
		j.finish(c)
		return
	}
	if j.flushing {
		return
	}
	j.flushing = true
	j.bus.Publish(&jobFlush{})
}

// cancel stops the attempt's executor and arms its reaper.
func (j *job) cancel(c actor.Context, why string, quiet bool) {
	if quiet && !j.quiet {
		j.quiet = true
		j.log.Info("attempt given up by its scheduler; stopping it", "why", why)
	}
	if j.cancelled != "" || j.result != nil {
		return
	}
	j.cancelled = why
	j.log.Info("cancelling attempt", "why", why)
	if j.exec != nil {
		c.Send(j.exec, &agent.CancelTurn{})
	}
	sys, self := j.sys, j.self
	j.reaper = time.AfterFunc(j.spec.grace, func() { sys.Send(self, &jobReap{}) })
}

// muted says the attempt's scheduler has given it up.
func (j *job) muted() bool {
	return j.quiet || (j.spec.silenced != nil && j.spec.silenced.Load())
}

// finish sends the attempt's end once, frees the worker's slot and stops
// the job (and with it the executor).
func (j *job) finish(c actor.Context) {
	if j.sent {
		return
	}
	j.sent = true
	res := j.result
	if res == nil {
		res = &agent.TurnFinished{Status: event.StatusFailed, Error: "the attempt ended without a result"}
	}
	if j.over != "" && res.Status != event.StatusOK && res.Error == "" {
		res.Error = "stopped at its " + j.over + " budget"
	}
	// The worker hears first, so the slot is free before the scheduler
	// can answer the end with a new task.
	c.Send(j.parent, &jobEnded{pid: j.self})
	if !j.muted() {
		remote.SendWorker(j.sys, c, j.spec.proxy, j.finished(res))
	}
	j.log.Info("attempt ended", "status", res.Status, "events", j.n, "quiet", j.muted())
	c.Stop(j.self)
}

func (j *job) finished(res *agent.TurnFinished) *remote.Finished {
	out := &remote.Finished{Task: j.spec.task.ID, Attempt: j.spec.attempt, Last: j.n,
		Status: res.Status, Text: res.Text, Error: res.Error, Steps: res.Steps, Usage: res.Usage}
	if p, ok := j.spec.agent.Transcript.(interface{ Path() string }); ok {
		out.Transcript = p.Path()
	}
	if j.spec.wt != nil {
		// The writer's changes go back to its scheduler, which merges
		// them; nothing stays on this worker.
		ctx, cancel := context.WithTimeout(context.Background(), isolate.Timeout)
		ch := j.spec.iso.Export(ctx, *j.spec.wt)
		cancel()
		out.Changes = &ch
	}
	return out
}

// stopping ends the relay and, for a job stopped before it finished (the
// worker stopping, a kill), still sends the attempt's end once.
func (j *job) stopping(c actor.Context) {
	j.ledger.DropAll()
	if j.lender != nil {
		j.lender.close()
	}
	if j.reaper != nil {
		j.reaper.Stop()
	}
	if j.stopRelay != nil {
		j.stopRelay()
	}
	if j.sub != nil {
		j.sub.Close()
	}
	if j.sent {
		return
	}
	j.sent = true
	res := j.result
	if res == nil {
		res = &agent.TurnFinished{Status: event.StatusFailed, Error: "the worker stopped the task before it finished"}
		if j.cancelled != "" {
			res.Status, res.Error = event.StatusCancelled, "cancelled: "+j.cancelled
		}
	}
	if !j.muted() && j.spec.proxy != nil {
		remote.SendWorker(j.sys, c, j.spec.proxy, j.finished(res))
	}
}

// repair brings the job back after a handler panicked: an executor end
// that was lost is taken as it was, a flush that may not have gone out is
// sent again, and an executor that is gone without an end fails the
// attempt.
func (j *job) repair(c actor.Context, m *kernel.Crashed) {
	if j.self == nil {
		// begin itself crashed: whatever it started (the relay, an
		// executor) is not waited for.
		j.self, j.parent = c.Self(), c.Parent()
		j.result = &agent.TurnFinished{Status: event.StatusFailed, Error: "subagent could not start: " + m.Error()}
		j.relayDead = true
		if j.exec != nil {
			c.Stop(j.exec)
		} else if cl, ok := j.spec.agent.Transcript.(interface{ Close() error }); ok {
			// The executor closes its transcript; with none, the job does.
			if err := cl.Close(); err != nil {
				j.log.Warn("close transcript", "err", err)
			}
		}
		j.finish(c)
		return
	}
	if lost, ok := m.Lost.(*agent.TurnFinished); ok && j.result == nil {
		j.ledger.Settle(turnKey)
		j.result = lost
	}
	// An executor gone without an end (its Terminated may be what was
	// lost) fails the attempt; a turn nobody waits on any more does too.
	j.ledger.Reconcile(c)
	if j.result == nil && !j.ledger.Pending(turnKey) {
		j.result = &agent.TurnFinished{Status: event.StatusFailed, Error: m.Error()}
	}
	if j.result != nil && !j.sent {
		j.flushing = false
		j.flush(c)
	}
}

// relayJobEvents drains a job's bus in publish order and hands the events
// to the job in batches, until ctx ends or the subscription closes.
func relayJobEvents(ctx context.Context, sys *kernel.System, sub *event.Subscription, self *actor.PID, log *slog.Logger) {
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			return
		}
		var items []remote.TaskEvent
		drained := addJobEvent(&items, ev, log)
		if !drained {
			wctx, cancel := context.WithTimeout(ctx, jobBatchWindow)
			for len(items) < JobBatchItems && !drained {
				ev, err := sub.Next(wctx)
				if err != nil {
					break
				}
				drained = addJobEvent(&items, ev, log)
			}
			cancel()
		}
		if len(items) > 0 || drained {
			sys.Send(self, &jobBatch{items: items, drained: drained})
		}
	}
}

// addJobEvent appends ev's wire form and reports whether ev was the flush
// mark. An event that cannot be encoded is logged and left out (it gets no
// number, so the proxy sees no gap).
func addJobEvent(items *[]remote.TaskEvent, ev event.Event, log *slog.Logger) bool {
	if _, ok := ev.(*jobFlush); ok {
		return true
	}
	item, err := remote.EncodeWorkerEvent(ev)
	if err != nil {
		log.Error("event not relayed", "kind", ev.Kind(), "err", err)
		return false
	}
	*items = append(*items, item)
	return false
}
