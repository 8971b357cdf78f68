package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"reasonix/actors/agent/team"
	"reasonix/assemble"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/fleetcmd"
	"reasonix/cmd/reasonix/internal/headless"
	"reasonix/cmd/reasonix/internal/mcpcmd"
	"reasonix/core/config"
	"reasonix/core/journal"
	"reasonix/core/prompt"
	"reasonix/core/provider"
	"reasonix/core/session"
)

// RunOptions are the inputs of `reasonix run`.
type RunOptions struct {
	cmdutil.GlobalOptions
	Prompt       string
	Model        string
	PlannerModel string
	// Plan starts in plan mode; ApprovePlan approves its plan headless.
	Plan        bool
	ApprovePlan bool
	MaxSteps    int
	// BackgroundWait bounds the wait for background tasks after the
	// last turn (0: until they end).
	BackgroundWait time.Duration
	OutputFormat   string
	// InputFormat is text (the prompt from the arguments or stdin) or
	// stream-json (JSON commands on stdin, see docs/SPEC.md).
	InputFormat    string
	PermissionMode string
	Deny           []string
	// Continue resumes the workspace's most recent session; Resume the
	// session with that id.
	Continue bool
	Resume   string
	// TrustProjectMCP records launch grants for the project's MCP
	// servers; MCPElicitation answers their questions headless.
	TrustProjectMCP bool
	MCPElicitation  string
	// Goal makes the run a long autonomous goal (goalcmd.go).
	Goal GoalOptions
}

