package link

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/actors/remote"
)

// TurnFinished statuses only a remote task's proxy gives: the scheduler
// re-queues the task (or fails it, per its lost policy) instead of ending
// it with them.
const (
	// statusWorkerLost: the worker was lost while the attempt ran there,
	// or the attempt's stream broke; whether it finished is unknown.
	StatusWorkerLost = "worker_lost"
	// statusWorkerRefused: the worker did not start the attempt for a
	// reason another attempt (or another worker) may not have.
	StatusWorkerRefused = "worker_refused"
)

// remoteTail bounds how long a finished attempt may wait for events it
// says precede its end. Events and the end travel on one stream, in
// order, so a missing one means the stream broke.
const remoteTail = time.Second

// TaskSpec configures the proxy of one attempt of a task placed on a
// worker.
type TaskSpec struct {
	Worker string
	Link   *actor.PID
	// start is the attempt as the worker gets it (epoch and attempt
	// included).
	Start remote.Start
	Meter *team.TaskMeter
	Bus   *event.Bus
	// Budget is shown on the task_started the proxy publishes.
	Budget *event.Budget
	// backstop answers for the attempt when nothing else did within it
	// (task timeout + grace + loss detection); zero for none.
	Backstop time.Duration
	// OnFirst runs once, at the attempt's first relayed model output (the
	// fleet's prompt-prefix warm-up).
	OnFirst func()
}

// AttemptLost tells a proxy its worker was lost: the attempt ends lost.
type AttemptLost struct{ Why string }

// remoteTailTimer is the proxy's timer for the events a finished attempt
// still owes.
type remoteTailTimer struct{}

// attemptKey is the proxy's ledger entry for its attempt at the worker.
const attemptKey = "attempt"

// remoteTask is the proxy of one attempt on a worker: to the scheduler it
// is an executor child (RunTurn answered by exactly one TurnFinished;
// CancelTurn, ApprovalResponse), to the worker it is the attempt's
// scheduler end. It relays the attempt's events onto the parent's bus
// through the task's meter, in order, and stops relaying at the first gap.
// Everything it sends to the worker goes through the link, which drops it
// once the worker is not up.
type remoteTask struct {
	sys  *kernel.System
	spec TaskSpec
	log  *slog.Logger

	replyTo  *actor.PID
	asked    bool // workerStart sent
	accepted bool
	done     bool
	lost     bool
	// early holds worker messages that came before workerAccepted (the
	// job may speak before the worker actor's answer arrives when both
	// live in one process).
	early []any
	next  uint64 // number of the next event expected, from 1
	fin   *remote.Finished
	first bool // onFirst ran
	tail  *time.Timer
	// ledger holds the attempt: the start goes to the worker through the
	// link, and the wait ends with the attempt's answer, the backstop, or
	// the link's end.
	ledger *kernel.Ledger
	// lent holds the endpoint slots the attempt borrowed (window.go).
	lent *lent
}

// TaskProps spawns the proxy of one attempt of a task on a worker.
func TaskProps(sys *kernel.System, spec TaskSpec) *actor.Props {
	log := sys.Logger().With("actor", "remote", "task", spec.Start.Spec.ID, "attempt", spec.Start.Attempt, "worker", spec.Worker)
	return kernel.Props("remote", log, func() actor.Actor {
		return &remoteTask{sys: sys, spec: spec, log: log, next: 1, ledger: kernel.NewLedger(sys)}
	})
}

func (p *remoteTask) id() string { return p.spec.Start.Spec.ID }

func (p *remoteTask) attempt() int { return p.spec.Start.Attempt }

