package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/core/permission"
	"reasonix/core/prompt"
	"reasonix/core/tool"
)

// The plan-mode tools.
const (
	ToolExitPlanMode = "exit_plan_mode"
	ToolCompleteStep = "complete_step"
)

// planModeNote opens every user turn while a session plans.
const planModeNote = prompt.PlanModeNote

// PlanModeTools are the tools a session in plan mode offers. Their calls
// are handled by the executor itself, never by a tool runner.
func PlanModeTools() []tool.Tool { return []tool.Tool{exitPlanModeTool{}, completeStepTool{}} }

type exitPlanModeTool struct{}

func (exitPlanModeTool) Name() string { return ToolExitPlanMode }
func (exitPlanModeTool) Description() string {
	return "Present your plan for approval and leave plan mode. Call it once you have researched enough, with the whole plan as numbered steps. If it is approved you carry it out in the same turn, with changes allowed; if not, you are told why and stay in plan mode."
}
func (exitPlanModeTool) ReadOnly() bool { return true }
func (exitPlanModeTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"plan":{"type":"string","description":"The plan: numbered steps, each naming the files or commands it involves."}},"required":["plan"],"additionalProperties":false}`)
}
func (exitPlanModeTool) Execute(context.Context, json.RawMessage) (string, error) {
	return "", errors.New("exit_plan_mode is handled by the session")
}

type completeStepTool struct{}

func (completeStepTool) Name() string { return ToolCompleteStep }
func (completeStepTool) Description() string {
	return "Report a step of the approved plan as done, with a one-line summary. Only after the plan is approved."
}
func (completeStepTool) ReadOnly() bool { return true }
func (completeStepTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"step":{"type":"string","description":"The step, as numbered in the plan."},"summary":{"type":"string","description":"What was done."}},"required":["step"],"additionalProperties":false}`)
}
func (completeStepTool) Execute(context.Context, json.RawMessage) (string, error) {
	return "", errors.New("complete_step is handled by the session")
}

// TrustedReader is implemented by MCP tools a server lists in
// trusted_read_only_tools: the only MCP tools a planning session may call.
type TrustedReader interface{ TrustedReadOnly() bool }

// planDispatch handles call i when plan mode has a say in it: the plan
// tools themselves, and while planning every call that could change
// something. It reports whether it handled the call.
func (e *executor) planDispatch(c actor.Context, i int, tl tool.Tool) bool {
	t := e.turn
	call := t.calls[i]
	switch call.Name {
	case ToolExitPlanMode:
		e.exitPlanMode(c, i)
		return true
	case ToolCompleteStep:
		e.publish(&event.ToolStarted{CallID: call.ID, Tool: call.Name, Args: call.Arguments})
		if e.planning {
			e.record(blocked(call, "complete_step reports steps of an approved plan, and this plan is not approved yet; present it with exit_plan_mode first"), i)
			return true
		}
		var args struct {
			Step    string `json:"step" arg:"required"`
			Summary string `json:"summary"`
		}
		if err := tool.DecodeArgs(ToolCompleteStep, json.RawMessage(call.Arguments), &args); err != nil {
			e.record(&ToolResult{CallID: call.ID, Name: call.Name, IsError: true, Output: "Error: " + err.Error()}, i)
			return true
		}
		e.publish(&event.PlanStep{Step: args.Step, Summary: args.Summary})
		e.record(&ToolResult{CallID: call.ID, Name: call.Name, Output: "Step " + args.Step + " recorded."}, i)
		return true
	}
	if !e.planning || tl.ReadOnly() && !strings.HasPrefix(call.Name, "mcp__") {
		return false
	}
	// Read-only subagents research for the plan; a task that may write
	// waits for it like any writer.
	if team.IsDelegation(tl) && !team.DelegationWrites(call.Arguments) {
		return false
	}
	if strings.HasPrefix(call.Name, "mcp__") {
		if tr, ok := tl.(TrustedReader); ok && tr.TrustedReadOnly() {
			return false
		}
		e.publish(&event.ToolStarted{CallID: call.ID, Tool: call.Name, Args: call.Arguments})
		e.record(blocked(call, "plan mode: MCP tools other than a server's trusted_read_only_tools are blocked until the plan is approved"), i)
		return true
	}
	// A writer (or bash) while planning: an explicit allow rule, or a
	// command the policy knows to be read-only, goes through the normal
	// gate; a deny is a deny; anything that would need an approval waits
	// for the plan's.
	p := e.spec.Permissions
	if p.Policy != nil {
		raw := json.RawMessage(call.Arguments)
		if len(raw) == 0 {
			raw = json.RawMessage("{}")
		}
		switch v := p.Policy.Explain(permission.PostureAsk, call.Name, false, raw); v.Decision {
		case permission.Allow:
			return false
		case permission.Deny:
			e.publish(&event.ToolStarted{CallID: call.ID, Tool: call.Name, Args: call.Arguments})
			e.record(blocked(call, v.Reason()), i)
			return true
		}
	}
	e.publish(&event.ToolStarted{CallID: call.ID, Tool: call.Name, Args: call.Arguments})
	e.record(blocked(call, "plan mode: nothing may be changed before the plan is approved; finish researching and present the plan with exit_plan_mode"), i)
	return true
}

