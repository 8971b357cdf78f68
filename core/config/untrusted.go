package config

import (
	"fmt"
	"slices"
	"strings"
)

// UntrustedNotice is the one line a frontend shows when the project file
// set keys that were left out because the workspace is not trusted: the
// file, every such key, and how to trust the workspace. It is empty when
// nothing was left out.
func (c *Config) UntrustedNotice() string {
	if len(c.Untrusted) == 0 {
		return ""
	}
	file := c.ProjectFile
	if file == "" {
		file = ProjectFileName
	}
	return fmt.Sprintf("%s: ignored until you trust this workspace: %s (run \"reasonix trust\" to trust it, or \"reasonix run --trust-project\" for one run)",
		file, strings.Join(c.Untrusted, ", "))
}

// strictness ranks the values of the keys an untrusted project may only
// tighten, most permissive first.
var strictness = map[string]map[string]int{
	"permissions.mode":   {"allow": 0, "ask": 1, "deny": 2},
	"agent.subagent_ask": {"allow": 0, "parent": 1, "deny": 2},
}

// holdBack reports whether an untrusted project's value for key is left
// out because it could loosen the user's rules: allow rules, a laxer
// writer fallback or subagent answer, a system prompt read from any file
// (a secret sent to the model), or a model on another provider than the
// one the user's default uses (another destination for the conversation).
// A value the rank does not know is kept, so validation names it.
func (m *merger) holdBack(key string, rv any) bool {
	switch key {
	case "permissions.allow", "agent.system_prompt_file":
		return true
	case "permissions.mode", "agent.subagent_ask":
		rank := strictness[key]
		v, _ := rv.(string)
		cur := m.cfg.Permissions.Mode
		if key == "agent.subagent_ask" {
			cur = m.cfg.Agent.SubagentAsk
		}
		r, known := rank[v]
		return known && r < rank[cur]
	case "default_model", "agent.planner_model", "agent.subagent_model":
		ref, _ := rv.(string)
		return !m.keepsProvider(key, ref)
	case "tools.enabled":
		return m.widensTools(rv)
	case "tools.bash_timeout_seconds":
		// 0 is no cap at all; a runaway command is a loosening too.
		v, ok := rv.(int64)
		cur := int64(m.cfg.Tools.BashTimeoutSeconds)
		return ok && cur > 0 && (v == 0 || v > cur)
	case "agent.max_steps":
		// Likewise a runaway turn: 0 is no guard.
		v, ok := rv.(int64)
		cur := int64(m.cfg.Agent.MaxSteps)
		return ok && cur > 0 && (v == 0 || v > cur)
	}
	return false
}

// widensTools reports whether an untrusted project's tools.enabled would
// turn on a built-in the trusted layers left off: a name outside their
// list, or an empty list (every tool) where they named some.
func (m *merger) widensTools(rv any) bool {
	cur := m.cfg.Tools.Enabled
	if len(cur) == 0 {
		return false // every tool is on already
	}
	list, _ := rv.([]any)
	if len(list) == 0 {
		return true
	}
	for _, e := range list {
		name, _ := e.(string)
		if !slices.Contains(cur, name) {
			return true
		}
	}
	return false
}

// keepsProvider reports whether the model reference ref for key resolves,
// among the trusted layers' providers, to the base provider. A reference
// that resolves to nothing keeps nothing.
func (m *merger) keepsProvider(key, ref string) bool {
	p := m.resolveProvider(key, ref)
	return p != "" && p == m.baseProvider
}

// resolveProvider names the provider, among the trusted layers', that the
// model reference ref for key resolves to, or "" when it resolves to none.
// An empty default_model means the first provider; an empty planner or
// subagent model means the executor's, on the base provider.
func (m *merger) resolveProvider(key, ref string) string {
	if len(m.trustedProviders) == 0 {
		return ""
	}
	if ref == "" {
		if key != "default_model" {
			return m.baseProvider
		}
		ref = m.trustedProviders[0].Name
	}
	c := Config{Providers: m.trustedProviders}
	r, err := c.ResolveModel(ref)
	if err != nil {
		return ""
	}
	return r.Provider.Name
}
