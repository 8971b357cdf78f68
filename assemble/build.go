package assemble

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"reasonix/actors"
	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/mcpconn"
	"reasonix/core/compact"
	"reasonix/core/config"
	"reasonix/core/mcp"
	"reasonix/core/mcp/oauth"
	"reasonix/core/memory"
	"reasonix/core/permission"
	"reasonix/core/provider"
	"reasonix/core/sandbox"
	"reasonix/core/session"
	"reasonix/core/skill"
	"reasonix/core/tool"
	"reasonix/core/trust"
)

// DefaultToolTimeout caps any one tool call, so a hung tool cannot hold a
// turn forever.
const DefaultToolTimeout = 10 * time.Minute

// mcpStartupTimeout is how long the first turn of a session waits for the
// MCP servers' first connection attempts.
const mcpStartupTimeout = 10 * time.Second

// SetupError is a mistake in the configuration or in the options a
// session is built from (an unknown model, a missing key, a bad rule): no
// retry fixes it, so cmd reports it as a usage error. Its message is its
// cause's.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

func setupErrorf(format string, a ...any) error {
	return &SetupError{Err: fmt.Errorf(format, a...)}
}

// BuildOptions are what one invocation decides on top of the config: the
// flags of a command and the frontend that drives the session.
type BuildOptions struct {
	// Cwd is the working directory, absolute and existing.
	Cwd string
	// Model is the model reference; empty means default_model.
	Model string
	// PermissionMode is ask, auto or yolo; empty means ask.
	PermissionMode string
	// Deny are deny rules added to [permissions] deny for this session.
	Deny []string
	// Interactive says a frontend answers approval requests and MCP
	// servers' questions; without one, what would be asked is allowed and
	// questions get MCPElicitation.
	Interactive bool
	// TrustProjectMCP records launch grants for the project's MCP servers.
	TrustProjectMCP bool
	// MCPElicitation is ElicitDecline (the default) or ElicitDefaults.
	MCPElicitation string
	// MaxSteps bounds model requests per turn; 0 means no bound.
	MaxSteps int
	// PlanMode starts the session in plan mode; PlanApprove approves its
	// first plan without asking (run --plan --approve-plan).
	PlanMode    bool
	PlanApprove bool
	// PlannerModel overrides agent.planner_model: a model reference that,
	// when it resolves to another model than the executor's, makes the
	// session a two-model run.
	PlannerModel string
	// Logger is the session's logger, before it is tagged with the session
	// id; nil discards.
	Logger *slog.Logger
	// Client names this program to MCP servers.
	Client mcp.Implementation
	// Getenv expands ${VAR} in MCP server configs; nil means os.Getenv.
	Getenv func(string) string

	// Profile, when set, makes the session that subagent profile run on
	// its own (`reasonix subagent try|run`): the profile's prompt, model
	// and tools, and no subagents or MCP servers of its own, like a task's
	// subagent. Effort is the call's choice, which configuration for the
	// profile still wins over (see skill.Resolve). ReadOnly keeps only
	// read-only tools.
	Profile  *skill.Profile
	Effort   string
	ReadOnly bool

	// Resume, when set, continues an existing session instead of creating
	// one.
	Resume *Resume
}

// Resume is a session to continue: its id, its transcript reopened for
// appending, and the conversation so far (starting with the system
// message), which seeds the executor. Build takes Transcript over: Built's
// Close closes it. When Build fails the caller still owns it.
type Resume struct {
	ID         string
	Transcript *session.Store
	History    []provider.Message
}

