package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/event"
	"reasonix/core/provider"
	"reasonix/core/tool"
)

// LoopRepeats is how many times in a row the same call (name and canonical
// arguments) with the same result ends a session's turn: a model that
// repeats itself that often has stopped learning from what it gets back.
const LoopRepeats = 3

// ToolContinueTurn names, in the go-on question of the step guard, what
// the user allows: the turn taking more steps. It is no tool the model
// sees.
const ToolContinueTurn = "continue_turn"

// guardCall marks, in a turn's approvals, the go-on question of a guard
// rather than a tool call.
const guardCall = -1

// guardAsk is a guard's go-on question waiting for the user: the request
// it was published as, and how the turn ends if the answer is no.
type guardAsk struct {
	id     string
	status string
	reason string
}

// overBudget tells the step budget what the turn has used since it last
// asked, and names the budget that forbids another request, or is empty.
func (e *executor) overBudget() string {
	b := e.spec.Budget
	if b == nil {
		return ""
	}
	t := e.turn
	b.Spend(t.usage.TotalTokens - t.metered)
	t.metered = t.usage.TotalTokens
	return b.Exhausted()
}

// guarded runs the loop and step guards after a tool round and reports
// whether one of them stopped the turn: ended it (headless, a subagent, a
// planner) or put the go-on question to the user.
func (e *executor) guarded(c actor.Context) bool {
	t := e.turn
	if n := e.spec.LoopRepeats; n > 0 {
		for i, call := range t.calls {
			if sig := loopSignature(call, t.results[i]); sig == t.loop {
				t.repeats++
			} else {
				t.loop, t.repeats = sig, 1
			}
		}
		if t.repeats >= n {
			call := t.calls[len(t.calls)-1]
			why := fmt.Sprintf("the model made the same %s call %d times in a row and got the same result each time", call.Name, t.repeats)
			return e.stopGuard(c, StatusLoop, why, call.Name, call.Arguments,
				why+". Allow to let the turn go on; deny ends it.")
		}
	}
	if n := e.spec.GuardSteps; n > 0 && t.step-t.guardFrom >= n {
		why := fmt.Sprintf("stopped after %d steps in one turn (agent.max_steps = %d)", t.step-t.guardFrom, n)
		return e.stopGuard(c, event.StatusMaxSteps, why, ToolContinueTurn, fmt.Sprintf(`{"steps":%d}`, t.step),
			fmt.Sprintf("This turn has taken %d steps (agent.max_steps = %d). Allow to let it go on for up to %d more; deny ends it.", t.step-t.guardFrom, n, n))
	}
	return false
}

// stopGuard ends the turn with status and why, or, where a person answers
// this executor's approvals, asks them whether it goes on (once only: the
// answer covers this question alone).
func (e *executor) stopGuard(c actor.Context, status, why, toolName, args, question string) bool {
	t := e.turn
	if !e.spec.Permissions.Interactive || e.spec.Task != "" || e.spec.Role == event.RolePlanner {
		// Nobody is there to ask (a subagent's questions would outlive
		// its parent's patience; a planner's answers are routed to the
		// executor): the turn ends with the reason.
		if status == StatusLoop {
			e.publish(&event.ErrorOccurred{Message: why})
		}
		e.endTurn(c, status, why)
		return true
	}
	e.guards++
	id := e.approvalID(fmt.Sprintf("guard-%d", e.guards))
	t.guard = &guardAsk{id: id, status: status, reason: why}
	if t.approvals == nil {
		t.approvals = map[string]int{}
	}
	if t.approvalTimers == nil {
		t.approvalTimers = map[string]*time.Timer{}
	}
	t.approvals[id] = guardCall
	e.publish(&event.ApprovalRequested{RequestID: id, Tool: toolName, Args: args, Reason: question, OnceOnly: true})
	if d := e.spec.ApprovalTimeout; d > 0 {
		sys, self := e.sys, c.Self()
		t.approvalTimers[id] = time.AfterFunc(d, func() { sys.Send(self, &approvalExpired{requestID: id}) })
	}
	return true
}

// onGuardAnswer applies the user's answer to a go-on question: yes resets
// both guards and takes the next step; no (or a cancel, or a timeout) ends
// the turn.
func (e *executor) onGuardAnswer(c actor.Context, m *ApprovalResponse) {
	t := e.turn
	g := t.guard
	t.guard = nil
	if g == nil {
		return
	}
	if m.Choice == event.ApproveDeny || t.canceled {
		reason := m.Reason
		if reason == "" {
			reason = "the user chose to stop"
		}
		if t.canceled {
			reason = "the turn was cancelled"
		}
		e.publish(&event.ApprovalResolved{RequestID: g.id, Decision: event.ApproveDeny, Reason: reason})
		if t.canceled {
			e.endTurn(c, event.StatusCancelled, "")
			return
		}
		e.endTurn(c, g.status, g.reason+"; "+reason)
		return
	}
	e.publish(&event.ApprovalResolved{RequestID: g.id, Decision: event.ApproveOnce})
	t.loop, t.repeats, t.guardFrom = "", 0, t.step
	e.startStep(c)
}

// loopSignature identifies a call and its outcome for the loop guard: two
// calls match when they name the same tool with the same arguments up to
// key order and spacing, and got the same result.
func loopSignature(call provider.ToolCall, res *ToolResult) string {
	args := strings.TrimSpace(call.Arguments)
	if canon, err := tool.Canonical(json.RawMessage(args)); err == nil {
		args = string(canon)
	}
	h := sha256.New()
	for _, part := range []string{call.Name, args, fmt.Sprint(res != nil && res.IsError), outputOf(res)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func outputOf(res *ToolResult) string {
	if res == nil {
		return ""
	}
	return res.Output
}

// StepBudget holds an executor to budgets that live above its turns (a
// goal's): the executor consults it before every model request and after
// every tool round, so a ceiling stops a turn within one step of it rather
// than when the turn ends. Its methods are called from the executor's
// handler and must not block.
type StepBudget interface {
	// Spend counts tokens the running turn used since the last call.
	Spend(tokens int)
	// Exhausted names the budget that forbids another model request, or
	// is empty.
	Exhausted() string
	// Round closes one tool-call round, the step's calls and their
	// results in order. A non-empty answer ends the turn, with it as the
	// reason.
	Round(calls []provider.ToolCall, results []*ToolResult) string
}
