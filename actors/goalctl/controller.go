package goalctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/core/goal"
	"reasonix/core/provider"
	"reasonix/core/text"
	"reasonix/core/tool"
)

// Spec gives a session long autonomous goals: a goal controller
// stands between the session and what would have been its executor (an
// executor or a two-model coordinator), and the model gets the goal and
// todo tools.
type Spec struct {
	// Limits are the limits of a goal this session starts; MaxTurns
	// below 1 is goal.DefaultMaxTurns.
	Limits goal.Limits
	// Dir is where goal records are journalled (beside the transcripts);
	// empty keeps goals in memory only.
	Dir string
	// Workspace is the project directory: an AutoResearch goal keeps its
	// notes under its .reasonix/autoresearch. Empty: no notes.
	Workspace string
	// Resume is the goal "/goal resume" continues when the session has no
	// goal of its own yet.
	Resume *goal.Record
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// goalKey is the controller's ledger entry for the turn at its child.
const goalKey = "goal-turn"

// goalBarrierWait bounds how long the end of a goal turn waits for the
// relay to deliver the turn's tool events; past it the notes record what
// came.
const goalBarrierWait = 2 * time.Second

// goalController runs goals. An ordinary turn passes through to its child;
// a /goal turn becomes a run of turns, each with the goal block prepended,
// until the model reports the goal complete, the same blocked state comes
// three times, the lease or a limit ends it, or the user stops it. The
// RunTurn that started it gets exactly one TurnFinished, at that end.
// Budgets and the lease are held at every step of a turn, not only between
// turns: the meter, shared with the executor, ends a turn within one step
// of a ceiling, and a timer cancels a turn still running when the goal's
// time is up.
type goalController struct {
	sys   *kernel.System
	agent agent.AgentSpec
	spec  Spec
	inner *actor.Props
	box   *GoalBox
	log   *slog.Logger
	child *actor.PID
	// ledger holds the running turn's request to the child.
	ledger *kernel.Ledger
	// active is the session's goal (running or waiting for the user);
	// run the turn in flight.
	active *goal.Record
	run    *goalRun
	// meter is the goal's step budget, which the executor consults.
	meter *Meter
	// runs numbers goal runs, so a late time-up of an earlier one is
	// known for what it is.
	runs int
	// relay feeds tool events back for the research notes; seen is the
	// last bus sequence number it delivered.
	relay   context.CancelFunc
	relayed chan struct{}
	seen    int64
	calls   map[string]string
	// Answers records whether the message being handled has its answer,
	// for the repair of a crash in its handler.
	kernel.Answers
	notes *ResearchNotes
	// settled is the child's last answer the ledger took, so a repair
	// after its handler ran does not settle the next turn's request.
	settled *agent.TurnFinished
}

// goalRun is the RunTurn being served.
type goalRun struct {
	replyTo  *actor.PID
	goal     bool // false: an ordinary turn passing through
	canceled bool
	steps    int
	usage    provider.Usage
	started  time.Time
	base     time.Duration
	// finished is the child's answer held until the relay catches up.
	finished *agent.TurnFinished
	waitSeq  int64
	timer    *time.Timer
	lastText string
	// id numbers the run; deadline is its time budget's timer and timeUp
	// says it fired.
	id       int
	deadline *time.Timer
	timeUp   bool
}

// goalTimeUp reports that goal run's time budget has run out.
type goalTimeUp struct{ run int }

// goalSeen is the relay's report of one bus event: its sequence number,
// and the tool call it finished, if any.
type goalSeen struct {
	seq  int64
	tool *event.ToolFinished
	args *event.ToolStarted
}

// goalBarrierExpired ends the wait for the relay.
type goalBarrierExpired struct{ seq int64 }

func Props(sys *kernel.System, ag agent.AgentSpec, spec Spec, inner *actor.Props) *actor.Props {
	log := ag.Logger
	if log == nil {
		log = sys.Logger()
	}
	box := &GoalBox{}
	meter, _ := ag.Budget.(*Meter)
	if meter == nil {
		meter = NewMeter(spec.Now)
	}
	meter.Watch(box)
	if bus, session := ag.Bus, ag.Session; bus != nil {
		box.OnTodo = func(items []goal.Item) {
			bus.Publish(&event.TodoUpdated{Meta: event.Meta{Session: session}, Items: items})
		}
	}
	for _, t := range GoalTools(box) {
		if err := ag.Tools.Replace(t); err != nil {
			log.Error("register goal tool", "tool", t.Name(), "err", err)
		}
	}
	if spec.Limits.MaxTurns < 1 {
		spec.Limits.MaxTurns = goal.DefaultMaxTurns
	}
	if spec.Now == nil {
		spec.Now = time.Now
	}
	return kernel.Props("goal", log, func() actor.Actor {
		return &goalController{sys: sys, agent: ag, spec: spec, inner: inner, box: box, meter: meter, ledger: kernel.NewLedger(sys),
			log: log.With("session", ag.Session), calls: map[string]string{}}
	})
}

// GoalTools are the tools a goal gives the model, sharing box with the
// controller.
func GoalTools(box *GoalBox) []tool.Tool {
	return []tool.Tool{&GoalTool{Box: box}, &TodoTool{Box: box}}
}

// Receive implements actor.Actor.
func (g *goalController) Receive(c actor.Context) {
	msg := c.Message()
	if g.ledger.Receive(c, msg) {
		return
	}
	switch m := msg.(type) {
	case *actor.Started:
		g.child = c.Spawn(g.inner)
		g.startRelay(c)
	case *agent.RunTurn:
		g.start(c, m)
	case *agent.CancelTurn:
		if r := g.run; r != nil && !r.canceled {
			r.canceled = true
			c.Send(g.child, m)
		}
	case *agent.ApprovalResponse:
		c.Send(g.child, m)
	case *agent.SetPosture:
		c.Send(g.child, m)
	case *agent.SetEffort:
		c.Send(g.child, m)
	case *agent.TurnFinished:
		if g.ledger.Settle(goalKey) {
			g.settled = m
			g.onFinished(c, m)
		}
	case *goalSeen:
		g.onSeen(c, m)
	case *goalBarrierExpired:
		if r := g.run; r != nil && r.finished != nil && r.waitSeq == m.seq {
			g.round(c)
		}
	case *goalTimeUp:
		g.onTimeUp(c, m)
	case *kernel.Crashed:
		g.repair(c, m)
	case *actor.Stopping:
		g.ledger.DropAll()
		if r := g.run; r != nil {
			r.stopTimers()
		}
		g.stopRelay()
	}
}

// start serves a RunTurn: a /goal prompt, or an ordinary turn.
func (g *goalController) start(c actor.Context, m *agent.RunTurn) {
	if g.run != nil {
		c.Respond(&agent.TurnFinished{Session: g.agent.Session, Status: event.StatusFailed, Error: "a turn is already running"})
		g.Answer()
		return
	}
	if m.Wake {
		// Background results: a plain turn of the executor, whatever the
		// goal's state (it is not the user's answer to a blocked goal).
		g.run = &goalRun{replyTo: c.Sender()}
		g.Answer()
		g.ask(c, m)
		return
	}
	p, isGoal, err := goalOf(m)
	if !isGoal && !m.Compact && goal.StrongSignal(m.Input) {
		p, isGoal = goal.Prompt{Action: "start", Objective: strings.TrimSpace(m.Input), Strategy: goal.StrategyResearch}, true
		g.publish(&event.Notice{Level: "info", Message: "the prompt asks for long autonomous research: running it as /goal --research"})
	}
	if a := g.active; !isGoal && !m.Compact && a != nil && (a.Status == goal.StatusBlocked || a.Status == goal.StatusPaused) {
		// The active goal waits for the user, and this is the user's
		// answer: the goal goes on with it, its audit and lease afresh.
		a.Blocked, a.BlockedCount = "", 0
		a.Lease.NoProgress, a.Lease.Nudged = 0, false
		g.begin(c, a, true)
		g.issue(c, m.Input)
		return
	}
	if !isGoal || m.Compact {
		g.run = &goalRun{replyTo: c.Sender()}
		g.Answer()
		g.ask(c, m)
		return
	}
	reply := func(status, text, why string) {
		g.Answer()
		if c.Sender() != nil {
			c.Respond(&agent.TurnFinished{Session: g.agent.Session, Status: status, Text: text, Error: why})
		}
	}
	if err != nil {
		reply(event.StatusFailed, "", err.Error())
		return
	}
	switch p.Action {
	case "clear":
		if a := g.active; a != nil {
			g.active = nil
			g.end(a, goal.StatusStopped, "cleared by the user")
			reply(event.StatusOK, "goal "+a.ID+" cleared", "")
			return
		}
		reply(event.StatusOK, "no active goal", "")
		return
	case "resume":
		rec := g.active
		if rec == nil {
			rec = g.spec.Resume
		}
		if rec == nil || !rec.Unfinished() {
			reply(event.StatusFailed, "", "no unfinished goal to resume")
			return
		}
		g.active = rec
		g.box.Seed(rec.Todo)
		g.begin(c, rec, true)
		g.publish(&event.TodoUpdated{Items: append([]goal.Item{}, rec.Todo...)})
		g.issue(c, goal.Resumed)
		return
	}
	now := g.spec.Now()
	rec := &goal.Record{
		ID:        goalID(now, g.agent.Session),
		Session:   g.agent.Session,
		Workspace: g.spec.Workspace,
		Objective: p.Objective,
		Strategy:  p.Strategy,
		Limits:    g.spec.Limits,
		StartedAt: now,
	}
	if rec.Strategy == "" {
		rec.Strategy = goal.Classify(p.Objective)
	}
	if g.active != nil && g.active.Unfinished() {
		g.end(g.active, goal.StatusStopped, "replaced by a new goal")
	}
	g.active = rec
	g.box.Seed(nil)
	g.begin(c, rec, false)
	g.publish(&event.TodoUpdated{Items: []goal.Item{}})
	g.issue(c, "Start working on the goal.")
}

// begin opens the goal run: its record is journalled running and its
// start published.
func (g *goalController) begin(c actor.Context, rec *goal.Record, resumed bool) {
	g.runs++
	g.run = &goalRun{replyTo: c.Sender(), goal: true, started: g.spec.Now(), base: rec.Elapsed, id: g.runs}
	g.Answer() // from here on the run's end answers the request
	if budget := rec.Limits.MaxTime; budget > 0 {
		sys, self, id := g.sys, c.Self(), g.runs
		g.run.deadline = time.AfterFunc(budget-rec.Elapsed, func() { sys.Send(self, &goalTimeUp{run: id}) })
	}
	rec.Status, rec.Reason = goal.StatusRunning, ""
	if rec.Strategy == goal.StrategyResearch && g.spec.Workspace != "" {
		g.notes = OpenResearch(g.spec.Workspace, rec, g.log)
	} else {
		g.notes = nil
	}
	g.save(rec)
	g.notes.Started(rec, resumed)
	g.publish(&event.GoalStarted{Goal: rec.ID, Objective: text.Clip(rec.Objective, 2000), Strategy: rec.Strategy, Resumed: resumed,
		MaxTurns: rec.Limits.MaxTurns, MaxTokens: rec.Limits.MaxTokens, MaxTimeMS: rec.Limits.MaxTime.Milliseconds(), Research: rec.Research})
}

// issue sends the next goal turn: the goal block, then body. The meter
// holds the turn to what is left of the budgets.
func (g *goalController) issue(c actor.Context, body string) {
	g.meter.Arm(g.active, g.run.base, g.run.started)
	g.ask(c, &agent.RunTurn{Input: goal.Turn(g.active, body)})
}

// onTimeUp stops the goal turn in flight when the goal's time is up: the
// turn keeps what it did, and its end is the budget's, not a cancel's.
func (g *goalController) onTimeUp(c actor.Context, m *goalTimeUp) {
	if r := g.run; r != nil && !r.timeUp {
		g.stopForTime(c, m.run)
	}
}

// stopForTime marks run's time as up and cancels its turn in flight; a
// second cancel of the same turn changes nothing.
func (g *goalController) stopForTime(c actor.Context, run int) {
	r := g.run
	if r == nil || !r.goal || r.id != run || r.canceled {
		return
	}
	r.timeUp = true
	if g.ledger.Pending(goalKey) {
		c.Send(g.child, &agent.CancelTurn{})
	}
}

// ask sends a turn to the child; the ledger makes sure it ends once.
func (g *goalController) ask(c actor.Context, m *agent.RunTurn) {
	g.ledger.Request(c, goalKey, g.child, m, 0, func(c actor.Context, why string) {
		g.onFinished(c, &agent.TurnFinished{Status: event.StatusFailed, Error: "executor " + why})
	})
}

// onFinished takes the child's answer. An ordinary turn ends with it; a
// goal turn waits until the relay has delivered every event published
// before it, so the research notes see the turn whole.
func (g *goalController) onFinished(c actor.Context, m *agent.TurnFinished) {
	r := g.run
	if r == nil {
		return
	}
	r.steps += m.Steps
	r.usage.Add(m.Usage)
	if !r.goal {
		g.reply(c, m)
		return
	}
	r.finished = m
	if bus := g.agent.Bus; bus != nil && g.relay != nil {
		if want := bus.LastSeq(); g.seen < want {
			r.waitSeq = want
			sys, self := g.sys, c.Self()
			r.timer = time.AfterFunc(goalBarrierWait, func() { sys.Send(self, &goalBarrierExpired{seq: want}) })
			return
		}
	}
	g.round(c)
}

func (g *goalController) onSeen(c actor.Context, m *goalSeen) {
	if m.seq > g.seen {
		g.seen = m.seq
	}
	switch {
	case m.args != nil:
		g.calls[m.args.CallID] = m.args.Tool + "\x00" + m.args.Args
	case m.tool != nil:
		key := g.calls[m.tool.CallID]
		delete(g.calls, m.tool.CallID)
		g.notes.Tool(m.tool, key)
	}
	if r := g.run; r != nil && r.finished != nil && r.waitSeq > 0 && g.seen >= r.waitSeq {
		g.round(c)
	}
}

// round closes one goal turn and decides: end, or the next turn.
func (g *goalController) round(c actor.Context) {
	r, rec := g.run, g.active
	m := r.finished
	r.finished, r.waitSeq = nil, 0
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	lease, rounds, verdict := g.meter.Disarm()
	rec.Lease = lease
	rec.Turns++
	rec.Tokens += m.Usage.TotalTokens
	rec.Elapsed = r.base + g.spec.Now().Sub(r.started)
	r.lastText = m.Text
	report, todo, fresh := g.box.Take()
	if fresh {
		rec.Todo = todo
	}
	if report != nil {
		rec.Summary = report.Summary
	}
	// A turn the time budget cut short ends as the budget says.
	timeUp := r.timeUp && !r.canceled
	switch {
	case r.canceled || (m.Status == event.StatusCancelled && !timeUp):
		g.stop(c, rec, goal.StatusPaused, "interrupted by the user", event.StatusCancelled, m)
		return
	case m.Status == event.StatusFailed:
		g.stop(c, rec, goal.StatusFailed, m.Error, event.StatusFailed, m)
		return
	}
	status := "in_progress"
	if report != nil {
		status = report.Status
	}
	if status == goal.StatusComplete {
		g.stop(c, rec, goal.StatusComplete, "", event.StatusOK, m)
		return
	}
	reason := ""
	if report != nil {
		reason = report.Reason
	}
	if rec.Audit(status, reason) {
		g.stop(c, rec, goal.StatusBlocked, fmt.Sprintf("blocked %d times in a row: %s", goal.BlockedRepeats, reason), event.StatusBlocked, m)
		return
	}
	if m.Status == agent.StatusLoop {
		// The model is stuck on one call: the goal waits for the user, its
		// work kept.
		g.stop(c, rec, goal.StatusPaused, m.Error, event.StatusBlocked, m)
		return
	}
	if rounds == 0 {
		// A turn without a tool call is a round too, and did nothing new.
		verdict = rec.Lease.Round(goal.Completions(rec.Todo))
	}
	g.notes.Round(rec, status, verdict)
	g.publish(&event.GoalProgressed{Goal: rec.ID, Turn: rec.Turns, Tokens: rec.Tokens, ElapsedMS: rec.Elapsed.Milliseconds(),
		Report: status, Summary: text.Clip(rec.Summary, 1000), Todo: len(rec.Todo), TodoDone: len(goal.Completions(rec.Todo)),
		NoProgress: rec.Lease.NoProgress, Nudged: verdict == goal.Nudge})
	if verdict == goal.Pause {
		g.stop(c, rec, goal.StatusPaused, fmt.Sprintf("no progress for %d tool rounds; the work so far is kept, resume when ready", rec.Lease.NoProgress), event.StatusBlocked, m)
		return
	}
	why := limitReached(rec)
	switch {
	case why != "":
	case timeUp:
		why = fmt.Sprintf("time budget reached (%s of %s)", rec.Elapsed.Round(time.Second), rec.Limits.MaxTime)
	case m.Status == event.StatusLimit && verdict != goal.Nudge:
		why = m.Error
	}
	if why != "" {
		g.stop(c, rec, goal.StatusLimit, why, event.StatusLimit, m)
		return
	}
	g.save(rec)
	body := goal.Continue
	if verdict == goal.Nudge {
		body = goal.Reassess
	}
	g.issue(c, body)
}

// limitReached names the limit the goal has reached, or is empty.
func limitReached(rec *goal.Record) string {
	return rec.Limits.Reached(rec.Turns, rec.Tokens, rec.Elapsed)
}

// stop ends the goal run with the record at status and answers the
// RunTurn that started it.
func (g *goalController) stop(c actor.Context, rec *goal.Record, status, reason, turnStatus string, m *agent.TurnFinished) {
	g.end(rec, status, reason)
	if status == goal.StatusComplete || status == goal.StatusStopped {
		g.active = nil
	}
	errText := ""
	if turnStatus != event.StatusOK {
		errText = "goal " + rec.ID + " " + status
		if reason != "" {
			errText += ": " + reason
		}
		if rec.Summary != "" && status != goal.StatusFailed {
			errText += "; last summary: " + text.OneLine(rec.Summary, 500)
		}
	}
	g.reply(c, &agent.TurnFinished{Status: turnStatus, Text: m.Text, Error: errText})
}

// end journals the record's end and publishes it.
func (g *goalController) end(rec *goal.Record, status, reason string) {
	rec.Status, rec.Reason = status, reason
	g.save(rec)
	g.notes.Ended(rec)
	g.publish(&event.GoalEnded{Goal: rec.ID, Status: status, Reason: reason, Summary: text.Clip(rec.Summary, 1000),
		Turns: rec.Turns, Tokens: rec.Tokens, ElapsedMS: rec.Elapsed.Milliseconds()})
}

// reply answers the running RunTurn, with the steps and usage of all its
// turns summed.
func (g *goalController) reply(c actor.Context, m *agent.TurnFinished) {
	r := g.run
	if r == nil {
		return
	}
	g.run = nil
	r.stopTimers()
	g.meter.Disarm()
	if r.replyTo != nil {
		c.Send(r.replyTo, m.Summed(g.agent.Session, r.steps, r.usage, r.canceled))
	}
}

// stopTimers stops the run's barrier and deadline timers.
func (r *goalRun) stopTimers() {
	for _, t := range []*time.Timer{r.timer, r.deadline} {
		if t != nil {
			t.Stop()
		}
	}
}

func (g *goalController) save(rec *goal.Record) {
	rec.UpdatedAt = g.spec.Now()
	if g.spec.Dir == "" {
		return
	}
	if err := goal.Save(g.spec.Dir, rec); err != nil {
		g.log.Error("journal goal", "goal", rec.ID, "err", err)
		g.publish(&event.Notice{Level: "warn", Message: err.Error()})
	}
}

func (g *goalController) publish(ev event.Event) {
	if g.agent.Bus == nil {
		return
	}
	ev.EventMeta().Session = g.agent.Session
	g.agent.Bus.Publish(ev)
}

// startRelay subscribes to the bus for the session's tool events. The
// relay goroutine is owned by the controller: it ends when the controller
// stops (stopRelay) and is waited for there.
func (g *goalController) startRelay(c actor.Context) {
	bus := g.agent.Bus
	if bus == nil {
		return
	}
	sub := bus.Subscribe()
	g.seen = bus.LastSeq()
	ctx, cancel := context.WithCancel(context.Background())
	relayed := make(chan struct{})
	g.relay, g.relayed = cancel, relayed
	sys, self, session := g.sys, c.Self(), g.agent.Session
	// Owned by the System too, so a panic in it is logged and recovered
	// rather than the end of the process, and shutdown waits for it.
	sys.Go(func() {
		defer close(relayed)
		defer sub.Close()
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				return
			}
			m := &goalSeen{seq: ev.EventMeta().Seq}
			if mt := ev.EventMeta(); mt.Session == session && mt.Task == "" {
				switch e := ev.(type) {
				case *event.ToolStarted:
					m.args = e
				case *event.ToolFinished:
					m.tool = e
				}
			}
			sys.Send(self, m)
		}
	}, nil)
}

