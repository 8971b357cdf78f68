package config

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"reasonix/core/provider"
)

// registeredKinds returns the provider kinds compiled in, or "openai" alone
// when none are (a config-only build or a unit test).
func registeredKinds() []string {
	if k := provider.Kinds(); len(k) > 0 {
		return k
	}
	return []string{"openai"}
}

// checker collects problems, naming the file that set each offending key.
type checker struct {
	c         *Config
	problems  []string
	checkRefs bool
}

func (v *checker) add(key, format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf("%s: %s: %s", v.c.sourceFor(key), key, fmt.Sprintf(format, args...)))
}

func (v *checker) oneOf(key, got string, allowed ...string) {
	if !slices.Contains(allowed, got) {
		v.add(key, "%s is not allowed; use one of %s", QuoteString(got), strings.Join(allowed, ", "))
	}
}

func (v *checker) intRange(key string, got, lo, hi int) {
	if got < lo || got > hi {
		v.add(key, "%d is out of range; use %d to %d", got, lo, hi)
	}
}

func (v *checker) nonNegative(key string, got int) {
	if got < 0 {
		v.add(key, "%d is negative; use 0 or more", got)
	}
}

func (v *checker) ratio(key string, got float64) {
	if !(got > 0 && got <= 1) {
		v.add(key, "%s is out of range; use a fraction above 0 and at most 1", formatFloat(got))
	}
}

func (v *checker) modelRef(key, ref string) {
	if ref == "" || !v.checkRefs {
		return
	}
	if _, err := v.c.ResolveModel(ref); err != nil {
		v.add(key, "%v", err)
	}
}

func (v *checker) httpURL(key, raw string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.add(key, "%s is not an absolute http or https URL", QuoteString(raw))
	}
}

// validate checks the merged config and returns one line per problem.
func validate(c *Config, kinds []string) []string {
	v := &checker{c: c}
	v.providers(kinds)
	// References are only checked against a sound provider list; otherwise
	// each broken provider would also surface as a failed reference.
	v.checkRefs = len(v.problems) == 0
	v.modelRef("default_model", c.DefaultModel)
	if c.UI.ShortcutLayout != "" {
		v.oneOf("ui.shortcut_layout", c.UI.ShortcutLayout, "classic", "desktop")
	}
	v.agent(&c.Agent)
	v.tools(&c.Tools)
	v.oneOf("permissions.mode", c.Permissions.Mode, "ask", "allow", "deny")
	if c.Permissions.ApprovalTimeoutSeconds < 0 {
		v.add("permissions.approval_timeout_seconds", "%d is negative; use 0 to wait for an answer or a number of seconds", c.Permissions.ApprovalTimeoutSeconds)
	}
	v.oneOf("sandbox.bash", c.Sandbox.Bash, "enforce", "off")
	v.serve(&c.Serve)
	v.plugins()
	v.remote(&c.Remote, len(c.Workers) > 0)
	v.workers()
	for _, name := range sortedStringKeys(c.Environment.Tools) {
		if c.Environment.Tools[name] == "" {
			v.add(dotted([]string{"environment", "tools", name}), "path is empty")
		}
	}
	return v.problems
}

