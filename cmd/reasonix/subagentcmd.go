package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"reasonix/assemble"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/headless"
	"reasonix/core/config"
	"reasonix/core/permission"
	"reasonix/core/skill"
	"reasonix/core/text"
)

// The actions of `reasonix subagent`.
const (
	subagentList = "list"
	subagentTry  = "try"
	subagentRun  = "run"
)

// SubagentOptions are the inputs of `reasonix subagent list|try|run`.
type SubagentOptions struct {
	cmdutil.GlobalOptions
	// Action is list, try or run.
	Action string
	// All also lists skills that are not subagent profiles (list).
	All bool
	// Profile and Task are the profile name and the task text (try, run).
	Profile string
	Task    string
	// Model and Effort are this call's choice; configuration for the
	// profile still wins over them (see skill.Resolve).
	Model          string
	Effort         string
	MaxSteps       int
	OutputFormat   string
	PermissionMode string
	Deny           []string
}

// NewCmdSubagent builds `reasonix subagent` and its subcommands. runF
// replaces the action of every subcommand in tests.
func NewCmdSubagent(f *cmdutil.Factory, runF func(*SubagentOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "subagent",
		Short: "List subagent profiles and run one as an isolated child session",
		Long: `Subagent profiles are skills whose SKILL.md frontmatter says "runAs: subagent";
the built-in profiles are explore and review. A profile runs as a child session
with its own system prompt and prints only its final answer. See docs/SPEC.md.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageErrorf("unknown command %q for %q; want list, try or run", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newCmdSubagentList(f, runF), newCmdSubagentTask(f, runF, subagentTry), newCmdSubagentTask(f, runF, subagentRun))
	return cmd
}

func newCmdSubagentList(f *cmdutil.Factory, runF func(*SubagentOptions) error) *cobra.Command {
	opts := &SubagentOptions{Action: subagentList}
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List the subagent profiles: name, source, model, effort, description",
		Long: `List the subagent profiles visible from the working directory, sorted by name.
SOURCE is built-in, project (.reasonix/skills), user (<home>/skills) or path
([skills] paths). MODEL and EFFORT are what a run uses when the call chooses
none; "-" means the default model or the provider's default effort. --all also
lists skills that are not profiles.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runSubagentList(f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "also list skills that are not subagent profiles")
	cmdutil.AddGlobalFlags(cmd, &opts.GlobalOptions)
	return cmd
}

func newCmdSubagentTask(f *cmdutil.Factory, runF func(*SubagentOptions) error, action string) *cobra.Command {
	opts := &SubagentOptions{Action: action}
	cmd := &cobra.Command{
		Use: action + " [flags] <profile> [task]",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.UsageErrorf("missing the profile name; see `reasonix subagent list`")
			}
			if err := headless.CheckHeadlessFlags(opts.OutputFormat, opts.MaxSteps, opts.PermissionMode, opts.Deny); err != nil {
				return err
			}
			task, err := readPrompt(f.Stdin, args[1:])
			if errors.Is(err, cmdutil.ErrNoPrompt) {
				return cmdutil.UsageErrorf("no task: pass it after the profile name or on stdin")
			}
			if err != nil {
				return err
			}
			opts.Profile, opts.Task = args[0], task
			if runF != nil {
				return runF(opts)
			}
			return runSubagentTask(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Model, "model", "m", "", "model for this call (agent.subagent_models still wins): a provider, a model or provider/model")
	fl.StringVar(&opts.Effort, "effort", "", "reasoning effort for this call (agent.subagent_efforts still wins)")
	fl.IntVar(&opts.MaxSteps, "max-steps", 0, "stop after this many model requests (0: no limit)")
	fl.StringVarP(&opts.OutputFormat, "output-format", "o", "text", "text, json or stream-json")
	switch action {
	case subagentTry:
		cmd.Short = "Run a profile with read-only tools and print its final answer"
		cmd.Long = `Run a subagent profile as an isolated child session that may only use
read-only tools (read_file, ls, glob, grep...), and print its final answer.
The task is the arguments after the profile name, or standard input.

Exit codes: 0 ok, 1 the run failed, 2 usage or config error (an unknown
profile lists the available ones), 130 interrupted.`
		// Nothing in a read-only registry asks for approval; deny rules
		// from the config still apply.
		opts.PermissionMode = string(permission.PostureAsk)
	case subagentRun:
		cmd.Short = "Run a profile with the full tool set and print its final answer"
		cmd.Long = `Run a subagent profile as an isolated child session with the full tool set,
under the configured permissions and sandbox (headless: what would be asked
is allowed, deny rules always apply), and print its final answer. The task is
the arguments after the profile name, or standard input.

Exit codes: 0 ok, 1 the run failed, 2 usage or config error (an unknown
profile lists the available ones), 130 interrupted.`
		fl.StringVar(&opts.PermissionMode, "permission-mode", "ask", "ask, auto or yolo (headless runs allow what would be asked; deny rules always apply)")
		fl.StringArrayVar(&opts.Deny, "deny", nil, "an extra deny rule for this run, e.g. 'Bash(git push:*)' (repeatable)")
	}
	cmdutil.AddGlobalFlags(cmd, &opts.GlobalOptions)
	return cmd
}

// loadSkills reads the skill roots the config points at and reports the
// files it skipped on stderr.
func loadSkills(f *cmdutil.Factory, cfg *config.Config, cwd string) *skill.Store {
	store, warns := skill.Load(assemble.SkillOptions(cfg, cwd))
	for _, w := range warns {
		fmt.Fprintln(f.Stderr, "reasonix: warning:", w)
	}
	return store
}

func runSubagentList(f *cmdutil.Factory, opts *SubagentOptions) error {
	cwd, err := opts.Workdir()
	if err != nil {
		return err
	}
	cfg, err := cmdutil.LoadConfig(f, &opts.GlobalOptions, cwd)
	if err != nil {
		return err
	}
	store := loadSkills(f, cfg, cwd)
	tw := tabwriter.NewWriter(f.Stdout, 0, 0, 2, ' ', 0)
	header := "NAME\tSOURCE\tMODEL\tEFFORT\tDESCRIPTION"
	if opts.All {
		header = "NAME\tKIND\tSOURCE\tMODEL\tEFFORT\tDESCRIPTION"
	}
	fmt.Fprintln(tw, header)
	for _, s := range store.Skills() {
		model, effort := s.Model, s.Effort
		kind := "skill"
		if s.IsProfile() {
			kind = "profile"
			model, effort = skill.Resolve(skill.Profile{Skill: s}, "", "", cfg.Agent)
		} else if !opts.All {
			continue
		}
		cols := []string{s.Name, string(s.Source), dash(model), dash(effort), text.OneLine(s.Description, 100)}
		if opts.All {
			cols = slices.Insert(cols, 1, kind)
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runSubagentTask(f *cmdutil.Factory, opts *SubagentOptions) error {
	cwd, err := opts.Workdir()
	if err != nil {
		return err
	}
	cfg, err := cmdutil.LoadConfig(f, &opts.GlobalOptions, cwd)
	if err != nil {
		return err
	}
	prof, err := loadSkills(f, cfg, cwd).Profile(opts.Profile)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	logger, closeLog := cmdutil.OpenLogger(cfg.Home, f.Env)
	defer closeLog()
	b, err := cmdutil.BuildSession(cfg, assemble.BuildOptions{
		Cwd:            cwd,
		Model:          opts.Model,
		Effort:         opts.Effort,
		Profile:        &prof,
		ReadOnly:       opts.Action == subagentTry,
		PermissionMode: opts.PermissionMode,
		Deny:           opts.Deny,
		MaxSteps:       opts.MaxSteps,
		Logger:         logger,
		Client:         cmdutil.MCPClient(f),
		Getenv:         f.Env,
	})
	if err != nil {
		return err
	}
	defer b.Close()
	for _, w := range b.Warnings {
		fmt.Fprintln(f.Stderr, "reasonix: warning:", w)
	}
	b.Spec.Agent.Logger.Info("subagent started", "action", opts.Action, "profile", prof.Name, "source", prof.Source,
		"model", b.Model.Provider.Name+"/"+b.Model.Model, "effort", b.Effort, "tools", b.Spec.Agent.Tools.Names(),
		"transcript", b.Transcript.Path())

	return headless.Run(f, headless.Turn{
		What:       "subagent",
		Built:      b,
		Prompt:     opts.Task,
		Format:     opts.OutputFormat,
		AnswerOnly: true,
	})
}