func (g *goalController) stopRelay() {
	if g.relay != nil {
		g.relay()
		<-g.relayed
		g.relay = nil
	}
}

// repair brings the controller back after a handler panicked: a turn
// whose child is gone, or whose answer the crash lost, ends failed (the
// goal is journalled failed and can be resumed); a time-up whose handler
// crashed still stops the turn in flight; a RunTurn whose handler crashed
// is answered.
func (g *goalController) repair(c actor.Context, m *kernel.Crashed) {
	g.ledger.Reconcile(c)
	if r := g.run; r != nil {
		if tf, ok := m.Lost.(*agent.TurnFinished); ok && tf != g.settled {
			// The handler never ran: the answer ends the child's turn.
			g.ledger.Settle(goalKey)
		}
		if (!g.ledger.Pending(goalKey) && r.finished == nil) || m.Lost == r.finished {
			if r.timer != nil {
				r.timer.Stop()
			}
			if r.goal && g.active != nil {
				g.end(g.active, goal.StatusFailed, m.Error())
			}
			g.reply(c, &agent.TurnFinished{Status: event.StatusFailed, Error: m.Error()})
			return
		}
	}
	if tu, ok := m.Lost.(*goalTimeUp); ok {
		// The time is up whatever the handler got done: the turn in
		// flight stops, and the goal ends on its budget.
		g.stopForTime(c, tu.run)
	}
	if _, ok := m.Lost.(*agent.RunTurn); ok && m.Sender != nil && !g.Answered() {
		if g.run == nil || g.run.replyTo == nil || !g.run.replyTo.Equal(m.Sender) {
			c.Send(m.Sender, &agent.TurnFinished{Session: g.agent.Session, Status: event.StatusFailed, Error: m.Error()})
		}
	}
}

// goalID names a goal by its start time and session, sortable and unique
// within a workspace.
func goalID(now time.Time, session string) string {
	s := session
	if len(s) > 8 {
		s = s[len(s)-8:]
	}
	return "g" + strings.ReplaceAll(now.UTC().Format("20060102-150405.000"), ".", "") + "-" + filepath.Base(s)
}

// goalOf is the goal command a turn carries, read once at the session's
// door (Session.Run, the goal command); isGoal is false for an ordinary
// turn.
func goalOf(m *agent.RunTurn) (p goal.Prompt, isGoal bool, err error) {
	switch {
	case m.Goal != nil:
		return *m.Goal, true, nil
	case m.GoalError != "":
		return goal.Prompt{}, true, errors.New(m.GoalError)
	}
	return goal.Prompt{}, false, nil
}