func (v *checker) agent(a *Agent) {
	if !(a.Temperature >= 0 && a.Temperature <= 2) {
		v.add("agent.temperature", "%s is out of range; use 0 to 2", formatFloat(a.Temperature))
	}
	v.oneOf("agent.reasoning_language", a.ReasoningLanguage, "auto", "zh", "en")
	v.modelRef("agent.planner_model", a.PlannerModel)
	if a.PlanRounds < 0 || a.PlanRounds > 10 {
		v.add("agent.plan_rounds", "%d is out of range; use 1 to 10 (0 for the default, 3)", a.PlanRounds)
	}
	v.modelRef("agent.subagent_model", a.SubagentModel)
	for _, profile := range sortedStringKeys(a.SubagentModels) {
		v.modelRef(dotted([]string{"agent", "subagent_models", profile}), a.SubagentModels[profile])
	}
	v.oneOf("agent.subagent_ask", a.SubagentAsk, "parent", "allow", "deny")
	v.intRange("agent.max_subagent_concurrency", a.MaxSubagentConcurrency, 1, 64)
	v.intRange("agent.max_parallel_writers", a.MaxParallelWriters, 1, 32)
	if a.WriterIsolation != "" {
		v.oneOf("agent.writer_isolation", a.WriterIsolation, "claims", "worktree")
	}
	if a.ResumeRunning != "" {
		v.oneOf("agent.resume_running", a.ResumeRunning, "rerun", "fail")
	}
	if a.TaskTimeoutSeconds <= 0 {
		v.add("agent.task_timeout_seconds", "%d is not positive; use a number of seconds above 0", a.TaskTimeoutSeconds)
	}
	if a.MaxSteps < 0 {
		v.add("agent.max_steps", "%d is negative; use a number of steps, or 0 for no guard", a.MaxSteps)
	}
	v.ratio("agent.tool_result_snip_ratio", a.ToolResultSnipRatio)
	v.ratio("agent.compact_ratio", a.CompactRatio)
	v.ratio("agent.compact_force_ratio", a.CompactForceRatio)
	if a.ToolResultSnipRatio > a.CompactRatio {
		v.add("agent.tool_result_snip_ratio", "%s is above agent.compact_ratio (%s); the tiers must satisfy snip <= compact <= force",
			formatFloat(a.ToolResultSnipRatio), formatFloat(a.CompactRatio))
	}
	if a.CompactRatio > a.CompactForceRatio {
		v.add("agent.compact_ratio", "%s is above agent.compact_force_ratio (%s); the tiers must satisfy snip <= compact <= force",
			formatFloat(a.CompactRatio), formatFloat(a.CompactForceRatio))
	}
}

func (v *checker) providers(kinds []string) {
	seen := map[string]bool{}
	for _, p := range v.c.Providers {
		prefix := EntryKey("providers", p.Name)
		if seen[p.Name] {
			v.add(prefix+".name", "declared twice")
		}
		seen[p.Name] = true
		if strings.Contains(p.Name, "/") {
			v.add(prefix+".name", "must not contain \"/\", which separates provider from model")
		}
		if !slices.Contains(kinds, p.Kind) {
			v.add(prefix+".kind", "%s is not a known provider kind; use one of %s", QuoteString(p.Kind), strings.Join(kinds, ", "))
		}
		if p.BaseURL == "" && p.ChatURL == "" {
			v.add(prefix+".base_url", "missing; set base_url (or chat_url)")
		}
		for _, u := range []struct{ key, val string }{{"base_url", p.BaseURL}, {"chat_url", p.ChatURL}, {"models_url", p.ModelsURL}} {
			if u.val != "" {
				v.httpURL(prefix+"."+u.key, u.val)
			}
		}
		v.providerModels(prefix, p)
		if p.APIKeyEnv != "" && !isEnvName(p.APIKeyEnv) {
			// The value is not echoed: a key pasted here by mistake is a secret.
			v.add(prefix+".api_key_env", "must be the name of an environment variable (letters, digits and _), not the key itself")
		}
		v.nonNegative(prefix+".context_window", p.ContextWindow)
		v.nonNegative(prefix+".max_tokens", p.MaxTokens)
		v.nonNegative(prefix+".max_in_flight", p.MaxInFlight)
		if p.ContextWindow > 0 && p.MaxTokens >= p.ContextWindow {
			v.add(prefix+".max_tokens", "%d leaves no room for the prompt in context_window %d", p.MaxTokens, p.ContextWindow)
		}
		for _, m := range sortedStringKeys(p.ModelOverrides) {
			key := prefix + ".model_overrides." + quoteKey(m)
			if !p.Offers(m) {
				v.add(key, "model is not offered by this provider; offered: %s", strings.Join(p.ModelList(), ", "))
			}
			v.nonNegative(key+".context_window", p.ModelOverrides[m].ContextWindow)
			v.nonNegative(key+".max_tokens", p.ModelOverrides[m].MaxTokens)
		}
		for _, m := range sortedStringKeys(p.Prices) {
			key := prefix + ".prices." + quoteKey(m)
			if !p.Offers(m) {
				v.add(key, "model is not offered by this provider; offered: %s", strings.Join(p.ModelList(), ", "))
			}
			if pr := p.Prices[m]; pr.Input < 0 || pr.CacheHit < 0 || pr.Output < 0 {
				v.add(key, "prices must not be negative")
			}
		}
		if p.StallTimeoutSeconds <= 0 {
			v.add(prefix+".stall_timeout_seconds", "%d is not positive; use a number of seconds above 0", p.StallTimeoutSeconds)
		}
		v.nonNegative(prefix+".max_retries", p.MaxRetries)
	}
}