// NewCmdRun builds `reasonix run`. runF replaces the action in tests.
func NewCmdRun(f *cmdutil.Factory, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{}
	cmd := &cobra.Command{
		Use:   "run [flags] [prompt]",
		Short: "Run one task headless and print the answer",
		Long: `Run one task without the TUI. The prompt is the arguments joined by spaces,
or standard input when no argument is given (or the argument is "-").

Output formats:
  text         the answer streams to stdout; tool activity goes to stderr
  json         one JSON object with the final answer, status and usage
  stream-json  one JSON event per line as it happens (see docs/SPEC.md)

With --goal the run works on the objective across as many turns as it
takes, until the goal completes, blocks, pauses or reaches a limit.

Exit codes: 0 ok (a goal complete), 1 the run failed, 2 usage or config
error, 3 a goal blocked or paused for the user, 4 a goal reached a limit or
budget, 130 interrupted.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := headless.CheckHeadlessFlags(opts.OutputFormat, opts.MaxSteps, opts.PermissionMode, opts.Deny); err != nil {
				return err
			}
			if opts.MCPElicitation != "" && !slices.Contains(mcpcmd.McpElicitations, opts.MCPElicitation) {
				return cmdutil.UsageErrorf("--mcp-elicitation %q: want one of %s", opts.MCPElicitation, strings.Join(mcpcmd.McpElicitations, ", "))
			}
			if opts.BackgroundWait < 0 {
				return cmdutil.UsageErrorf("--background-wait %s: want a positive duration, or 0 to wait until the tasks end", opts.BackgroundWait)
			}
			if opts.ApprovePlan && !opts.Plan {
				return cmdutil.UsageErrorf("--approve-plan goes with --plan")
			}
			if opts.Continue && opts.Resume != "" {
				return cmdutil.UsageErrorf("--continue and --resume cannot be used together")
			}
			if err := checkGoalFlags(&opts.Goal); err != nil {
				return err
			}
			if !slices.Contains(headless.InputFormats, opts.InputFormat) {
				return cmdutil.UsageErrorf("--input-format %q: want one of %s", opts.InputFormat, strings.Join(headless.InputFormats, ", "))
			}
			if opts.Goal.active() {
				if len(args) > 0 {
					return cmdutil.UsageErrorf("--goal takes the objective; no prompt argument goes with it")
				}
				opts.Prompt = opts.Goal.prompt()
			} else if opts.InputFormat == "stream-json" {
				// Commands come on stdin; an argument, if any, is the
				// first prompt.
				opts.Prompt = strings.TrimSpace(strings.Join(args, " "))
			} else {
				prompt, err := readPrompt(f.Stdin, args)
				if err != nil {
					return err
				}
				opts.Prompt = prompt
			}
			if runF != nil {
				return runF(opts)
			}
			return runRun(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Model, "model", "m", "", "model: a provider name, a model name or provider/model (default: default_model)")
	fl.BoolVar(&opts.Plan, "plan", false, "plan first: research read-only and present a plan; headless, print it and stop without changing anything")
	fl.BoolVar(&opts.ApprovePlan, "approve-plan", false, "with --plan: approve the plan and carry it out")
	fl.StringVar(&opts.PlannerModel, "planner-model", "", "plan with this model and execute with --model (default: agent.planner_model); the same model as the executor's means one model")
	fl.IntVar(&opts.MaxSteps, "max-steps", 0, "stop after this many model requests (0: no limit)")
	fl.StringVarP(&opts.OutputFormat, "output-format", "o", "text", "text, json or stream-json")
	fl.DurationVar(&opts.BackgroundWait, "background-wait", 0, "after the last turn, wait at most this long for background tasks, then cancel the rest (0: until they end); the parent gets one more turn with their results")
	fl.BoolVarP(&opts.Continue, "continue", "c", false, "continue the most recent session of this workspace")
	fl.StringVar(&opts.Resume, "resume", "", "continue the session with this id (see reasonix sessions list)")
	fl.StringVar(&opts.InputFormat, "input-format", "text", "text (the prompt from the arguments or stdin) or stream-json (JSON commands on stdin, one per line)")
	fl.StringVar(&opts.PermissionMode, "permission-mode", "ask", "ask, auto or yolo (headless runs allow what would be asked; deny rules always apply)")
	fl.StringArrayVar(&opts.Deny, "deny", nil, "an extra deny rule for this run, e.g. 'Bash(git push:*)' (repeatable)")
	fl.BoolVar(&opts.TrustProject, "trust-project", false, "honour the project's reasonix.toml, .mcp.json and .reasonix/ for this run, without recording trust (see reasonix trust)")
	fl.BoolVar(&opts.TrustProjectMCP, "trust-project-mcp", false, "approve the project's MCP servers for this workspace (records launch grants)")
	fl.StringVar(&opts.MCPElicitation, "mcp-elicitation", "", "how MCP servers' questions are answered: decline (the default), or defaults (the form's default values)")
	addGoalFlags(cmd, &opts.Goal)
	cmdutil.AddGlobalFlags(cmd, &opts.GlobalOptions)
	return cmd
}

func readPrompt(stdin io.Reader, args []string) (string, error) {
	if len(args) > 0 && !(len(args) == 1 && args[0] == "-") {
		p := strings.TrimSpace(strings.Join(args, " "))
		if p == "" {
			return "", &cmdutil.UsageError{Err: cmdutil.ErrNoPrompt}
		}
		return p, nil
	}
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return "", &cmdutil.UsageError{Err: cmdutil.ErrNoPrompt}
		}
	}
	data, err := io.ReadAll(stdin)
	if err != nil {
		return "", fmt.Errorf("read prompt from stdin: %w", err)
	}
	p := strings.TrimSpace(string(data))
	if p == "" {
		return "", &cmdutil.UsageError{Err: cmdutil.ErrNoPrompt}
	}
	return p, nil
}

func runRun(f *cmdutil.Factory, opts *RunOptions) error {
	cwd, err := opts.Workdir()
	if err != nil {
		return err
	}
	cfg, err := cmdutil.LoadConfig(f, &opts.GlobalOptions, cwd)
	if err != nil {
		return err
	}
	logger, closeLog := cmdutil.OpenLogger(cfg.Home, f.Env)
	defer closeLog()
	resume, err := openResume(f, cfg, cwd, opts)
	if err != nil {
		return err
	}
	b, err := cmdutil.BuildSession(cfg, assemble.BuildOptions{
		Resume:         resume,
		Cwd:            cwd,
		Model:          opts.Model,
		PermissionMode: opts.PermissionMode,
		Deny:           opts.Deny,
		// With commands on stdin, a frontend answers approvals and MCP
		// servers' questions.
		Interactive:     opts.InputFormat == "stream-json",
		TrustProjectMCP: opts.TrustProjectMCP,
		MCPElicitation:  opts.MCPElicitation,
		MaxSteps:        opts.MaxSteps,
		PlannerModel:    opts.PlannerModel,
		PlanMode:        opts.Plan,
		PlanApprove:     opts.ApprovePlan,
		Logger:          logger,
		Client:          cmdutil.MCPClient(f),
		Getenv:          f.Env,
	})
	if err != nil {
		return err
	}
	defer b.Close()
	for _, w := range b.Warnings {
		f.Warn(w)
	}
	b.Spec.Agent.Logger.Info("run started", "model", b.Model.Provider.Name+"/"+b.Model.Model, "cwd", cwd,
		"transcript", b.Transcript.Path())

	if opts.Goal.active() || opts.InputFormat == "stream-json" {
		// A session driven by commands can take goal commands too.
		b.Spec.Goal = opts.Goal.spec(cfg.Home, cwd)
	}
	err = headless.Run(f, headless.Turn{
		What:     "run",
		Built:    b,
		Prompt:   opts.Prompt,
		Format:   opts.OutputFormat,
		Commands: commandStream(f, opts),
		Prep:     prompt.NewExpander(cfg.Home, cwd),
		// A goal's turns are its controller's; it ends when the goal does.
		WaitBackground: !opts.Goal.active(),
		BackgroundWait: opts.BackgroundWait,
	})
	// The session's end checked its transcript; what closing it finds
	// (the final sync) still decides whether the run saved everything.
	if cerr := b.Close(); cerr != nil && err == nil {
		fmt.Fprintf(f.Stderr, "reasonix: incomplete: transcript not saved: %v\n", cerr)
		err = cmdutil.ErrSilent
	}
	if b.Spec.Goal != nil {
		return opts.Goal.exit(err, b.Spec.Goal.Dir, b.Spec.Agent.Session)
	}
	return err
}

// commandStream is stdin when commands come on it (--input-format
// stream-json), else nil.
func commandStream(f *cmdutil.Factory, opts *RunOptions) io.Reader {
	if opts.InputFormat != "stream-json" {
		return nil
	}
	return f.Stdin
}

// openResume finds, loads and reopens the transcript --continue or
// --resume names, or returns nil for a new session. A turn that was cut off
// (the process killed mid-turn) is repaired first: each tool call without a
// result gets an "interrupted" one, recorded in the transcript, so the
// conversation is valid for the next request.
func openResume(f *cmdutil.Factory, cfg *config.Config, cwd string, opts *RunOptions) (*assemble.Resume, error) {
	if !opts.Continue && opts.Resume == "" {
		return nil, nil
	}
	dir := session.ProjectDir(cfg.Home, cwd)
	var path string
	if opts.Continue {
		sum, err := session.Latest(dir)
		if errors.Is(err, session.ErrNoSession) {
			return nil, cmdutil.UsageErrorf("--continue: this workspace has no session yet; start one with reasonix run \"…\"")
		}
		if err != nil {
			return nil, fmt.Errorf("--continue: %w", err)
		}
		path = sum.Path
	} else {
		if opts.Resume != filepath.Base(opts.Resume) || strings.HasPrefix(opts.Resume, ".") {
			return nil, cmdutil.UsageErrorf("--resume %q: not a session id (see reasonix sessions list)", opts.Resume)
		}
		path = filepath.Join(dir, opts.Resume+".jsonl")
		if _, err := os.Stat(path); err != nil {
			return nil, cmdutil.UsageErrorf("--resume %q: no such session in this workspace (see reasonix sessions list)", opts.Resume)
		}
	}
	h, msgs, warn, err := session.Load(path)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if warn != nil {
		f.Warn(warn.String())
	}
	if h.Parent != "" {
		return nil, cmdutil.UsageErrorf("%s is a subagent's transcript; resume its parent %s instead", h.ID, h.Parent)
	}
	if h.Subagent() {
		// It ran under the profile's tools; going on with the full set
		// would widen what its conversation may do.
		return nil, cmdutil.UsageErrorf("%s is a session of reasonix subagent (profile %q) and cannot be continued; run the profile again instead", h.ID, h.Profile)
	}
	// A fleet the session was waiting on when it died is finished first,
	// so its call gets the fleet's result rather than "interrupted".
	if reattachFleets(f, cfg, cwd, h.ID, msgs, opts) {
		if h, msgs, _, err = session.Load(path); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	repaired, added := session.Repair(msgs)
	store, err := session.Reopen(path)
	if err != nil {
		return nil, fmt.Errorf("resume %s: %w", h.ID, err)
	}
	for _, m := range added {
		if err := store.Append(m); err != nil {
			_ = store.Close()
			return nil, fmt.Errorf("resume %s: %w", h.ID, err)
		}
	}
	if len(added) > 0 {
		f.Say(fmt.Sprintf("the last turn of %s was cut off; %d unanswered tool call(s) recorded as interrupted", h.ID, len(added)))
	}
	return &assemble.Resume{ID: h.ID, Transcript: store, History: repaired}, nil
}

// backgroundFleets are the ids of the background fleets msgs started:
// the n-th delegation call made fleet f<n>.
func backgroundFleets(msgs []provider.Message) map[string]bool {
	out := map[string]bool{}
	n := 0
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.Name != team.ToolTask && c.Name != team.ToolFleet && c.Name != team.ToolParallelTasks {
				continue
			}
			n++
			if team.InBackground(c.Arguments) {
				out[fmt.Sprintf("f%d", n)] = true
			}
		}
	}
	return out
}

// fleetOfKey is the fleet a journal key (<session>/<fleet>-<ms>) names; a
// follow-up's (f3.2+1) is the fleet of the agent it continued.
func fleetOfKey(key string) string {
	_, rest, _ := strings.Cut(key, "/")
	if i := strings.LastIndex(rest, "-"); i >= 0 {
		rest = rest[:i]
	}
	if agent, _, ok := strings.Cut(rest, "+"); ok {
		rest, _, _ = strings.Cut(agent, ".")
	}
	return rest
}

// reattachFleets resumes, as `reasonix fleet resume` would, every
// journalled fleet of session parent that has not answered its call, when
// the transcript has a delegation call without a result. It reports
// whether it resumed one (the transcript then holds the answer). A fleet
// that cannot be resumed is a warning: its call is then recorded as
// interrupted, as before.
func reattachFleets(f *cmdutil.Factory, cfg *config.Config, cwd, parent string, msgs []provider.Message, opts *RunOptions) bool {
	open := false
	for _, c := range session.OpenCalls(msgs) {
		open = open || c.Name == team.ToolTask || c.Name == team.ToolFleet || c.Name == team.ToolParallelTasks
	}
	// Background fleets answered their calls at once: their results may
	// still be owed to the conversation, finished fleets' included.
	background := backgroundFleets(msgs)
	if !open && len(background) == 0 {
		return false
	}
	if _, err := os.Stat(journal.Path(cfg.Home)); err != nil {
		return false
	}
	ctx := context.Background()
	j, err := journal.Open(ctx, cfg.Home)
	if err != nil {
		fmt.Fprintln(f.Stderr, "reasonix: warning: fleet journal:", err)
		return false
	}
	defer j.Close()
	fleets, err := j.Fleets(ctx)
	if err != nil {
		fmt.Fprintln(f.Stderr, "reasonix: warning: fleet journal:", err)
		return false
	}
	quiet := *f
	quiet.Stdout = io.Discard // stdout carries the run's answer
	resumed := false
	for _, fl := range fleets {
		if !strings.HasPrefix(fl.Key, parent+"/") || fl.Replied && !background[fleetOfKey(fl.Key)] {
			continue
		}
		fmt.Fprintf(f.Stderr, "reasonix: finishing fleet %s, which the session was waiting on\n", fl.Key)
		fo := &fleetcmd.FleetOptions{GlobalOptions: opts.GlobalOptions, Action: "resume", ID: fl.Key, Timeout: 2 * time.Hour}
		if err := fleetcmd.FleetResume(ctx, &quiet, j, fo, cwd); err != nil {
			fmt.Fprintf(f.Stderr, "reasonix: warning: fleet %s: %v\n", fl.Key, err)
			continue
		}
		resumed = true
	}
	return resumed
}