// Receive implements actor.Actor.
func (p *remoteTask) Receive(c actor.Context) {
	if p.ledger.Receive(c, c.Message()) {
		return
	}
	m, err := remote.FromWire(c.Message())
	if err != nil {
		p.lose(c, "undecodable message from the worker: "+err.Error())
		return
	}
	switch m := m.(type) {
	case *agent.RunTurn:
		p.run(c)
	case *agent.CancelTurn:
		p.forward(c, &remote.Cancel{Task: p.id(), Attempt: p.attempt(), Why: "cancelled"})
	case *agent.ApprovalResponse:
		p.forward(c, &remote.Approval{Task: p.id(), Attempt: p.attempt(), RequestID: m.RequestID, Choice: m.Choice, Rule: m.Rule})
	case *AttemptLost:
		p.lose(c, m.Why)
	case *remote.Accepted:
		if p.mine(m.Task, m.Attempt) {
			p.accept(c, m)
		}
	case *remote.Refused:
		if p.mine(m.Task, m.Attempt) {
			p.refuse(c, m)
		}
	case *remote.TaskEvents:
		if p.mine(m.Task, m.Attempt) {
			p.onEvents(c, m)
		}
	case *remote.Finished:
		if p.mine(m.Task, m.Attempt) {
			p.onFinished(c, m)
		}
	case *remote.SlotAsk:
		if m.Task == p.id() && m.Attempt == p.attempt() {
			p.onSlotAsk(c, m)
		}
	case *slotAdmitted:
		p.onSlotAdmitted(c, m)
	case *remote.SlotDone:
		if m.Task == p.id() && m.Attempt == p.attempt() {
			p.onSlotDone(c, m)
		}
	case *remoteTailTimer:
		if p.fin != nil {
			p.lose(c, fmt.Sprintf("the stream from worker %s lost events %d–%d", p.spec.Worker, p.next, p.fin.Last))
		}
	case *kernel.Crashed:
		// The attempt's state can no longer be trusted: it is lost, so
		// the scheduler decides (rerun or fail) as for a lost worker.
		if _, ok := m.Lost.(*agent.RunTurn); ok && p.replyTo == nil {
			p.replyTo = m.Sender
		}
		p.lose(c, "its proxy crashed: "+m.Error())
	case *actor.Stopping:
		if p.asked && !p.done {
			// Stopped by the scheduler's reaper before an answer: the
			// worker kills the job.
			p.forward(c, &remote.Cancel{Task: p.id(), Attempt: p.attempt(), Why: "killed"})
		}
		p.ledger.DropAll()
		p.releaseSlots()
		if p.asked && p.spec.Link != nil {
			c.Unwatch(p.spec.Link) // the link outlives its attempts
		}
		p.stopTimers()
	}
}

// mine reports whether a worker message belongs to this attempt; a stale
// one (another attempt of the task) is dropped.
func (p *remoteTask) mine(task string, attempt int) bool {
	if task != p.id() || attempt != p.attempt() {
		p.log.Debug("dropped a stale worker message", "for_task", task, "for_attempt", attempt)
		return false
	}
	return !p.done
}

func (p *remoteTask) run(c actor.Context) {
	if p.asked {
		return
	}
	p.replyTo, p.asked = c.Sender(), true
	start := &Forward{Epoch: p.spec.Start.Epoch, Msg: &p.spec.Start, Sender: c.Self()}
	p.ledger.Request(c, attemptKey, p.spec.Link, start, p.spec.Backstop, p.unanswered)
}

// unanswered ends an attempt the worker did not answer: past the backstop
// it fails (the worker kept it too long), and when the link is gone it is
// lost (the scheduler reruns or fails it).
func (p *remoteTask) unanswered(c actor.Context, why string) {
	if kernel.Expired(why) {
		p.answer(c, &agent.TurnFinished{Status: event.StatusFailed, Error: fmt.Sprintf("worker %s did not end the task within %s", p.spec.Worker, p.spec.Backstop)})
		return
	}
	p.lose(c, fmt.Sprintf("the link to worker %s: %s", p.spec.Worker, why))
}

// forward sends m to the worker through the link, with the proxy as the
// sender so the worker answers here. Nothing goes out once the attempt is
// lost.
func (p *remoteTask) forward(c actor.Context, m any) {
	if p.lost || p.spec.Link == nil {
		return
	}
	c.Send(p.spec.Link, &Forward{Epoch: p.spec.Start.Epoch, Msg: m, Sender: c.Self()})
}

func (p *remoteTask) accept(c actor.Context, m *remote.Accepted) {
	if p.accepted {
		return
	}
	p.accepted = true
	if m.Price != nil {
		price := *m.Price
		p.spec.Meter.SetPrice(&price)
	}
	model := m.Model
	if model == "" {
		model = p.spec.Start.Spec.Model
	}
	// The scheduler leaves a remote task's task_started to the proxy:
	// only the worker knows the model it resolved.
	p.relay(&event.TaskStarted{Fleet: p.spec.Start.Fleet, Model: model, Budget: p.spec.Budget, Worker: p.spec.Worker,
		Attempt: LaterAttempt(p.attempt())})
	early := p.early
	p.early = nil
	for _, e := range early {
		switch e := e.(type) {
		case *remote.TaskEvents:
			p.onEvents(c, e)
		case *remote.Finished:
			p.onFinished(c, e)
		}
	}
}