// exitPlanMode presents the plan of call i: approved at once with
// --approve-plan, asked like any approval where a frontend answers, and
// otherwise shown as the run's result, which ends the turn.
func (e *executor) exitPlanMode(c actor.Context, i int) {
	t := e.turn
	call := t.calls[i]
	var args struct {
		Plan string `json:"plan" arg:"required"`
	}
	started := &event.ToolStarted{CallID: call.ID, Tool: call.Name, Args: call.Arguments}
	if err := tool.DecodeArgs(ToolExitPlanMode, json.RawMessage(call.Arguments), &args); err != nil {
		e.publish(started)
		e.record(&ToolResult{CallID: call.ID, Name: call.Name, IsError: true, Output: "Error: " + err.Error()}, i)
		return
	}
	if !e.planning {
		e.publish(started)
		e.record(&ToolResult{CallID: call.ID, Name: call.Name, IsError: true, Output: "Error: the session is not in plan mode; carry on with the approved plan"}, i)
		return
	}
	e.publish(&event.PlanProposed{Plan: args.Plan})
	switch {
	case e.spec.PlanApprove:
		e.publish(started)
		e.approvePlan(i)
	case e.spec.Permissions.Interactive && e.spec.Task == "":
		id := e.approvalID(call.ID)
		t.approvals[id] = i
		t.pending++
		e.publish(&event.ToolWaiting{CallID: call.ID, Tool: call.Name, Args: call.Arguments, RequestID: id})
		e.publish(&event.ApprovalRequested{RequestID: id, CallID: call.ID, Tool: call.Name, Args: call.Arguments,
			Reason: "approve this plan to let the agent carry it out", OnceOnly: true})
	default:
		// Nobody can approve: the plan is the run's answer.
		e.publish(started)
		t.endAfterTools, t.lastPlan = true, args.Plan
		e.record(&ToolResult{CallID: call.ID, Name: call.Name,
			Output: "The plan was shown to the user. Nobody can approve it in this run, so the run ends here without carrying it out."}, i)
	}
}

// approvePlan ends planning and opens the approved-plan window for the
// rest of the turn: the writer fallback is allowed without asking, while
// deny and explicit ask rules, and fresh approvals, still apply.
func (e *executor) approvePlan(i int) {
	t := e.turn
	call := t.calls[i]
	e.planning = false
	t.planWindow = true
	e.record(&ToolResult{CallID: call.ID, Name: call.Name,
		Output: "The plan is approved. Carry it out now; report each step with complete_step as you finish it."}, i)
}

// windowPermissions are the permissions a call is judged by: inside the
// approved-plan window an ask posture counts as auto.
func (e *executor) windowPermissions() Permissions {
	p := e.spec.Permissions
	if e.turn != nil && e.turn.planWindow && (p.Posture == "" || p.Posture == permission.PostureAsk) {
		p.Posture = permission.PostureAuto
	}
	return p
}

// planTurnInput is a user turn as the executor sends it: marked while the
// session plans.
func (e *executor) planTurnInput(input string) string {
	if e.planning {
		return planModeNote + input
	}
	return input
}
