package assemble

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"reasonix/actors"
	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/fleet/isolate"
	"reasonix/actors/kernel"
	"reasonix/actors/remote"
	"reasonix/actors/worker"
	"reasonix/core/compact"
	"reasonix/core/config"
	"reasonix/core/permission"
	"reasonix/core/provider"
	"reasonix/core/sandbox"
	"reasonix/core/session"
	"reasonix/core/skill"
	"reasonix/core/tool"
)

// subagents is the subagent factory of a built session: what every
// subagent shares with its parent, and the providers opened for models
// other than the parent's.
type subagents struct {
	cfg    *config.Config
	cwd    string
	parent string // the parent session id
	model  config.Resolved
	prov   provider.Provider
	sb     *sandbox.Sandbox
	perms  agent.Permissions
	env    *session.Environment
	// instr is the workspace's project instructions block
	// (session.LoadInstructions), for every subagent's system prompt.
	instr    string
	logger   *slog.Logger
	sessions string // transcript directory

	skillsOnce sync.Once
	skills     *skill.Store

	mu        sync.Mutex
	providers map[string]provider.Provider // by provider/model
	// grants, on a worker host, keeps each parent session's approvals
	// apart (by parent id): a rule one parent's user granted for the
	// session covers that parent's tasks only. nil in a session's own
	// factory, whose tasks share the parent's grants.
	grants map[string]*permission.Grants
}

// fleetSpec configures the session's scheduler from [agent].
func (d *subagents) fleetSpec() *fleet.FleetSpec {
	a := d.cfg.Agent
	spec := &fleet.FleetSpec{
		MaxRunning:  a.MaxSubagentConcurrency,
		MaxWriters:  a.MaxParallelWriters,
		Root:        WorkspaceRoot(d.cfg, d.cwd),
		TaskTimeout: time.Duration(a.TaskTimeoutSeconds) * time.Second,
		NewAgent:    d.newAgent,
		JournalHome: d.cfg.Home,
		// Worktrees are made in the repository of the session's
		// directory, found on first use.
		Isolator:        newWorktrees(d.cwd, d.parent, d.sb),
		WriterIsolation: a.WriterIsolation,
	}
	d.addWorkers(spec)
	return spec
}

// loadSkills reads the profile store once, on the first task: a session
// that never delegates never touches the skill directories.
func (d *subagents) loadSkills() *skill.Store {
	d.skillsOnce.Do(func() {
		st, warns := skill.Load(SkillOptions(d.cfg, d.cwd))
		for _, w := range warns {
			d.logger.Warn("skill skipped", "warning", w.String())
		}
		d.skills = st
	})
	return d.skills
}

// Isolator is the worktree isolator of parent's tasks in this workspace:
// a worker gives its worktree writers theirs with it.
func (d *subagents) Isolator(parent string) isolate.Isolator {
	return newWorktrees(d.cwd, parent, d.sb)
}

// newAgent builds one task's subagent for the session the factory belongs
// to (see AgentFor).
func (d *subagents) newAgent(spec event.TaskSpec) (agent.AgentSpec, error) {
	return d.AgentFor(agent.TaskOwner{Parent: d.parent, Interactive: d.perms.Interactive}, spec)
}

