package config

// Config is the effective, merged configuration. The fields tagged for TOML
// are the file schema; the rest describe how the value was assembled.
//
// Callers may change plain fields after Load to apply command-line flags
// (for example cfg.DefaultModel from --model, preferably via
// SetDefaultModel); they should record the change with SetSource so Show
// stays truthful.
type Config struct {
	// DefaultModel is the model reference used when none is given: a
	// provider name, a bare model name or provider/model.
	DefaultModel string `toml:"default_model"`
	// Language is the UI language tag; empty means detect it from the
	// environment.
	Language string `toml:"language"`
	// UI is the [ui] table.
	UI UI `toml:"ui"`
	// Agent is the [agent] table.
	Agent Agent `toml:"agent"`
	// Providers are the [[providers]] entries in precedence-merged order;
	// when no file declares one, the built-in DeepSeek entry.
	Providers []ProviderConfig `toml:"providers"`
	// Tools is the [tools] table.
	Tools Tools `toml:"tools"`
	// Permissions is the [permissions] table.
	Permissions Permissions `toml:"permissions"`
	// Sandbox is the [sandbox] table.
	Sandbox Sandbox `toml:"sandbox"`
	// Skills is the [skills] table.
	Skills Skills `toml:"skills"`
	// Serve is the [serve] table.
	Serve Serve `toml:"serve"`
	// Plugins are the [[plugins]] entries (MCP servers). Sources tells
	// whether an entry came from the project file.
	Plugins []PluginConfig `toml:"plugins"`
	// Environment is the [environment] table.
	Environment Environment `toml:"environment"`
	// Remote is the [remote] table: this process's endpoint for remote
	// workers. It is user-level only.
	Remote Remote `toml:"remote"`
	// Workers are the [[workers]] entries: hosts running `reasonix worker`
	// that fleet tasks may be placed on. They are user-level only.
	Workers []Worker `toml:"workers"`

	// Home is the Reasonix home directory the config was loaded for.
	Home string `toml:"-"`
	// getenv reads the environment for API keys (Options.Getenv).
	getenv func(string) string
	// Files lists the files that were read, lowest precedence first.
	Files []string `toml:"-"`
	// ProjectFile is the project reasonix.toml that was read, or "" when
	// there was none. Consumers that must treat project-supplied entries
	// as untrusted (MCP launch grants) compare Sources values against it.
	ProjectFile string `toml:"-"`
	// ProjectTrusted reports whether the project layer was honoured in
	// full (Options.TrustProject). It is the workspace's decision, so it
	// holds for the project's .mcp.json too, even when --config names the
	// project's reasonix.toml.
	ProjectTrusted bool `toml:"-"`
	// Untrusted lists, sorted, the dotted keys of the project file that
	// were left out because the workspace is not trusted, such as
	// permissions.allow or providers[team]; trusting the workspace would
	// honour them. They are not Warnings: UntrustedNotice renders them as
	// one line.
	Untrusted []string `toml:"-"`
	// Warnings holds one human-readable line per ignored key, in file
	// order, lowest layer first.
	Warnings []string `toml:"-"`
	// Sources maps a dotted key to the file that set it, or "default" for
	// a built-in value. Array entries are keyed by name, as in
	// providers[deepseek].base_url.
	Sources map[string]string `toml:"-"`
}

// UI holds settings of the terminal frontend.
type UI struct {
	// ShortcutLayout is the key binding layout: classic or desktop.
	ShortcutLayout string `toml:"shortcut_layout"`
	// CursorShape is the textarea cursor, always one of underline, block
	// or bar after Load (empty or unknown values become bar).
	CursorShape string `toml:"cursor_shape"`
}

