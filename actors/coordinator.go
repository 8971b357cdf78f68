package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/core/provider"
	"reasonix/core/tool"
)

// PlannerSpec turns a session into a two-model run: a coordinator between
// the session and two executors, each with its own conversation and
// transcript. The planner (Agent, with read-only research tools) writes a
// plan; the executor carries it out.
type PlannerSpec struct {
	// Agent is the planner's executor. Its Session is the session's and
	// its Role RolePlanner; its tools must be read-only.
	Agent agent.AgentSpec
	// Rounds bounds the planning rounds of one turn, the first included:
	// a re-plan happens only while a round is left. Below 1 it is 1.
	Rounds int
}

// The handoff texts. They are part of the contract (docs/SPEC.md, "Two-model
// runs"): the planner gets the request, the executor the request and the
// plan, and a re-plan the executor's report.
const (
	plannerRequestFormat = "Request:\n%s\n\nResearch what you need with your read-only tools, then answer with the plan: numbered steps, each naming the files or commands it involves and how to check it worked. Do not carry the plan out."
	replanFormat         = "The executor worked on plan round %d and reported:\nstatus: %s\nsummary: %s\n\nIts final answer was:\n%s\n\nResearch what you need, then answer with a revised plan for what remains of the request."
	handoffFormat        = "[Plan from the planner, round %d]\n\nRequest:\n%s\n\nPlan:\n%s\n\nCarry out the plan with your tools. When you have finished, or cannot go on, call %s once with status \"done\", \"blocked\" or \"incomplete\" and a short summary, then give your final answer."
)

// ToolPlanReport is the executor's tool for telling the coordinator how
// the plan went.
const ToolPlanReport = "plan_report"

// PlanReport is what the executor last reported through plan_report.
type PlanReport struct {
	Status  string
	Summary string
}

// planReports is the plan_report tool's mailbox: the tool writes from a
// runner's goroutine, the coordinator takes it when the executor's turn
// ends.
type planReports struct {
	mu   sync.Mutex
	last *PlanReport
}

func (r *planReports) put(p PlanReport) {
	r.mu.Lock()
	r.last = &p
	r.mu.Unlock()
}

func (r *planReports) take() *PlanReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.last
	r.last = nil
	return p
}

// planReportTool records the executor's report.
type planReportTool struct{ reports *planReports }

