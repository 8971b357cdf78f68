package agent

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
	// TrustHome is the Reasonix home whose trust store an "always" rule
	// saved to ProjectFile keeps current, so the user's own answer does
	// not cost a trusted workspace its trust; empty leaves the store be.
	TrustHome string
	// Delegated marks a subagent's gate: calls that need a person's fresh
	// approval (tool.FreshApproval) are refused there, whoever could answer.
	Delegated bool
	// Protected reports whether a path a file tool would write is one of
	// the workspace's trust-bearing files (sandbox.Sandbox.Protected), and
	// where it resolves. Such a write needs a person's fresh approval
	// every time, like remember; nil protects nothing.
	Protected func(path string) (string, bool)
}

// CheckTool decides one call of tl. Tools that need a fresh approval every
// call, and file-tool writes to trust-bearing files, are decided here;
// every other tool goes through check.
func (p Permissions) CheckTool(tl tool.Tool, args string) gateResult {
	raw := json.RawMessage(args)
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if fa, ok := tl.(tool.FreshApproval); ok {
		return p.checkFresh(tl, raw, tl.Name()+" needs a person to approve each call", fa.Preview(raw))
	}
	if why, ok := p.protectedWrite(tl.Name(), raw); ok {
		return p.checkFresh(tl, raw, why+", so a person must approve each such write", why)
	}
	if g, ok := p.checkMCP(tl, args); ok {
		return g
	}
	return p.Check(tl.Name(), tl.ReadOnly(), args)
}

// protectedWrite reports whether a file-tool call writes a trust-bearing
// file (reasonix.toml, .mcp.json, .reasonix/, .git/config, .git/hooks),
// and says which: such files decide what every later run trusts, so the
// agent may change them only with a person's word each time.
func (p Permissions) protectedWrite(name string, raw json.RawMessage) (string, bool) {
	if p.Protected == nil {
		return "", false
	}
	for _, path := range permission.EditPaths(name, raw) {
		if resolved, ok := p.Protected(path); ok {
			return fmt.Sprintf("%s of %s changes a trust-bearing file (%s)", name, path, resolved), true
		}
	}
	return "", false
}

// checkFresh decides a call that a person must approve at the moment it is
// made; why says what makes it so and preview what the call would do. A
// deny from the policy still stands, since refusing needs nobody. Nothing
// else can allow it: not the posture (yolo included), not an allow rule,
// not a session grant, and not the fact that nobody is there to ask, which
// is a refusal rather than the allow other Asks get headless. Rule
// suggestions are left out because no rule could ever cover the call; the
// executor takes any answer for this call only.
func (p Permissions) checkFresh(tl tool.Tool, raw json.RawMessage, why, preview string) gateResult {
	if p.Policy != nil {
		// The posture only relaxes Asks, so a deny found under ask is the
		// deny under any posture.
		if v := p.Policy.Explain(permission.PostureAsk, tl.Name(), tl.ReadOnly(), raw); v.Decision == permission.Deny {
			return gateResult{Decision: permission.Deny, Reason: v.Reason()}
		}
	}
	if p.Delegated {
		return gateResult{Decision: permission.Deny, Reason: why +
			", and a subagent has nobody who can; mention it in your answer to the parent agent instead"}
	}
	if !p.Interactive {
		return gateResult{Decision: permission.Deny, Reason: why +
			", and this headless run has nobody who can; tell the user in your answer instead"}
	}
	return gateResult{Decision: permission.Ask, Once: true,
		Reason: preview + " (asked every time, whatever the approval mode or earlier answers)"}
}

// gateResult is the gate's answer for one call.
type gateResult struct {
	Decision permission.Decision
	Reason   string
	Suggest  []string
	// once says an approval covers this call alone (once_only).
	Once bool
}

// Check decides one call. A session grant turns an Ask into Allow, never
// a Deny.
func (p Permissions) Check(name string, readOnly bool, args string) gateResult {
	if p.Policy == nil {
		return gateResult{Decision: permission.Allow}
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
	res := gateResult{Decision: v.Decision, Reason: v.Reason()}
	if v.Decision != permission.Ask {
		return res
	}
	if p.Grants.Covers(name, raw) {
		return gateResult{Decision: permission.Allow, Reason: "allowed for this session"}
	}
	if !p.Interactive {
		// A check that failed asks a person; with nobody to ask it is a
		// no, never the allow an unanswerable Ask gets here.
		if p.DenyUnasked || v.Source == permission.FromFailure {
			return gateResult{Decision: permission.Deny, Reason: "nobody may approve it here: " + v.Reason()}
		}
		return gateResult{Decision: permission.Allow, Reason: "no approver: " + v.Reason()}
	}
	res.Suggest = p.Policy.Suggest(name, raw)
	return res
}
