package assemble

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"reasonix/actors"
	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/core/compact"
	"reasonix/core/config"
	"reasonix/core/provider"
	"reasonix/core/sandbox"
	"reasonix/core/session"
	"reasonix/core/tool"
)

// PlannerTools are the built-ins a planner may research with: readers
// only, never a writer, bash or a delegation tool.
var PlannerTools = []string{"read_file", "ls", "glob", "grep", "history", "memory"}

// plannerRole is appended to the standing system prompt of the planner.
const plannerRole = `You are the planner of a two-model run. Another model, the executor, carries out what you plan, with tools to change files and run commands; you have read-only tools to research the workspace. For each request, look at what you need, then answer with a concise plan: numbered steps, each naming the files or commands it involves and how to check it worked. Never carry the plan out yourself.`

// DefaultPlanRounds is agent.plan_rounds when unset.
const DefaultPlanRounds = 3

// buildPlanner makes the planner of a two-model run when ref (the
// planner_model) resolves to another model than exec, and nil when it
// does not: one model plans its own work. Its conversation has its own
// transcript, <id>-planner.jsonl beside the session's, resumed with it.
func buildPlanner(cfg *config.Config, o BuildOptions, ref string, exec config.Resolved, sb *sandbox.Sandbox, id, base string, envp *session.Environment, instr string, perms agent.Permissions) (*actors.PlannerSpec, *session.Store, error) {
	if ref == "" {
		return nil, nil, nil
	}
	res, err := cfg.ResolveModel(ref)
	if err != nil {
		return nil, nil, &SetupError{Err: fmt.Errorf("planner model: %w", err)}
	}
	if res.Provider.Name == exec.Provider.Name && res.Model == exec.Model {
		return nil, nil, nil
	}
	prov, res, err := openProvider(cfg, ref)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, n := range PlannerTools {
		if slices.Contains(tool.Builtins(), n) && (len(cfg.Tools.Enabled) == 0 || slices.Contains(cfg.Tools.Enabled, n)) {
			names = append(names, n)
		}
	}
	tools, err := tool.NewBuiltins(confinedEnv(cfg, o.Cwd, sb), names)
	if err != nil {
		return nil, nil, setupErrorf("planner tools: %w", err)
	}
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		return nil, nil, fmt.Errorf("planner tool registry: %w", err)
	}
	store, history, err := plannerTranscript(session.ProjectDir(cfg.Home, o.Cwd), o.Cwd, id, res, o.Resume != nil)
	if err != nil {
		return nil, nil, err
	}
	// The planner only reads; nothing it does needs a person.
	perms.Interactive = false
	rounds := cfg.Agent.PlanRounds
	if rounds <= 0 {
		rounds = DefaultPlanRounds
	}
	if base == "" {
		base = session.DefaultSystemPrompt
	}
	return &actors.PlannerSpec{Rounds: rounds, Agent: agent.AgentSpec{
		Session:     id,
		Role:        event.RolePlanner,
		Provider:    prov,
		Model:       res.Model,
		Tools:       reg,
		System:      session.SystemPrompt(base+"\n\n"+plannerRole, envp, instr),
		History:     history,
		MaxSteps:    o.MaxSteps,
		GuardSteps:  cfg.Agent.MaxSteps,
		LoopRepeats: agent.LoopRepeats,
		ToolTimeout: DefaultToolTimeout,
		Temperature: cfg.Agent.Temperature,
		Transcript:  store,
		Logger:      o.Logger,
		Permissions: perms,
		Compaction:  CompactionPolicy(cfg, res),
		MaxTokens:   res.MaxTokens,
		ArchiveDir:  compact.ArchiveDir(cfg.Home),
	}}, store, nil
}

// plannerTranscript opens the planner's transcript: on a resume the one
// beside the session's, repaired and reopened, with its conversation.
func plannerTranscript(dir, cwd, id string, res config.Resolved, resume bool) (*session.Store, []provider.Message, error) {
	path := filepath.Join(dir, id+"-planner.jsonl")
	if resume {
		_, msgs, _, err := session.Load(path)
		switch {
		case err == nil:
			msgs, added := session.Repair(msgs)
			store, err := session.Reopen(path)
			if err != nil {
				return nil, nil, fmt.Errorf("planner transcript: %w", err)
			}
			for _, m := range added {
				if err := store.Append(m); err != nil {
					return nil, nil, errors.Join(fmt.Errorf("planner transcript: %w", err), store.Close())
				}
			}
			return store, msgs, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, nil, fmt.Errorf("planner transcript: %w", err)
		}
	}
	store, err := session.Open(dir, session.Header{ID: id + "-planner", Created: time.Now().UTC(), Model: res.Provider.Name + "/" + res.Model,
		Parent: id, Task: event.RolePlanner, Cwd: cwd})
	if err != nil {
		return nil, nil, fmt.Errorf("planner transcript: %w", err)
	}
	return store, nil, nil
}