// Agent holds settings of the executor, the planner and subagents.
type Agent struct {
	// SystemPrompt replaces the built-in system prompt when non-empty.
	SystemPrompt string `toml:"system_prompt"`
	// SystemPromptFile names a file holding the system prompt. A relative
	// path is resolved against the directory of the file that set it.
	// When both prompt keys end up set, the one from the higher layer wins.
	SystemPromptFile string `toml:"system_prompt_file"`
	// Temperature is the sampling temperature, 0 to 2.
	Temperature float64 `toml:"temperature"`
	// ReasoningLanguage selects the language of visible reasoning text:
	// auto, zh or en.
	ReasoningLanguage string `toml:"reasoning_language"`
	// PlanModeAllowedTools is a legacy list of MCP tools trusted as
	// read-only; it does not change what plan mode allows.
	PlanModeAllowedTools []string `toml:"plan_mode_allowed_tools"`
	// PlanModeReadOnlyCommands is kept for compatibility only.
	PlanModeReadOnlyCommands []string `toml:"plan_mode_read_only_commands"`
	// PlannerModel, when it resolves to a different model than the
	// executor's, turns on two-model collaboration.
	PlannerModel string `toml:"planner_model"`
	// PlanRounds bounds the planning rounds of one turn in a two-model
	// run, the first included (1-10; 0 means the default, 3).
	PlanRounds int `toml:"plan_rounds"`
	// SubagentModel and SubagentEffort are the defaults for subagents.
	SubagentModel  string `toml:"subagent_model"`
	SubagentEffort string `toml:"subagent_effort"`
	// SubagentAsk is what a subagent's call that needs approval does:
	// "parent" asks the parent session's frontend (allowed when the
	// session has none), "allow" or "deny" decide without asking.
	SubagentAsk string `toml:"subagent_ask"`
	// SubagentModels and SubagentEfforts override the defaults per
	// subagent profile name.
	SubagentModels  map[string]string `toml:"subagent_models"`
	SubagentEfforts map[string]string `toml:"subagent_efforts"`
	// MaxSubagentConcurrency caps running subagents (1-64: a whole fleet may run at once).
	MaxSubagentConcurrency int `toml:"max_subagent_concurrency"`
	// MaxParallelWriters caps running subagents that write files (1-32).
	MaxParallelWriters int `toml:"max_parallel_writers"`
	// TaskTimeoutSeconds bounds one subagent task; always positive.
	TaskTimeoutSeconds int `toml:"task_timeout_seconds"`
	// MaxSteps is the step guard of one turn: after that many model
	// requests in a turn, a headless turn ends and the chat asks whether to
	// go on. 0 turns the guard off.
	MaxSteps int `toml:"max_steps"`
	// ResumeRunning is what `reasonix fleet resume` does with a task that
	// was running when its process died: "rerun" or "fail".
	ResumeRunning string `toml:"resume_running"`
	// BackgroundWakeup says whether background results that come while
	// no turn runs start a turn of their own (the default); false keeps
	// them for the next prompt.
	BackgroundWakeup bool `toml:"background_wakeup"`
	// WriterIsolation is how a writer task is kept from its siblings when
	// it does not say: "claims" (its write_paths; overlapping writers take
	// turns) or "worktree" (a git worktree of its own, merged back when it
	// ends). Outside a git repository writers always use claims.
	WriterIsolation string `toml:"writer_isolation"`
	// ToolResultSnipRatio, CompactRatio and CompactForceRatio are the
	// compaction tiers as fractions of the context window; each lies in
	// (0,1] and snip <= compact <= force.
	ToolResultSnipRatio float64 `toml:"tool_result_snip_ratio"`
	CompactRatio        float64 `toml:"compact_ratio"`
	CompactForceRatio   float64 `toml:"compact_force_ratio"`
}

