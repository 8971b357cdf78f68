package agent

import (
	"encoding/json"
	"fmt"

	"reasonix/core/mcp"
	"reasonix/core/permission"
	"reasonix/core/tool"
)

// checkMCP applies an MCP tool's approval mode (docs/SPEC.md, MCP approval
// policy) and reports whether it decided the call. An explicit deny rule
// comes first; destructive tools never get here (they need a fresh
// approval, see checkFresh). auto leaves the call to the ordinary
// decision; approve allows it; prompt reviews every call and writes every
// call of a writer tool. A review is a person's answer for this call: the
// posture and session grants do not give it, and where nobody can answer
// (a headless run, a subagent) the call is refused. There is no automatic
// reviewer yet, so approvals_reviewer = "auto_review" also asks a person.
func (p Permissions) checkMCP(tl tool.Tool, args string) (gateResult, bool) {
	rt, ok := tl.(mcp.Remote)
	if !ok {
		return gateResult{}, false
	}
	mode := rt.ApprovalMode()
	if mode == "" || mode == mcp.ApprovalAuto {
		return gateResult{}, false
	}
	raw := json.RawMessage(args)
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if p.Policy != nil {
		if v := p.Policy.Explain(permission.PostureAsk, tl.Name(), tl.ReadOnly(), raw); v.Decision == permission.Deny {
			return gateResult{Decision: permission.Deny, Reason: v.Reason()}, true
		}
	}
	review := mode == mcp.ApprovalPrompt || (mode == mcp.ApprovalWrites && !tl.ReadOnly())
	if !review {
		return gateResult{Decision: permission.Allow, Reason: fmt.Sprintf("mcp server %q approves its tools (%s)", rt.Server(), mode)}, true
	}
	why := fmt.Sprintf("mcp server %q has every call of %s reviewed (approval mode %s)", rt.Server(), tl.Name(), mode)
	if mode == mcp.ApprovalWrites {
		why = fmt.Sprintf("mcp server %q has calls of its writer tools reviewed (approval mode writes)", rt.Server())
	}
	switch {
	case p.Delegated:
		return gateResult{Decision: permission.Deny, Reason: why + ", and a subagent has nobody who can; mention it in your answer to the parent agent instead"}, true
	case !p.Interactive:
		return gateResult{Decision: permission.Deny, Reason: why + ", and this headless run has nobody who can; tell the user in your answer instead"}, true
	}
	return gateResult{Decision: permission.Ask, Reason: why}, true
}