func (v *checker) providerModels(prefix string, p ProviderConfig) {
	switch {
	case p.Model != "" && len(p.Models) > 0:
		v.add(prefix+".models", "set either model or models, not both")
		return
	case p.Model == "" && len(p.Models) == 0:
		v.add(prefix+".models", "missing; set model = \"...\" or models = [\"...\"]")
		return
	case p.Model != "" && p.Default != "" && p.Default != p.Model:
		v.add(prefix+".default", "only applies to a models list; with model set, remove default")
		return
	}
	seen := map[string]bool{}
	for _, m := range p.Models {
		if m == "" {
			v.add(prefix+".models", "contains an empty model name")
		} else if seen[m] {
			v.add(prefix+".models", "lists %q twice", m)
		}
		seen[m] = true
	}
	if len(p.Models) > 0 && !slices.Contains(p.Models, p.Default) {
		v.add(prefix+".default", "%s is not one of models (%s)", QuoteString(p.Default), strings.Join(p.Models, ", "))
	}
}

func (v *checker) tools(t *Tools) {
	for _, name := range t.Enabled {
		if name == "" {
			v.add("tools.enabled", "contains an empty tool name")
		}
	}
	v.nonNegative("tools.bash_timeout_seconds", t.BashTimeoutSeconds)
	v.nonNegative("tools.mcp_call_timeout_seconds", t.MCPCallTimeoutSeconds)
	v.oneOf("tools.shell.prefer", t.Shell.Prefer, "auto", "bash", "powershell", "pwsh")
}

func (v *checker) serve(s *Serve) {
	_, port, err := net.SplitHostPort(s.Addr)
	if err != nil {
		v.add("serve.addr", "%s is not host:port", QuoteString(s.Addr))
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		v.add("serve.addr", "%s has no valid port (0 to 65535)", QuoteString(s.Addr))
	}
	v.oneOf("serve.auth_mode", s.AuthMode, "none", "token", "password")
}

// hostPort checks an address of the form host:port. A dial address needs a
// host and a port from 1; a listen address may leave the host empty (every
// interface) and use port 0 (any free one).
func (v *checker) hostPort(key, addr string, dial bool) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		v.add(key, "%s is not host:port", QuoteString(addr))
		return false
	}
	lo := 0
	if dial {
		lo = 1
	}
	if n, err := strconv.Atoi(port); err != nil || n < lo || n > 65535 {
		v.add(key, "%s has no valid port (%d to 65535)", QuoteString(addr), lo)
		return false
	}
	if dial && host == "" {
		v.add(key, "%s has no host", QuoteString(addr))
		return false
	}
	return true
}