func (*planReportTool) Name() string { return ToolPlanReport }
func (*planReportTool) Description() string {
	return "Report how the plan you were given went, once, when you have finished or cannot go on: status \"done\" (the request is met), \"blocked\" (you cannot go on without something the plan did not foresee) or \"incomplete\" (the plan is done but the request is not). The coordinator may ask the planner for a revised plan."
}
func (*planReportTool) ReadOnly() bool { return true }
func (*planReportTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"status":{"type":"string","enum":["done","blocked","incomplete"],"description":"How the plan went."},"summary":{"type":"string","description":"What was done, and what blocks or remains."}},"required":["status","summary"],"additionalProperties":false}`)
}
func (t *planReportTool) Execute(_ context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Status  string `json:"status" arg:"required"`
		Summary string `json:"summary" arg:"required"`
	}
	if err := tool.DecodeArgs(ToolPlanReport, raw, &args); err != nil {
		return "", err
	}
	switch args.Status {
	case "done", "blocked", "incomplete":
	default:
		return "", fmt.Errorf("%s: status %q: want done, blocked or incomplete", ToolPlanReport, args.Status)
	}
	t.reports.put(PlanReport{Status: args.Status, Summary: args.Summary})
	return "Reported. Now give your final answer.", nil
}

// coordinator runs a two-model turn: the planner plans, the executor
// carries the plan out, and a blocked or unfinished plan goes back to the
// planner while rounds are left. It stands where the executor would: the
// session sends it RunTurn, CancelTurn, approvals and posture changes, and
// it answers each RunTurn with exactly one TurnFinished.
type coordinator struct {
	sys      *kernel.System
	exec     agent.AgentSpec
	plan     PlannerSpec
	reports  *planReports
	log      *slog.Logger
	planner  *actor.PID
	executor *actor.PID
	ledger   *kernel.Ledger
	turn     *coordTurn
	// Answers records whether the message being handled has its answer,
	// for the repair of a crash in its handler.
	kernel.Answers
}

// coordTurn is the running turn.
type coordTurn struct {
	replyTo  *actor.PID
	request  string
	round    int
	phase    string // RolePlanner or RoleExecutor: who works now
	canceled bool
	steps    int
	usage    provider.Usage
}

func coordinatorProps(sys *kernel.System, exec agent.AgentSpec, plan PlannerSpec, reports *planReports) *actor.Props {
	log := exec.Logger
	if log == nil {
		log = sys.Logger()
	}
	if plan.Rounds < 1 {
		plan.Rounds = 1
	}
	return kernel.Props("coordinator", log, func() actor.Actor {
		return &coordinator{sys: sys, exec: exec, plan: plan, reports: reports, ledger: kernel.NewLedger(sys),
			log: log.With("session", exec.Session)}
	})
}

// Receive implements actor.Actor.
func (co *coordinator) Receive(c actor.Context) {
	msg := c.Message()
	if co.ledger.Receive(c, msg) {
		return
	}
	switch m := msg.(type) {
	case *actor.Started:
		co.planner = c.Spawn(agent.ExecutorProps(co.sys, co.plan.Agent))
		co.executor = c.Spawn(agent.ExecutorProps(co.sys, co.exec))
	case *agent.RunTurn:
		co.start(c, m)
	case *agent.CancelTurn:
		if t := co.turn; t != nil && !t.canceled {
			t.canceled = true
			c.Send(co.active(), m)
		}
	case *agent.ApprovalResponse:
		c.Send(co.executor, m)
	case *agent.SetPosture:
		c.Send(co.executor, m)
		c.Send(co.planner, m)
	case *agent.SetEffort:
		c.Send(co.executor, m)
		c.Send(co.planner, m)
	case *agent.TurnFinished:
		co.onFinished(c, m)
	case *kernel.Crashed:
		co.repair(c, m)
	case *actor.Stopping:
		co.ledger.DropAll()
	}
}

// active is the child working on the turn.
func (co *coordinator) active() *actor.PID {
	if co.turn != nil && co.turn.phase == event.RolePlanner {
		return co.planner
	}
	return co.executor
}

func (co *coordinator) start(c actor.Context, m *agent.RunTurn) {
	if co.turn != nil {
		c.Respond(&agent.TurnFinished{Session: co.exec.Session, Status: event.StatusFailed, Error: "a turn is already running"})
		co.Answer()
		return
	}
	co.turn = &coordTurn{replyTo: c.Sender(), request: m.Input, round: 1}
	co.Answer()
	if m.Compact {
		// A built-in action on the executor's conversation.
		co.ask(c, event.RoleExecutor, m)
		return
	}
	co.reports.take() // a report from an earlier turn is stale
	co.ask(c, event.RolePlanner, &agent.RunTurn{Input: fmt.Sprintf(plannerRequestFormat, m.Input)})
}

// ask sends a turn to the planner or the executor; the ledger makes sure
// it ends once, even if that child dies.
func (co *coordinator) ask(c actor.Context, role string, m *agent.RunTurn) {
	co.turn.phase = role
	target := co.executor
	if role == event.RolePlanner {
		target = co.planner
	}
	co.ledger.Request(c, role, target, m, 0, func(c actor.Context, why string) {
		co.finish(c, &agent.TurnFinished{Status: event.StatusFailed, Error: role + " " + why})
	})
}

func (co *coordinator) onFinished(c actor.Context, m *agent.TurnFinished) {
	t := co.turn
	if t == nil {
		return
	}
	role := event.RoleExecutor
	if c.Sender() != nil && c.Sender().Equal(co.planner) {
		role = event.RolePlanner
	}
	if !co.ledger.Settle(role) {
		return
	}
	t.steps += m.Steps
	t.usage.Add(m.Usage)
	if role == event.RolePlanner {
		co.onPlan(c, m)
		return
	}
	if m.Status != event.StatusOK {
		co.finish(c, m)
		return
	}
	rep := co.reports.take()
	if rep != nil && rep.Status != "done" && t.round < co.plan.Rounds && !t.canceled {
		t.round++
		co.publish(&event.Notice{Level: "info", Message: fmt.Sprintf("re-planning (round %d of %d): the executor reported %s: %s",
			t.round, co.plan.Rounds, rep.Status, rep.Summary)}, event.RolePlanner)
		co.ask(c, event.RolePlanner, &agent.RunTurn{Input: fmt.Sprintf(replanFormat, t.round-1, rep.Status, rep.Summary, m.Text)})
		return
	}
	co.finish(c, m)
}

// onPlan hands the planner's plan to the executor, or ends the turn when
// there is no plan to hand over: the executor never starts half-planned.
func (co *coordinator) onPlan(c actor.Context, m *agent.TurnFinished) {
	t := co.turn
	switch {
	case m.Status == event.StatusCancelled || t.canceled:
		co.finish(c, &agent.TurnFinished{Status: event.StatusCancelled, Text: m.Text})
		return
	case m.Status != event.StatusOK:
		msg := "planner: " + m.Error
		if m.Error == "" {
			msg = "planner: the turn ended " + m.Status
		}
		co.finish(c, &agent.TurnFinished{Status: event.StatusFailed, Error: msg})
		return
	case strings.TrimSpace(m.Text) == "":
		co.finish(c, &agent.TurnFinished{Status: event.StatusFailed, Error: "planner: the answer held no plan"})
		return
	}
	co.publish(&event.PlanReady{Round: t.round, Plan: m.Text}, event.RolePlanner)
	co.ask(c, event.RoleExecutor, &agent.RunTurn{Input: fmt.Sprintf(handoffFormat, t.round, t.request, m.Text, ToolPlanReport)})
}

// finish answers the turn with m, the steps and usage of both roles summed.
func (co *coordinator) finish(c actor.Context, m *agent.TurnFinished) {
	t := co.turn
	if t == nil {
		return
	}
	co.turn = nil
	if t.replyTo != nil {
		c.Send(t.replyTo, m.Summed(co.exec.Session, t.steps, t.usage, t.canceled))
	}
}

func (co *coordinator) publish(ev event.Event, role string) {
	if co.exec.Bus == nil {
		return
	}
	m := ev.EventMeta()
	m.Session, m.Role = co.exec.Session, role
	co.exec.Bus.Publish(ev)
}

// repair ends a turn nobody is working on any more, or whose child's
// answer the crash lost, and answers a turn request whose handler
// crashed.
func (co *coordinator) repair(c actor.Context, m *kernel.Crashed) {
	co.ledger.Reconcile(c)
	if _, ok := m.Lost.(*agent.TurnFinished); ok && co.turn != nil {
		// The answer of a child was lost with the handler: its turn is
		// over, and so is this one.
		role := event.RoleExecutor
		if m.Sender != nil && m.Sender.Equal(co.planner) {
			role = event.RolePlanner
		}
		if co.ledger.Settle(role) {
			co.finish(c, &agent.TurnFinished{Status: event.StatusFailed, Error: m.Error()})
			return
		}
	}
	if _, ok := m.Lost.(*agent.RunTurn); ok && m.Sender != nil && !co.Answered() {
		if co.turn == nil || co.turn.replyTo == nil || !co.turn.replyTo.Equal(m.Sender) {
			c.Send(m.Sender, &agent.TurnFinished{Session: co.exec.Session, Status: event.StatusFailed, Error: m.Error()})
		}
	}
	if co.turn != nil && !co.ledger.Pending(event.RolePlanner) && !co.ledger.Pending(event.RoleExecutor) {
		co.finish(c, &agent.TurnFinished{Status: event.StatusFailed, Error: m.Error()})
	}
}