// Build turns the configuration plus o into a session: its provider,
// sandbox, permissions, tools, MCP servers, system prompt, transcript and,
// for a top-level session, the scheduler with its subagent factory. Every
// command that runs a session builds it here, so `run`, `subagent` and
// what comes after them agree on what a session is. Mistakes in the
// configuration or the options come back as *SetupError, with the message
// the user acts on; the checks run in a fixed order so the first mistake
// is the one reported.
func Build(cfg *config.Config, o BuildOptions) (*actors.Built, error) {
	if err := checkResume(o.Resume); err != nil {
		return nil, err
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	prov, res, effort, err := openSessionProvider(cfg, o)
	if err != nil {
		return nil, err
	}
	sb, perms, err := confine(cfg, o.Cwd, o.PermissionMode, o.Deny, o.Interactive)
	if err != nil {
		return nil, err
	}
	reg, err := buildTools(cfg, confinedEnv(cfg, o.Cwd, sb))
	if err != nil {
		return nil, err
	}
	b := &actors.Built{Model: res, Effort: effort}
	base, mcpSpec, warns, err := promptAndMCP(cfg, o, reg)
	if err != nil {
		return nil, err
	}
	b.Warnings = warns
	envp := probeEnvironment(cfg, o.Cwd)
	skills, profiles := skillIndex(cfg, o, logger)
	b.Profiles = profiles
	// A resumed conversation keeps the system prompt it was started with
	// (its prefix stays byte for byte); new subagents get today's files.
	instr := session.LoadInstructions(o.Cwd, cfg.Home)
	if o.Resume == nil {
		b.Warnings = append(b.Warnings, instr.Notices()...)
		b.Instructions = instr.Paths()
	}
	model := res.Provider.Name + "/" + res.Model

	id, transcript, history, err := sessionTranscript(cfg, o, model)
	if err != nil {
		return nil, err
	}
	b.Transcript = transcript
	logger = logger.With("session", id)

	b.Spec = actors.SessionSpec{
		Agent: agent.AgentSpec{
			Session:         id,
			Provider:        prov,
			Model:           res.Model,
			Tools:           reg,
			System:          session.SystemPrompt(base, envp, instr.Block(), skills, memoryIndex(cfg, o, reg)),
			History:         history,
			MaxSteps:        o.MaxSteps,
			GuardSteps:      cfg.Agent.MaxSteps,
			LoopRepeats:     agent.LoopRepeats,
			ToolTimeout:     DefaultToolTimeout,
			ToolTimeouts:    toolTimeouts(cfg.Tools.BashTimeoutSeconds),
			Temperature:     cfg.Agent.Temperature,
			Effort:          effort,
			Transcript:      b.Transcript,
			Logger:          logger,
			Permissions:     perms,
			ApprovalTimeout: time.Duration(cfg.Permissions.ApprovalTimeoutSeconds) * time.Second,
			Compaction:      CompactionPolicy(cfg, res),
			PlanMode:        o.PlanMode,
			PlanApprove:     o.PlanApprove,
			NoWakeup:        !cfg.Agent.BackgroundWakeup,
			MaxTokens:       res.MaxTokens,
			ArchiveDir:      compact.ArchiveDir(cfg.Home),
		},
		Cwd:        o.Cwd,
		Transcript: b.Transcript.Path(),
		MCP:        mcpSpec,
	}
	if o.Profile == nil {
		d := &subagents{cfg: cfg, cwd: o.Cwd, parent: id, model: res, prov: prov, sb: sb, perms: perms,
			env: envp, instr: instr.Block(), logger: logger, sessions: session.ProjectDir(cfg.Home, o.Cwd)}
		if err := addPlannerAndFleet(b, o, d, base); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// checkResume rejects a Resume that cannot be continued: one without its
// id or transcript, or whose history does not start with the system
// message. A nil r (a new session) passes.
func checkResume(r *Resume) error {
	if r != nil && (r.ID == "" || r.Transcript == nil) {
		return errors.New("build session: a resumed session needs its id and transcript")
	}
	if r != nil && len(r.History) > 0 && r.History[0].Role != provider.RoleSystem {
		return errors.New("build session: a resumed history must start with the system message")
	}
	return nil
}

// openSessionProvider resolves the session's model and effort (for a
// profile's own run, through skill.Resolve) and opens its provider. A
// profile's error names the subagent.
func openSessionProvider(cfg *config.Config, o BuildOptions) (provider.Provider, config.Resolved, string, error) {
	modelRef, effort := o.Model, ""
	if o.Profile != nil {
		modelRef, effort = skill.Resolve(*o.Profile, o.Model, o.Effort, cfg.Agent)
	}
	prov, res, err := openProvider(cfg, modelRef)
	if err != nil {
		if o.Profile != nil {
			return nil, res, "", fmt.Errorf("subagent %q: %w", o.Profile.Name, err)
		}
		return nil, res, "", err
	}
	return prov, res, effort, nil
}

// promptAndMCP is the session's base system prompt and its MCP servers.
// A profile's own run gets the profile's prompt and no servers, and reg
// is narrowed to the profile (warns: the tools it names that are not
// enabled); a top-level session gets the configured prompt and servers.
func promptAndMCP(cfg *config.Config, o BuildOptions, reg *tool.Registry) (base string, spec mcpconn.MCPSpec, warns []string, err error) {
	if o.Profile != nil {
		warns = narrowToProfile(reg, *o.Profile, o.ReadOnly)
		return o.Profile.SystemPrompt(), spec, warns, nil
	}
	if spec, err = buildMCP(cfg, o); err != nil {
		return "", spec, nil, err
	}
	if base, err = systemPromptText(cfg, o.Cwd); err != nil {
		return "", spec, nil, err
	}
	return base, spec, nil, nil
}

// sessionTranscript is the session's id, transcript and history so far:
// the Resume's when there is one, else a new transcript of model with no
// history.
func sessionTranscript(cfg *config.Config, o BuildOptions, model string) (string, *session.Store, []provider.Message, error) {
	if o.Resume != nil {
		return o.Resume.ID, o.Resume.Transcript, o.Resume.History, nil
	}
	id, store, err := createTranscript(cfg, o.Cwd, model, o.Profile)
	if err != nil {
		return "", nil, nil, err
	}
	return id, store, nil, nil
}

// addPlannerAndFleet finishes a top-level session: it adds the planner
// when planner_model (or --planner-model) makes the session a two-model
// run, with the executor then in its executor role, and the scheduler
// with d as its subagent factory. d holds the parts of the session the
// planner shares. When the planner cannot be built, the transcript Build
// created is undone.
func addPlannerAndFleet(b *actors.Built, o BuildOptions, d *subagents, base string) error {
	ref := o.PlannerModel
	if ref == "" {
		ref = d.cfg.Agent.PlannerModel
	}
	var err error
	if b.Spec.Planner, b.Planner, err = buildPlanner(d.cfg, o, ref, d.model, d.sb, d.parent, base, d.env, d.instr, d.perms); err != nil {
		return errors.Join(err, closeIfNew(b, o))
	}
	if b.Spec.Planner != nil {
		b.Spec.Agent.Role = event.RoleExecutor
	}
	b.Spec.Fleet = d.fleetSpec()
	return nil
}

// CompactionPolicy is the compaction of a session on model res: its
// context window, the answer's max_tokens as the reserve, and the
// [agent] tiers.
func CompactionPolicy(cfg *config.Config, res config.Resolved) compact.Policy {
	if res.ContextWindow <= 0 {
		return compact.Policy{}
	}
	return compact.Policy{
		Window:       res.ContextWindow,
		Reserve:      res.MaxTokens,
		SnipRatio:    cfg.Agent.ToolResultSnipRatio,
		CompactRatio: cfg.Agent.CompactRatio,
		ForceRatio:   cfg.Agent.CompactForceRatio,
	}.WithDefaults()
}

// narrowToProfile removes from reg what the profile does not allow (and,
// for readOnly, every tool that is not read-only), and returns a warning
// for each tool the profile names that is not enabled at all.
func narrowToProfile(reg *tool.Registry, prof skill.Profile, readOnly bool) []string {
	var warns []string
	for _, name := range prof.Tools {
		if _, ok := reg.Get(name); !ok {
			warns = append(warns, fmt.Sprintf("profile %q lists tool %q, which is not enabled", prof.Name, name))
		}
	}
	for _, name := range reg.Names() {
		t, _ := reg.Get(name)
		if !prof.Allows(name) || (readOnly && !t.ReadOnly()) {
			reg.Remove(name)
		}
	}
	return warns
}

// openProvider resolves ref (empty: default_model) and builds its provider.
// A missing key is a SetupError that says how to fix it.
func openProvider(cfg *config.Config, ref string) (provider.Provider, config.Resolved, error) {
	res, err := cfg.ResolveModel(ref)
	if err != nil {
		return nil, res, &SetupError{Err: fmt.Errorf("model: %w", err)}
	}
	key, err := cfg.APIKey(res.Provider, cfg.Home)
	if err != nil {
		return nil, res, &SetupError{Err: err}
	}
	p, err := provider.New(res.ProviderConfig(key))
	if err != nil {
		return nil, res, &SetupError{Err: err}
	}
	return p, res, nil
}

// WorkspaceRoot is [sandbox] workspace_root, else cwd.
func WorkspaceRoot(cfg *config.Config, cwd string) string {
	root := cfg.Sandbox.WorkspaceRoot
	if root == "" {
		return cwd
	}
	if !filepath.IsAbs(root) {
		root = filepath.Join(cwd, root)
	}
	return filepath.Clean(root)
}

// ToolEnv is the built-in tools' view of a session in cwd, without
// confinement (for listing tools).
func ToolEnv(cfg *config.Config, cwd string) tool.Env {
	return tool.Env{
		Root:        WorkspaceRoot(cfg, cwd),
		BashTimeout: time.Duration(cfg.Tools.BashTimeoutSeconds) * time.Second,
		Home:        cfg.Home,
		Project:     cwd,
		Sessions:    session.ProjectDir(cfg.Home, cwd),
	}
}

// NewSandbox confines file tools to the workspace and allow_write, keeps
// them out of the reasonix home, hides forbid_read and the home's secrets
// from jailed commands, and jails bash when enforced.
func NewSandbox(cfg *config.Config, cwd string) (*sandbox.Sandbox, error) {
	return newSandbox(cfg, cwd, nil)
}

// newSandbox is NewSandbox with the permission policy's path deny rules
// enforced by the guard too (nil: none), so a Read or Edit deny rule holds
// for every path a file tool touches and every entry a walk visits.
func newSandbox(cfg *config.Config, cwd string, policy *permission.Policy) (*sandbox.Sandbox, error) {
	o := sandbox.Options{
		Root:       WorkspaceRoot(cfg, cwd),
		Home:       cfg.Home,
		AllowWrite: cfg.Sandbox.AllowWrite,
		ForbidRead: cfg.Sandbox.ForbidRead,
		Secrets:    homeSecrets(cfg),
		Bash:       cfg.Sandbox.Bash,
		Network:    cfg.Sandbox.Network,
	}
	if policy != nil {
		o.PathRule = func(op, resolved string) (string, bool) {
			if r, ok := policy.PathDenied(op, resolved); ok {
				return "blocked by deny rule " + r.String(), true
			}
			return "", false
		}
	}
	sb, err := sandbox.New(o)
	if err != nil {
		return nil, setupErrorf("[sandbox]: %w", err)
	}
	return sb, nil
}

// homeSecrets are the files a jailed command must not even see: the
// home's API keys, MCP tokens and launch grants, workspace trust, and the
// worker token wherever it lives.
func homeSecrets(cfg *config.Config) []string {
	if cfg.Home == "" {
		return nil
	}
	out := []string{
		config.DotEnvPath(cfg.Home),
		filepath.Join(cfg.Home, oauth.StoreDir),
		filepath.Join(cfg.Home, mcp.GrantsFile),
		filepath.Join(cfg.Home, trust.File),
	}
	if cfg.Remote.TokenFile != "" {
		out = append(out, cfg.Remote.TokenFile)
	}
	return out
}

// confine builds a session's gate and its sandbox together: the sandbox
// enforces the policy's path deny rules, the policy matches paths by where
// they really lead (the sandbox's resolver), and the gate asks a person
// for every write to a trust-bearing file the sandbox names.
func confine(cfg *config.Config, cwd, posture string, deny []string, interactive bool) (*sandbox.Sandbox, agent.Permissions, error) {
	perms, err := buildPermissions(cfg, cwd, posture, deny, interactive)
	if err != nil {
		return nil, agent.Permissions{}, err
	}
	perms.Policy.Resolve = sandbox.Resolve
	perms.Grants.FollowLinks(sandbox.Resolve)
	sb, err := newSandbox(cfg, cwd, perms.Policy)
	if err != nil {
		return nil, agent.Permissions{}, err
	}
	perms.Protected = sb.Protected
	return sb, perms, nil
}

// SkillOptions are the skill roots the config points at.
func SkillOptions(cfg *config.Config, cwd string) skill.Options {
	userHome, _ := os.UserHomeDir()
	return skill.Options{
		Workspace:     cwd,
		Home:          cfg.Home,
		UserHome:      userHome,
		Paths:         cfg.Skills.Paths,
		ExcludedPaths: cfg.Skills.ExcludedPaths,
		Disabled:      cfg.Skills.DisabledSkills,
	}
}

// confinedEnv is ToolEnv with the sandbox as path guard and bash jail.
func confinedEnv(cfg *config.Config, cwd string, sb *sandbox.Sandbox) tool.Env {
	env := ToolEnv(cfg, cwd)
	env.Guard, env.Shell = sb, sb
	return env
}

// buildPermissions turns [permissions] plus the posture and extra deny
// rules into the session's gate. interactive says a frontend answers
// prompts.
func buildPermissions(cfg *config.Config, cwd, posture string, deny []string, interactive bool) (agent.Permissions, error) {
	p, err := permission.ParsePosture(posture)
	if err != nil {
		return agent.Permissions{}, setupErrorf("--permission-mode: %v", err)
	}
	userHome, _ := os.UserHomeDir()
	root := WorkspaceRoot(cfg, cwd)
	rules := append(slices.Clone(cfg.Permissions.Deny), deny...)
	policy, err := permission.NewPolicy(cfg.Permissions.Mode, cfg.Permissions.Allow, cfg.Permissions.Ask, rules, root, userHome)
	if err != nil {
		return agent.Permissions{}, setupErrorf("[permissions]: %w", err)
	}
	return agent.Permissions{
		Policy:      &policy,
		Posture:     p,
		Grants:      permission.NewGrants(root, userHome),
		Interactive: interactive,
		ProjectFile: config.ProjectConfigPath(cwd),
		TrustHome:   cfg.Home,
	}, nil
}

// buildTools assembles the session's registry from the enabled built-ins.
func buildTools(cfg *config.Config, env tool.Env) (*tool.Registry, error) {
	tools, err := tool.NewBuiltins(env, cfg.Tools.Enabled)
	if err != nil {
		return nil, setupErrorf("[tools] enabled: %w", err)
	}
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		return nil, fmt.Errorf("tool registry: %w", err)
	}
	return reg, nil
}

// toolTimeouts gives bash room above its own timeout, so bash reports its
// timeout itself (with the output so far) instead of being cut off.
func toolTimeouts(bashSeconds int) map[string]time.Duration {
	if bashSeconds <= 0 {
		return map[string]time.Duration{"bash": 0}
	}
	return map[string]time.Duration{"bash": time.Duration(bashSeconds)*time.Second + 30*time.Second}
}

// systemPromptText is the configured system prompt text, read from
// system_prompt_file when set.
func systemPromptText(cfg *config.Config, cwd string) (string, error) {
	if cfg.Agent.SystemPromptFile == "" {
		return cfg.Agent.SystemPrompt, nil
	}
	path := cfg.Agent.SystemPromptFile
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", setupErrorf("agent.system_prompt_file: %w", err)
	}
	return string(data), nil
}

// skillIndex is the skills and profiles block of a main session's system
// prompt (skill.Index) and the names of every subagent profile, manual
// ones included, for the frontends' /<profile> task; a profile's own run
// gets neither.
func skillIndex(cfg *config.Config, o BuildOptions, logger *slog.Logger) (string, []string) {
	if o.Profile != nil {
		return "", nil
	}
	st, warns := skill.Load(SkillOptions(cfg, o.Cwd))
	for _, w := range warns {
		logger.Warn("skill skipped", "warning", w.String())
	}
	var names []string
	for _, p := range st.Profiles() {
		names = append(names, p.Name)
	}
	return skill.Index(st), names
}

// memoryIndex is the saved memories' titles for the system prompt, when
// the session has the memory tool to read them.
func memoryIndex(cfg *config.Config, o BuildOptions, reg *tool.Registry) string {
	if _, ok := reg.Get("memory"); !ok || o.Profile != nil {
		return ""
	}
	return memory.NewStore(o.Cwd, cfg.Home).Index()
}

// probeEnvironment describes the machine for the system prompt, or
// returns nil when the config turns that off.
func probeEnvironment(cfg *config.Config, cwd string) *session.Environment {
	if !cfg.Environment.Enabled {
		return nil
	}
	env := session.ProbeEnvironment(cwd, cfg.Environment.Tools)
	return &env
}

// createTranscript opens the transcript of a new top-level session of
// model in cwd's project directory and returns the session id with it. A
// profile's own run (prof set) is marked as a subagent session, which
// --continue never picks: continuing it as an ordinary session would hand
// a read-only profile's conversation the full tool set.
func createTranscript(cfg *config.Config, cwd, model string, prof *skill.Profile) (string, *session.Store, error) {
	id := session.NewID(time.Now())
	h := session.Header{ID: id, Created: time.Now().UTC(), Cwd: cwd, Model: model}
	if prof != nil {
		h.Kind, h.Profile = session.KindSubagent, prof.Name
	}
	store, err := session.Create(session.ProjectDir(cfg.Home, cwd), h)
	if err != nil {
		return "", nil, fmt.Errorf("transcript: %w", err)
	}
	return id, store, nil
}

// closeIfNew undoes the transcript Build created when Build fails after
// it: the file is closed and removed, as no session ever ran in it. A
// resumed transcript stays the caller's.
func closeIfNew(b *actors.Built, o BuildOptions) error {
	if o.Resume != nil || b.Transcript == nil {
		return nil
	}
	err := b.Transcript.Close()
	if rmErr := os.Remove(b.Transcript.Path()); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	return err
}