// AgentFor builds one task's subagent for owner: the profile's prompt, the
// model the precedence rules pick, read-only tools for readers (bash,
// which is not read-only, is never among them) and for writers every tool
// confined to their write_paths, and a transcript of its own. A worker
// host serves many parents with one factory, so the parent is an argument
// rather than the factory's.
func (d *subagents) AgentFor(owner agent.TaskOwner, spec event.TaskSpec) (agent.AgentSpec, error) {
	var prof skill.Profile
	if spec.Profile != "" {
		p, err := d.loadSkills().Profile(spec.Profile)
		if err != nil {
			return agent.AgentSpec{}, err
		}
		prof = p
	}
	modelRef, effort := skill.Resolve(prof, spec.Model, spec.Effort, d.cfg.Agent)
	prov, res, err := d.provider(modelRef)
	if err != nil {
		return agent.AgentSpec{}, err
	}
	env, base := confinedEnv(d.cfg, d.cwd, d.sb), d.sb
	if spec.Workdir != "" {
		// A worktree writer: its tools work in the worktree, which its
		// sandbox takes for the workspace.
		sb, err := d.sb.Rooted(spec.Workdir)
		if err != nil {
			return agent.AgentSpec{}, fmt.Errorf("worktree: %w", err)
		}
		env.Root, env.Guard, env.Shell, base = sb.Root(), sb, sb, sb
	}
	if spec.Writer {
		// One narrowed sandbox guards both the file tools and bash, so the
		// scheduler's promise (overlapping writers never run together)
		// holds for everything the task can touch, shell included.
		sb, err := base.Narrow(spec.WritePaths)
		if err != nil {
			return agent.AgentSpec{}, fmt.Errorf("write_paths: %w", err)
		}
		env.Guard, env.Shell = sb, sb
	}
	tools, err := tool.NewBuiltins(env, d.cfg.Tools.Enabled)
	if err != nil {
		return agent.AgentSpec{}, err
	}
	var keep []tool.Tool
	for _, t := range append(tools, actors.SubagentMCPTools(owner.Parent, spec.Writer)...) {
		if (spec.Writer || t.ReadOnly()) && prof.Allows(t.Name()) {
			keep = append(keep, t)
		}
	}
	reg, err := tool.NewRegistry(keep...)
	if err != nil {
		return agent.AgentSpec{}, err
	}
	store, history, err := d.transcript(owner, spec, res)
	if err != nil {
		return agent.AgentSpec{}, err
	}
	perms := d.perms
	perms.Delegated, perms.Interactive = true, owner.Interactive
	if d.grants != nil {
		perms.Grants = d.grantsFor(owner.Parent)
	}
	switch d.cfg.Agent.SubagentAsk {
	case "allow":
		perms.Interactive = false
	case "deny":
		perms.Interactive, perms.DenyUnasked = false, true
	}
	// "parent": the subagent asks through the parent's frontend, when the
	// parent has one; the scheduler routes the answer back by task.
	if pr, ok := res.Provider.Prices[res.Model]; ok {
		prov = &fleet.PricedProvider{Provider: prov, Cost: event.Price{Input: pr.Input, CacheHit: pr.CacheHit, Output: pr.Output}}
	}
	return agent.AgentSpec{
		Provider:     prov,
		Model:        res.Model,
		Tools:        reg,
		System:       session.SystemPrompt(prof.SystemPrompt(), d.env, d.instr),
		GuardSteps:   d.cfg.Agent.MaxSteps,
		LoopRepeats:  agent.LoopRepeats,
		ToolTimeout:  DefaultToolTimeout,
		ToolTimeouts: toolTimeouts(d.cfg.Tools.BashTimeoutSeconds),
		Temperature:  d.cfg.Agent.Temperature,
		Effort:       effort,
		Transcript:   store,
		History:      history,
		Logger:       d.logger.With("task", spec.ID),
		Permissions:  perms,
		Compaction:   CompactionPolicy(d.cfg, res),
		MaxTokens:    res.MaxTokens,
		ArchiveDir:   compact.ArchiveDir(d.cfg.Home),
	}, nil
}

