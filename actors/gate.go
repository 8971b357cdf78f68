package actors

import (
	"encoding/json"
	"reasonix/core/tool"

	"reasonix/core/permission"
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
	// (headless run, subagents) Ask resolves to Allow; Deny still blocks.
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
	return p.check(tl.Name(), tl.ReadOnly(), args)
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
