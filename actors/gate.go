package actors

import (
	"encoding/json"
	"fmt"

	"reasonix/core/permission"
	"reasonix/core/tool"
)

// Permissions gates a session's tool calls (docs/SPEC.md, Permissions).
// The zero value allows every call.
type Permissions struct {
	// Policy holds the configured rules; nil allows everything.
	Policy *permission.Policy
	// Posture is ask, auto or yolo.
	Posture permission.Posture
	// Grants are the rules the user approved for this session.
	Grants *permission.Grants
	// Interactive says a frontend answers approval requests. Without one
	// (headless run, subagents) Ask resolves to Allow, except for tools
	// that need a fresh approval, which are refused; Deny still blocks.
	Interactive bool
	// DenyUnasked makes an Ask that nobody can answer a deny instead of
	// an allow (agent.subagent_ask = "deny").
	DenyUnasked bool
	// ProjectFile is where "always allow" rules are saved.
	ProjectFile string
	// Delegated marks a subagent's gate: calls that need a person's fresh
	// approval (tool.FreshApproval) are refused there, whoever could answer.
	Delegated bool
}

// checkTool decides one call of tl. Tools that need a fresh approval every
// call are decided here; every other tool goes through check.
func (p Permissions) checkTool(tl tool.Tool, args string) gateResult {
	if fa, ok := tl.(tool.FreshApproval); ok {
		return p.checkFresh(tl, fa, args)
	}
	if g, ok := p.checkMCP(tl, args); ok {
		return g
	}
	return p.check(tl.Name(), tl.ReadOnly(), args)
}

// checkFresh decides a call that a person must approve at the moment it is
// made. A deny from the policy still stands, since refusing needs nobody.
// Nothing else can allow it: not the posture (yolo included), not an allow
// rule, not a session grant, and not the fact that nobody is there to ask,
// which is a refusal rather than the allow other Asks get headless. Rule
// suggestions are left out because no rule could ever cover the call; the
// executor takes any answer for this call only.
func (p Permissions) checkFresh(tl tool.Tool, fa tool.FreshApproval, args string) gateResult {
	raw := json.RawMessage(args)
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if p.Policy != nil {
		// The posture only relaxes Asks, so a deny found under ask is the
		// deny under any posture.
		if v := p.Policy.Explain(permission.PostureAsk, tl.Name(), tl.ReadOnly(), raw); v.Decision == permission.Deny {
			return gateResult{decision: permission.Deny, reason: v.Reason()}
		}
	}
	if p.Delegated {
		return gateResult{decision: permission.Deny, reason: fmt.Sprintf(
			"%s needs a person to approve each call, and a subagent has nobody who can; "+
				"mention it in your answer to the parent agent instead", tl.Name())}
	}
	if !p.Interactive {
		return gateResult{decision: permission.Deny, reason: fmt.Sprintf(
			"%s needs a person to approve each call, and this headless run has nobody who can; "+
				"tell the user in your answer instead", tl.Name())}
	}
	return gateResult{decision: permission.Ask,
		reason: fa.Preview(raw) + " (asked every time, whatever the approval mode or earlier answers)"}
}

// gateResult is the gate's answer for one call.
type gateResult struct {
	decision permission.Decision
	reason   string
	suggest  []string
}

// check decides one call. A session grant turns an Ask into Allow, never
// a Deny.
func (p Permissions) check(name string, readOnly bool, args string) gateResult {
	if p.Policy == nil {
		return gateResult{decision: permission.Allow}
	}
	raw := json.RawMessage(args)
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	posture := p.Posture
	if posture == "" {
		posture = permission.PostureAsk
	}
	v := p.Policy.Explain(posture, name, readOnly, raw)
	res := gateResult{decision: v.Decision, reason: v.Reason()}
	if v.Decision != permission.Ask {
		return res
	}
	if p.Grants.Covers(name, raw) {
		return gateResult{decision: permission.Allow, reason: "allowed for this session"}
	}
	if !p.Interactive {
		if p.DenyUnasked {
			return gateResult{decision: permission.Deny, reason: "nobody may approve it here: " + v.Reason()}
		}
		return gateResult{decision: permission.Allow, reason: "no approver: " + v.Reason()}
	}
	res.suggest = p.Policy.Suggest(name, raw)
	return res
}