// ProviderConfig is one vendor endpoint offering one or more models. It
// declares either Model or Models, never both.
type ProviderConfig struct {
	// Name identifies the provider in model references; it is unique and
	// contains no "/".
	Name string `toml:"name"`
	// Kind selects the provider implementation, e.g. "openai".
	Kind string `toml:"kind"`
	// BaseURL is the API root; chat requests go to BaseURL +
	// "/chat/completions".
	BaseURL string `toml:"base_url"`
	// ChatURL is a full chat request URL for gateways that need one; it
	// wins over BaseURL.
	ChatURL string `toml:"chat_url"`
	// ModelsURL is the optional model discovery URL.
	ModelsURL string `toml:"models_url"`
	// Model is the single-model form.
	Model string `toml:"model"`
	// Models is the list form.
	Models []string `toml:"models"`
	// Default picks one of Models; Load sets it to Models[0] when unset.
	Default string `toml:"default"`
	// APIKeyEnv names the variable holding the API key; empty means the
	// endpoint needs no key.
	APIKeyEnv string `toml:"api_key_env"`
	// ContextWindow is the provider-wide window in tokens; 0 disables
	// compaction.
	ContextWindow int `toml:"context_window"`
	// MaxTokens caps each answer (the request's max_tokens); 0 sends no
	// cap, and compaction then keeps a default share of the window free.
	MaxTokens int `toml:"max_tokens"`
	// MaxInFlight is the ceiling of the endpoint's adaptive concurrency
	// window, shared by every agent of the process; 0 means 64.
	MaxInFlight int `toml:"max_in_flight"`
	// ModelOverrides holds per-model settings keyed by model ID.
	ModelOverrides map[string]ModelOverride `toml:"model_overrides"`
	// Prices holds per-model prices keyed by model ID; they turn token
	// counts into the cost that subagent budgets and task reports use.
	Prices map[string]ModelPrice `toml:"prices"`
	// StallTimeoutSeconds ends a stream that stays silent this long.
	StallTimeoutSeconds int `toml:"stall_timeout_seconds"`
	// MaxRetries bounds retries of a request that failed before its first
	// byte; 0 disables retrying.
	MaxRetries int `toml:"max_retries"`
	// SendReasoning sends each assistant message's reasoning back in later
	// requests, as DeepSeek's thinking mode requires with tools; Load sets
	// it to true when unset. False is for endpoints that reject the field.
	SendReasoning bool `toml:"send_reasoning"`
}

// ModelPrice is what one model costs per million tokens, in whatever
// currency the prices are written in.
type ModelPrice struct {
	// Input is the price of prompt tokens the provider's cache did not
	// serve; CacheHit of those it did (Input when zero).
	Input    float64 `toml:"input"`
	CacheHit float64 `toml:"cache_hit"`
	// Output is the price of completion tokens.
	Output float64 `toml:"output"`
}

// ModelOverride holds per-model settings inside a provider.
type ModelOverride struct {
	// ContextWindow replaces the provider's window when positive.
	ContextWindow int `toml:"context_window"`
	// MaxTokens replaces the provider's max_tokens when positive.
	MaxTokens int `toml:"max_tokens"`
}

// ModelList returns the models the provider offers, in declared order.
func (p ProviderConfig) ModelList() []string {
	if p.Model != "" {
		return []string{p.Model}
	}
	return p.Models
}

// DefaultModel returns the model a bare reference to the provider means.
func (p ProviderConfig) DefaultModel() string {
	switch {
	case p.Model != "":
		return p.Model
	case p.Default != "":
		return p.Default
	case len(p.Models) > 0:
		return p.Models[0]
	}
	return ""
}

// Offers reports whether the provider lists model.
func (p ProviderConfig) Offers(model string) bool {
	for _, m := range p.ModelList() {
		if m == model {
			return true
		}
	}
	return false
}

// Tools holds settings of the tool set.
type Tools struct {
	// Enabled lists the built-in tools to expose; empty means all.
	Enabled []string `toml:"enabled"`
	// BashTimeoutSeconds caps one foreground shell command; 0 = no cap.
	BashTimeoutSeconds int `toml:"bash_timeout_seconds"`
	// MCPCallTimeoutSeconds is the default cap for one MCP call.
	MCPCallTimeoutSeconds int `toml:"mcp_call_timeout_seconds"`
	// Shell is the [tools.shell] table.
	Shell Shell `toml:"shell"`
}

// Shell selects the interpreter of the shell tool.
type Shell struct {
	// Prefer is auto, bash, powershell or pwsh.
	Prefer string `toml:"prefer"`
	// Path is an explicit executable for the chosen shell (user-level).
	Path string `toml:"path"`
}

// Permissions holds the static permission policy. Rule syntax is checked by
// the permission package, not here.
type Permissions struct {
	// Mode is the writer fallback when no rule matches: ask, allow or deny.
	Mode string `toml:"mode"`
	// Allow lists rules that never prompt.
	Allow []string `toml:"allow"`
	// Ask lists rules that always prompt; it is the union of every
	// layer's entries.
	Ask []string `toml:"ask"`
	// Deny lists rules that are blocked in every mode; it is the union of
	// every layer's entries.
	Deny []string `toml:"deny"`
	// ApprovalTimeoutSeconds denies a call nobody approved within it, so
	// an unattended approval never holds a turn forever; 0 waits.
	ApprovalTimeoutSeconds int `toml:"approval_timeout_seconds"`
}