func (v *checker) remote(r *Remote, haveWorkers bool) {
	if v.hostPort("remote.listen", r.Listen, false) && r.Advertise == "" && haveWorkers {
		host, _, _ := net.SplitHostPort(r.Listen)
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			v.add("remote.listen", "%s binds every interface, so workers cannot be told where to answer; set remote.advertise to the host:port they should dial", QuoteString(r.Listen))
		}
	}
	if r.Advertise != "" {
		v.hostPort("remote.advertise", r.Advertise, true)
	}
	if r.TokenFile != "" && strings.TrimSpace(r.TokenFile) == "" {
		v.add("remote.token_file", "is blank; set the path of a file holding the token, or remove the key")
	}
	switch {
	case r.TLSCert != "" && r.TLSKey == "":
		v.add("remote.tls_cert", "set without tls_key; set both, or neither")
	case r.TLSKey != "" && r.TLSCert == "":
		v.add("remote.tls_key", "set without tls_cert; set both, or neither")
	}
	if r.TLSCA != "" && (r.TLSCert == "" || r.TLSKey == "") {
		v.add("remote.tls_ca", "applies only with tls_cert and tls_key: both ends use TLS or neither does")
	}
	v.intRange("remote.heartbeat_ms", r.HeartbeatMS, 100, 60000)
	v.intRange("remote.miss_limit", r.MissLimit, 1, 10)
	if r.RunLocal != nil && !*r.RunLocal && !haveWorkers {
		v.add("remote.run_local", "false leaves no process to run tasks: declare at least one [[workers]] entry, or set it to true")
	}
}