func (p *remoteTask) refuse(c actor.Context, m *remote.Refused) {
	if p.accepted {
		return // a refusal after the start is not one; the attempt runs
	}
	if m.Fatal {
		p.answer(c, &agent.TurnFinished{Status: event.StatusFailed, Error: fmt.Sprintf("worker %s cannot run the task: %s", p.spec.Worker, m.Reason)})
		return
	}
	p.answer(c, &agent.TurnFinished{Status: StatusWorkerRefused, Error: m.Reason})
}

func (p *remoteTask) onEvents(c actor.Context, m *remote.TaskEvents) {
	if !p.accepted {
		p.early = append(p.early, m)
		return
	}
	if m.First != p.next {
		p.lose(c, fmt.Sprintf("the stream from worker %s skipped from event %d to %d", p.spec.Worker, p.next, m.First))
		return
	}
	for _, it := range m.Items {
		ev, err := remote.DecodeWorkerEvent(it)
		if err != nil {
			// One undecodable event (a kind this side does not know) is
			// logged and counted; the stream itself is intact.
			p.log.Warn("relayed event dropped", "kind", it.Kind, "err", err)
			p.next++
			continue
		}
		p.next++
		p.relay(ev)
		if !p.first && p.spec.OnFirst != nil && modelOutput(ev) {
			p.first = true
			p.spec.OnFirst()
		}
	}
	if p.fin != nil && p.next > p.fin.Last {
		p.end(c)
	}
}

// modelOutput reports an event that means the model's reply has begun.
func modelOutput(ev event.Event) bool {
	switch ev.(type) {
	case *event.TextDelta, *event.ReasoningDelta, *event.ToolStarted, *event.UsageReported, *event.ErrorOccurred:
		return true
	}
	return false
}

// relay publishes an event of the task on the parent's bus through its
// meter (which meters usage and drops anything after task_done).
func (p *remoteTask) relay(ev event.Event) {
	meta := ev.EventMeta()
	meta.Session, meta.Task = p.spec.Start.Session, p.id()
	meta.Seq = 0 // the parent's bus numbers it
	p.spec.Meter.Publish(p.spec.Bus, ev)
}

func (p *remoteTask) onFinished(c actor.Context, m *remote.Finished) {
	if !p.accepted {
		p.early = append(p.early, m)
		return
	}
	p.fin = m
	if p.next > m.Last {
		p.end(c)
		return
	}
	sys, self := p.sys, c.Self()
	p.tail = time.AfterFunc(remoteTail, func() { sys.Send(self, &remoteTailTimer{}) })
}

// end answers with the worker's result once every event before it is out.
func (p *remoteTask) end(c actor.Context) {
	f := p.fin
	p.answer(c, &agent.TurnFinished{Session: p.spec.Start.Session, Task: p.id(), Status: f.Status, Text: f.Text, Error: f.Error,
		Steps: f.Steps, Usage: f.Usage, Changes: f.Changes})
}

// lose ends the attempt as lost: the worker is gone or its stream broke,
// so what it did is unknown and nothing more is sent to it.
func (p *remoteTask) lose(c actor.Context, why string) {
	if p.done {
		return
	}
	if p.asked {
		// The worker may be alive (a broken stream, a crash here): it
		// must not go on with an attempt the scheduler gave up. The
		// link drops this when the worker itself is lost.
		p.forward(c, &remote.Cancel{Task: p.id(), Attempt: p.attempt(), Why: "attempt lost: " + why})
	}
	p.lost = true
	p.answer(c, &agent.TurnFinished{Status: StatusWorkerLost, Error: why})
}

// answer sends the attempt's one TurnFinished. Request, not Send: the
// scheduler tells its children apart by sender.
func (p *remoteTask) answer(c actor.Context, tf *agent.TurnFinished) {
	if p.done {
		return
	}
	p.done = true
	p.ledger.Settle(attemptKey)
	p.stopTimers()
	p.releaseSlots()
	if tf.Session == "" {
		tf.Session, tf.Task = p.spec.Start.Session, p.id()
	}
	if p.replyTo != nil {
		c.Request(p.replyTo, tf)
	}
}

func (p *remoteTask) stopTimers() {
	if p.tail != nil {
		p.tail.Stop()
	}
}

// LaterAttempt is an attempt number as events show it: left out (zero)
// for the first.
func LaterAttempt(n int) int {
	if n <= 1 {
		return 0
	}
	return n
}