// transcript opens a task's transcript: a new one of its own, or for a
// follow-up the transcript of the agent it continues, with that
// conversation as its history, so the follow-up's first request extends
// the agent's last one.
func (d *subagents) transcript(owner agent.TaskOwner, spec event.TaskSpec, res config.Resolved) (*session.Store, []provider.Message, error) {
	if spec.Continue != "" {
		_, msgs, _, err := session.Load(spec.Continue)
		if err != nil {
			return nil, nil, fmt.Errorf("continue %s: %w", spec.Of, err)
		}
		if len(msgs) == 0 || msgs[0].Role != provider.RoleSystem {
			return nil, nil, fmt.Errorf("continue %s: its transcript holds no conversation", spec.Of)
		}
		history, added := session.Repair(msgs)
		store, err := session.Reopen(spec.Continue)
		if err != nil {
			return nil, nil, fmt.Errorf("continue %s: %w", spec.Of, err)
		}
		for _, m := range added {
			if err := store.Append(m); err != nil {
				_ = store.Close()
				return nil, nil, fmt.Errorf("continue %s: %w", spec.Of, err)
			}
		}
		return store, history, nil
	}
	id := owner.Parent + "-" + strings.ReplaceAll(spec.ID, ".", "-")
	if owner.Attempt > 1 {
		id += fmt.Sprintf("-a%d", owner.Attempt)
	}
	// A fleet resumed in place runs its interrupted tasks again under the
	// same parent, whose earlier transcripts keep their names.
	id = session.FreeID(d.sessions, id)
	// Open, not Create: the file is made by the store's own goroutine, so
	// starting 64 subagents does not queue 64 file creations here.
	store, err := session.Open(d.sessions, session.Header{
		ID: id, Created: time.Now().UTC(), Cwd: d.cwd, Model: res.Provider.Name + "/" + res.Model,
		Parent: owner.Parent, Task: spec.ID,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("subagent transcript: %w", err)
	}
	return store, nil, nil
}

// provider returns the provider for a model reference, reusing the
// parent's for the parent's model and one instance per other model. A
// task's bad model is the task's failure, not a setup error of the run, so
// the error comes back without its SetupError mark.
func (d *subagents) provider(ref string) (provider.Provider, config.Resolved, error) {
	if ref == "" {
		return d.prov, d.model, nil
	}
	res, err := d.cfg.ResolveModel(ref)
	if err != nil {
		return nil, res, err
	}
	if res.Provider.Name == d.model.Provider.Name && res.Model == d.model.Model {
		return d.prov, d.model, nil
	}
	key := res.Provider.Name + "/" + res.Model
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.providers[key]; ok {
		return p, res, nil
	}
	p, _, err := openProvider(d.cfg, key)
	if err != nil {
		if se, ok := errors.AsType[*SetupError](err); ok {
			err = se.Err
		}
		return nil, res, err
	}
	if d.providers == nil {
		d.providers = map[string]provider.Provider{}
	}
	d.providers[key] = p
	return p, res, nil
}

// newWorkerAgents is the subagent factory of a worker host for the
// checkout at cwd: it opens what Build opens for a session's factory (the
// provider of the configured default model, the sandbox, the permissions,
// the environment probe and the transcript directory) from the worker's
// own config. Tasks of every parent are built with it (agentFor), and
// their transcripts go to the worker's sessions directory for cwd. The
// checkout is the workspace root whatever [sandbox] workspace_root says:
// a task's write paths are relative to the root of the checkout the
// scheduler named, and one worker serves several checkouts.
func newWorkerAgents(cfg *config.Config, cwd string, logger *slog.Logger) (*subagents, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	own := *cfg
	own.Sandbox.WorkspaceRoot = ""
	cfg = &own
	prov, res, err := openProvider(cfg, "")
	if err != nil {
		return nil, err
	}
	sb, perms, err := confine(cfg, cwd, "", nil, false)
	if err != nil {
		return nil, err
	}
	// An "always" from a remote parent's user is kept for that session
	// only: the worker's checkout and its config are its operator's.
	perms.ProjectFile = ""
	return &subagents{cfg: cfg, cwd: cwd, model: res, prov: prov, sb: sb, perms: perms,
		env: probeEnvironment(cfg, cwd), instr: session.LoadInstructions(cwd, cfg.Home).Block(), logger: logger, sessions: session.ProjectDir(cfg.Home, cwd),
		grants: map[string]*permission.Grants{}}, nil
}

// grantsFor is the approvals of one parent session on a worker host.
func (d *subagents) grantsFor(parent string) *permission.Grants {
	d.mu.Lock()
	defer d.mu.Unlock()
	g, ok := d.grants[parent]
	if !ok {
		userHome, _ := os.UserHomeDir()
		g = permission.NewGrants(WorkspaceRoot(d.cfg, d.cwd), userHome)
		g.FollowLinks(sandbox.Resolve)
		d.grants[parent] = g
	}
	return g
}

// addWorkers fills in the worker hosts ([[workers]] and [remote]) the
// session's scheduler may place tasks on. Workers without a token cannot
// be reached safely, so a config that lists workers but gives no token
// runs every task in this process, with a warning: the run must not fail
// for it.
func (d *subagents) addWorkers(spec *fleet.FleetSpec) {
	if len(d.cfg.Workers) == 0 {
		return
	}
	r := d.cfg.Remote
	tok, err := config.WorkerToken(r.TokenFile)
	if err != nil {
		d.logger.Warn("[[workers]] configured but no worker token; every task runs in this process", "err", err)
		spec.Warning = "workers not used, every task runs in this process: " + err.Error()
		return
	}
	spec.Remote = &remote.RemoteOptions{Listen: r.Listen, Advertise: r.Advertise, Token: tok, TLSCert: r.TLSCert, TLSKey: r.TLSKey, TLSCA: r.TLSCA}
	spec.Workspace = filepath.Base(spec.Root)
	spec.Heartbeat = time.Duration(r.HeartbeatMS) * time.Millisecond
	spec.MissLimit = r.MissLimit
	spec.RunLocal = r.RunLocal == nil || *r.RunLocal
	spec.LostPolicy = d.cfg.Agent.ResumeRunning
	spec.Interactive = d.perms.Interactive
	for _, w := range d.cfg.Workers {
		spec.Workers = append(spec.Workers, fleet.WorkerSpec{Name: w.Name, Address: w.Address, Capacity: w.Capacity,
			Workspace: w.Workspace, Writes: w.Writes})
	}
}

// StartWorkerHost starts a worker host whose tasks' agents are built from
// the worker's own config, as this process builds its subagents.
func StartWorkerHost(sys *kernel.System, spec worker.HostSpec) (*worker.Host, error) {
	spec.NewAgents = func(cfg *config.Config, cwd string, log *slog.Logger) (worker.Agents, error) {
		d, err := newWorkerAgents(cfg, cwd, log)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	return worker.StartHost(sys, spec)
}