func (v *checker) workers() {
	seen := map[string]bool{}
	for _, w := range v.c.Workers {
		prefix := EntryKey("workers", w.Name)
		if seen[w.Name] {
			v.add(prefix+".name", "declared twice")
		}
		seen[w.Name] = true
		if !isWorkerName(w.Name) {
			v.add(prefix+".name", "%s may contain only a-z, 0-9, _ and -", QuoteString(w.Name))
		}
		if w.Address == "" {
			v.add(prefix+".address", "missing; set the worker's host:port")
		} else {
			v.hostPort(prefix+".address", w.Address, true)
		}
		v.intRange(prefix+".capacity", w.Capacity, 1, 64)
		if strings.ContainsAny(w.Workspace, `/\`) {
			v.add(prefix+".workspace", "%s is a path; use the name of the checkout the worker serves", QuoteString(w.Workspace))
		}
		for _, p := range w.Writes {
			if msg := writeClaimProblem(p); msg != "" {
				v.add(prefix+".writes", "%s %s", QuoteString(p), msg)
			}
		}
	}
}

// writeClaimProblem says what is wrong with a writes entry, or "" when it
// names a path inside the workspace root.
func writeClaimProblem(p string) string {
	switch {
	case strings.TrimSpace(p) == "":
		return "is empty; use \".\" for the whole workspace"
	case filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "":
		return "is absolute; write it relative to the workspace root"
	}
	clean := filepath.ToSlash(filepath.Clean(p))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "leaves the workspace root"
	}
	return ""
}

func isWorkerName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return s != ""
}

var approvalModes = []string{"auto", "prompt", "writes", "approve"}

func (v *checker) plugins() {
	seen := map[string]bool{}
	for _, p := range v.c.Plugins {
		prefix := EntryKey("plugins", p.Name)
		if seen[p.Name] {
			v.add(prefix+".name", "declared twice")
		}
		seen[p.Name] = true
		v.oneOf(prefix+".type", p.Type, "stdio", "http", "sse")
		switch p.Type {
		case "stdio":
			if p.Command == "" {
				v.add(prefix+".command", "missing; a stdio server needs the command to start")
			}
			if p.URL != "" {
				v.add(prefix+".url", "only applies to http and sse servers; set type = \"http\" or remove url")
			}
		case "http", "sse":
			if p.URL == "" {
				v.add(prefix+".url", "missing; an %s server needs its url", p.Type)
			}
			if p.Command != "" {
				v.add(prefix+".command", "only applies to stdio servers; remove command or type")
			}
		}
		v.nonNegative(prefix+".call_timeout_seconds", p.CallTimeoutSeconds)
		for _, name := range sortedStringKeys(p.ToolTimeoutSeconds) {
			v.nonNegative(prefix+".tool_timeout_seconds."+quoteKey(name), p.ToolTimeoutSeconds[name])
		}
		if p.DefaultToolsApprovalMode != "" {
			v.oneOf(prefix+".default_tools_approval_mode", p.DefaultToolsApprovalMode, approvalModes...)
		}
		for _, name := range sortedStringKeys(p.Tools) {
			v.oneOf(prefix+".tools."+quoteKey(name)+".approval_mode", p.Tools[name].ApprovalMode, approvalModes...)
		}
		if p.ApprovalsReviewer != "" {
			v.oneOf(prefix+".approvals_reviewer", p.ApprovalsReviewer, "user", "auto_review")
		}
		v.pluginOAuth(prefix, p)
		if u := p.OAuthClientMetadataURL; u != "" && !strings.HasPrefix(u, "https://") {
			v.add(prefix+".oauth_client_metadata_url", "must be an https url")
		}
		if p.Sandbox && p.Type != "" && p.Type != "stdio" {
			v.add(prefix+".sandbox", "only applies to stdio servers")
		}
	}
}

// pluginOAuth checks the oauth_* keys of a [[plugins]] entry: a known
// grant and algorithm, and what each machine grant needs.
func (v *checker) pluginOAuth(prefix string, p PluginConfig) {
	if p.OAuthGrant != "" {
		v.oneOf(prefix+".oauth_grant", p.OAuthGrant, "authorization_code", "client_credentials", "cross_app_access")
	}
	if p.OAuthSigningAlgorithm != "" {
		v.oneOf(prefix+".oauth_signing_algorithm", p.OAuthSigningAlgorithm,
			"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")
	}
	key := p.OAuthPrivateKeyFile != "" || p.OAuthPrivateKeyEnv != ""
	if p.OAuthPrivateKeyFile != "" && p.OAuthPrivateKeyEnv != "" {
		v.add(prefix+".oauth_private_key_env", "set oauth_private_key_file or oauth_private_key_env, not both")
	}
	switch p.OAuthGrant {
	case "client_credentials":
		if p.OAuthClientID == "" || (p.OAuthClientSecretEnv == "" && !key) {
			v.add(prefix+".oauth_grant", "client_credentials needs oauth_client_id and oauth_client_secret_env or a private key (oauth_private_key_file or oauth_private_key_env)")
		}
	case "cross_app_access":
		if p.OAuthClientID == "" || p.OAuthIDPIssuer == "" || p.OAuthIDPClientID == "" || p.OAuthIDTokenEnv == "" {
			v.add(prefix+".oauth_grant", "cross_app_access needs oauth_client_id, oauth_idp_issuer, oauth_idp_client_id and oauth_id_token_env")
		}
	}
	if key && p.OAuthGrant != "client_credentials" {
		v.add(prefix+".oauth_grant", "a private key authenticates only the client_credentials grant")
	}
}

// SourceOf returns the file that set key, or "default".
func (c *Config) SourceOf(key string) string {
	if s, ok := c.Sources[key]; ok {
		return s
	}
	return SourceDefault
}

// sourceFor is SourceOf for keys that may not be recorded themselves: a
// key inside a map or an entry falls back to the map or the entry's name.
func (c *Config) sourceFor(key string) string {
	for k := key; k != ""; {
		if s, ok := c.Sources[k]; ok {
			return s
		}
		if strings.HasSuffix(k, "]") {
			if s, ok := c.Sources[k+".name"]; ok {
				return s
			}
		}
		i := strings.LastIndex(k, ".")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return SourceDefault
}

func isEnvName(s string) bool {
	for i, r := range s {
		ok := r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return s != ""
}

func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

func sortedStringKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