// Sandbox holds the enforcement layer beneath permissions. Only
// ForbidRead may be extended by a project file.
type Sandbox struct {
	// WorkspaceRoot confines file writers; empty means the working dir.
	WorkspaceRoot string `toml:"workspace_root"`
	// AllowWrite lists extra directories file writers may modify.
	AllowWrite []string `toml:"allow_write"`
	// ForbidRead lists paths no tool may read; it is the union of every
	// layer's entries.
	ForbidRead []string `toml:"forbid_read"`
	// Bash is enforce or off.
	Bash string `toml:"bash"`
	// Network lets sandboxed shell commands reach the network.
	Network bool `toml:"network"`
}

// Skills holds where skills are found and which are hidden.
type Skills struct {
	// Paths are extra skill roots.
	Paths []string `toml:"paths"`
	// ExcludedPaths are skill roots to hide.
	ExcludedPaths []string `toml:"excluded_paths"`
	// DisabledSkills are skill names hidden everywhere.
	DisabledSkills []string `toml:"disabled_skills"`
}

// Serve holds settings of the browser frontend; it is user-level only.
type Serve struct {
	// Addr is the listen address, host:port.
	Addr string `toml:"addr"`
	// AuthMode is none, token or password.
	AuthMode string `toml:"auth_mode"`
	// Token is a fixed token for token mode; empty generates one.
	Token string `toml:"token"`
	// PasswordHash is the bcrypt hash for password mode.
	PasswordHash string `toml:"password_hash"`
	// BehindProxy trusts X-Forwarded-* headers.
	BehindProxy bool `toml:"behind_proxy"`
}

// PluginConfig declares one MCP server.
type PluginConfig struct {
	// Name is unique and required.
	Name string `toml:"name"`
	// Type is the transport: stdio (default), http or sse.
	Type string `toml:"type"`
	// Command and Args start a stdio server; Env is added to its
	// environment. Values may hold ${VAR} references, expanded by the MCP
	// layer, not here.
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	// URL and Headers address an http or sse server.
	URL     string            `toml:"url"`
	Headers map[string]string `toml:"headers"`
	// CallTimeoutSeconds is the per-server call cap; 0 uses the global one.
	CallTimeoutSeconds int `toml:"call_timeout_seconds"`
	// ToolTimeoutSeconds caps calls per raw MCP tool name.
	ToolTimeoutSeconds map[string]int `toml:"tool_timeout_seconds"`
	// TrustedReadOnlyTools are raw tool names audited as read-only.
	TrustedReadOnlyTools []string `toml:"trusted_read_only_tools"`
	// DefaultToolsApprovalMode is auto, prompt, writes or approve; empty
	// lets the MCP layer pick by where the server was declared.
	DefaultToolsApprovalMode string `toml:"default_tools_approval_mode"`
	// Tools holds per-tool settings keyed by raw MCP tool name.
	Tools map[string]PluginTool `toml:"tools"`
	// ApprovalsReviewer is user or auto_review; empty means user.
	ApprovalsReviewer string `toml:"approvals_reviewer"`
	// Disabled keeps the entry without starting the server.
	Disabled bool `toml:"disabled"`
	// OAuthClientID names a client pre-registered with the server's
	// authorization server; OAuthClientSecretEnv names the environment
	// variable that holds its secret, so the secret stays out of the
	// config.
	OAuthClientID        string `toml:"oauth_client_id"`
	OAuthClientSecretEnv string `toml:"oauth_client_secret_env"`
	// OAuthGrant is authorization_code (the default: a person approves),
	// client_credentials (a machine client, no person) or
	// cross_app_access (an enterprise identity provider's ID token is
	// exchanged for the server's token, no person).
	OAuthGrant string `toml:"oauth_grant"`
	// OAuthPrivateKeyFile or OAuthPrivateKeyEnv (a variable holding it)
	// give a PEM private key that signs the client's assertion
	// (private_key_jwt) in place of a secret, for client_credentials;
	// OAuthSigningAlgorithm names the algorithm (default: the key's).
	OAuthPrivateKeyFile   string `toml:"oauth_private_key_file"`
	OAuthPrivateKeyEnv    string `toml:"oauth_private_key_env"`
	OAuthSigningAlgorithm string `toml:"oauth_signing_algorithm"`
	// OAuthIDPIssuer, OAuthIDPClientID and OAuthIDPClientSecretEnv are
	// the identity provider of cross_app_access and this client there;
	// OAuthIDTokenEnv names the variable holding the user's ID token.
	OAuthIDPIssuer          string `toml:"oauth_idp_issuer"`
	OAuthIDPClientID        string `toml:"oauth_idp_client_id"`
	OAuthIDPClientSecretEnv string `toml:"oauth_idp_client_secret_env"`
	OAuthIDTokenEnv         string `toml:"oauth_id_token_env"`
	// OAuthClientMetadataURL is an https URL where this client's ID
	// metadata document is published, used as the client id where the
	// authorization server accepts one instead of registration.
	OAuthClientMetadataURL string `toml:"oauth_client_metadata_url"`
	// Sandbox runs a stdio server inside the bash jail with the writer
	// roots. A server the project declares is jailed whatever it says,
	// with the workspace read-only.
	Sandbox bool `toml:"sandbox"`
	// Network lets a project's jailed stdio server reach the network.
	Network bool `toml:"network"`
}

// PluginTool holds per-tool settings of one MCP server.
type PluginTool struct {
	// ApprovalMode is auto, prompt, writes or approve.
	ApprovalMode string `toml:"approval_mode"`
}

// Environment controls the startup environment summary shown to the model.
type Environment struct {
	// Enabled turns the summary on.
	Enabled bool `toml:"enabled"`
	// Tools maps a tool name to a trusted executable path (user-level).
	Tools map[string]string `toml:"tools"`
}

// Remote configures the endpoint a scheduler listens on once workers are
// configured (workers send their answers to it) and the settings every
// link to a worker shares.
type Remote struct {
	// Listen is the host:port to bind; port 0 picks a free one.
	Listen string `toml:"listen"`
	// Advertise is the host:port workers dial back; empty means the bound
	// address, which then must name a specific host.
	Advertise string `toml:"advertise"`
	// TokenFile holds the shared secret (mode 0600 or stricter);
	// REASONIX_WORKER_TOKEN wins over it. Load resolves "~/" and paths
	// relative to the file that set it.
	TokenFile string `toml:"token_file"`
	// TLSCert and TLSKey, both set, turn TLS on for serving and dialling;
	// TLSCA is the PEM bundle trusted for peers' certificates (empty: the
	// system roots). Paths are resolved like TokenFile.
	TLSCert string `toml:"tls_cert"`
	TLSKey  string `toml:"tls_key"`
	TLSCA   string `toml:"tls_ca"`
	// HeartbeatMS is the interval of the link's heartbeat to each worker
	// (100-60000).
	HeartbeatMS int `toml:"heartbeat_ms"`
	// MissLimit is how many heartbeat intervals may pass without an ack
	// before a worker counts as lost (1-10).
	MissLimit int `toml:"miss_limit"`
	// RunLocal false keeps every task off the parent's own process, so
	// all run on workers. Always set after Load.
	RunLocal *bool `toml:"run_local"`
}

// Worker is one [[workers]] entry: a `reasonix worker` host.
type Worker struct {
	// Name is unique and made of a-z, 0-9, _ and -.
	Name string `toml:"name"`
	// Address is the worker's host:port.
	Address string `toml:"address"`
	// Capacity is how many tasks may run there at once (1-64; 4 when
	// unset).
	Capacity int `toml:"capacity"`
	// Workspace names the checkout the worker must serve; empty means the
	// base name of the parent's workspace root.
	Workspace string `toml:"workspace"`
	// Writes are the paths, relative to the workspace root, that tasks
	// placed there may write; empty: readers only; ["."]: everything.
	Writes []string `toml:"writes"`
}
