package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"reasonix/actors"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/headless"
	"reasonix/core/goal"
	"reasonix/core/session"
	"reasonix/core/text"
)

// Exit codes of a goal run (docs/SPEC.md, Exit codes).
const (
	exitGoalPaused = 3
	exitGoalLimit  = 4
)

// goalExit carries a goal's end to its exit code: 3 blocked or paused for
// the user, 4 a limit or budget reached. Its message is the goal's reason
// and last summary, which the text output shows nowhere else.
type goalExit struct {
	code int
	msg  string
}

// ExitCode is the code the process exits with.
func (e *goalExit) ExitCode() int { return e.code }

func (e *goalExit) Error() string { return e.msg }

// GoalOptions are the goal flags of `reasonix run`.
type GoalOptions struct {
	Objective string
	Research  bool
	Simple    bool
	MaxTurns  int
	MaxTokens int
	MaxTime   time.Duration
	// resume is the goal `reasonix goal resume` continues.
	resume *goal.Record
}

// active says the run is a goal run.
func (o *GoalOptions) active() bool { return o.Objective != "" || o.resume != nil }

func addGoalFlags(cmd *cobra.Command, o *GoalOptions) {
	fl := cmd.Flags()
	fl.StringVar(&o.Objective, "goal", "", "run this objective as a long autonomous goal until it completes, blocks or reaches a limit (see docs/SPEC.md, Goals)")
	fl.BoolVar(&o.Research, "research", false, "with --goal: force the AutoResearch strategy")
	fl.BoolVar(&o.Simple, "simple", false, "with --goal: force the light strategy")
	fl.IntVar(&o.MaxTurns, "max-turns", 0, "with --goal: stop after this many goal turns (0: the safety limit of 1000)")
	fl.IntVar(&o.MaxTokens, "max-tokens", 0, "with --goal: stop once the goal has used this many tokens (0: no budget)")
	fl.DurationVar(&o.MaxTime, "max-time", 0, "with --goal: stop once the goal has run this long, e.g. 30m (0: no budget)")
}

// checkGoalFlags refuses goal flags that do not go together.
func checkGoalFlags(o *GoalOptions) error {
	if o.Research && o.Simple {
		return cmdutil.UsageErrorf("--research and --simple cannot be used together")
	}
	if o.Objective == "" && (o.Research || o.Simple || o.MaxTurns != 0 || o.MaxTokens != 0 || o.MaxTime != 0) {
		return cmdutil.UsageErrorf("--research, --simple, --max-turns, --max-tokens and --max-time go with --goal")
	}
	if o.MaxTurns < 0 || o.MaxTokens < 0 || o.MaxTime < 0 {
		return cmdutil.UsageErrorf("--max-turns, --max-tokens and --max-time cannot be negative")
	}
	return nil
}

// goalDir is where a workspace's goal records are journalled, beside its
// transcripts.
func goalDir(home, cwd string) string {
	return filepath.Join(filepath.Dir(session.ProjectDir(home, cwd)), "goals")
}

// prompt is the first prompt of a goal run.
func (o *GoalOptions) prompt() string {
	if o.resume != nil {
		return "/goal resume"
	}
	p := "/goal "
	switch {
	case o.Research:
		p += "--research "
	case o.Simple:
		p += "--simple "
	}
	return p + o.Objective
}

// spec is the session's goal configuration.
func (o *GoalOptions) spec(home, cwd string) *actors.GoalSpec {
	g := &actors.GoalSpec{Dir: goalDir(home, cwd), Workspace: cwd,
		Limits: goal.Limits{MaxTurns: o.MaxTurns, MaxTokens: o.MaxTokens, MaxTime: o.MaxTime}}
	if r := o.resume; r != nil {
		// Budgets given to resume replace the goal's own, so a goal that
		// reached one can be given more.
		if o.MaxTurns > 0 {
			r.Limits.MaxTurns = o.MaxTurns
		}
		if o.MaxTokens > 0 {
			r.Limits.MaxTokens = o.MaxTokens
		}
		if o.MaxTime > 0 {
			r.Limits.MaxTime = o.MaxTime
		}
		g.Resume, g.Limits = r, r.Limits
	}
	return g
}

// exit maps the run's end to a goal exit code: the goal's own record says
// how it ended when the turn did not succeed.
func (o *GoalOptions) exit(err error, dir, sessionID string) error {
	if !errors.Is(err, cmdutil.ErrSilent) {
		return err
	}
	rec, lerr := goal.Latest(dir, func(r *goal.Record) bool { return r.Session == sessionID })
	if lerr != nil {
		return err
	}
	msg := fmt.Sprintf("goal %s %s", rec.ID, rec.Status)
	if rec.Reason != "" {
		msg += ": " + rec.Reason
	}
	if rec.Summary != "" {
		msg += "; last summary: " + text.OneLine(rec.Summary, 500)
	}
	msg += fmt.Sprintf(" (%d turns, %d tokens; resume with: reasonix goal resume %s)", rec.Turns, rec.Tokens, rec.ID)
	switch rec.Status {
	case goal.StatusBlocked, goal.StatusPaused:
		return &goalExit{code: exitGoalPaused, msg: msg}
	case goal.StatusLimit:
		return &goalExit{code: exitGoalLimit, msg: msg}
	}
	return err
}

// GoalCmdOptions are the inputs of `reasonix goal list|status|resume`.
type GoalCmdOptions struct {
	cmdutil.GlobalOptions
	JSON bool
	ID   string
	// Run holds the flags resume shares with `reasonix run`.
	Run RunOptions
}

// NewCmdGoal builds `reasonix goal`, the commands on a workspace's goals.
func NewCmdGoal(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "goal",
		Short: "List, inspect and resume the workspace's long goals",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageErrorf("unknown command %q for %q; want list, status or resume", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	list := &GoalCmdOptions{}
	listCmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List the workspace's goals, newest first",
		Args:  cmdutil.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return runGoalList(f, list) },
	}
	listCmd.Flags().BoolVar(&list.JSON, "json", false, "print JSON instead of a table")
	cmdutil.AddGlobalFlags(listCmd, &list.GlobalOptions)

	status := &GoalCmdOptions{}
	statusCmd := &cobra.Command{
		Use:   "status [ID] [flags]",
		Short: "Show one goal: state, turns, tokens, last summary (default: the latest)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 1 {
				status.ID = args[0]
			}
			return runGoalStatus(f, status)
		},
	}
	statusCmd.Flags().BoolVar(&status.JSON, "json", false, "print the goal record as JSON")
	cmdutil.AddGlobalFlags(statusCmd, &status.GlobalOptions)

	resume := &GoalCmdOptions{}
	resumeCmd := &cobra.Command{
		Use:   "resume [ID] [flags]",
		Short: "Continue a goal from its last completed step (default: the latest unfinished one)",
		Long: `Continue a goal whose run ended before it did: killed, interrupted, blocked,
paused or out of budget. Its session is resumed from the transcript and the
goal from its record, with its todo list and what it used of its budgets.
Exit codes are those of reasonix run --goal.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 1 {
				resume.ID = args[0]
			}
			if err := headless.CheckHeadlessFlags(resume.Run.OutputFormat, 0, resume.Run.PermissionMode, resume.Run.Deny); err != nil {
				return err
			}
			if g := resume.Run.Goal; g.MaxTurns < 0 || g.MaxTokens < 0 || g.MaxTime < 0 {
				return cmdutil.UsageErrorf("--max-turns, --max-tokens and --max-time cannot be negative")
			}
			return runGoalResume(f, resume)
		},
	}
	rf := resumeCmd.Flags()
	rf.StringVarP(&resume.Run.OutputFormat, "output-format", "o", "text", "text, json or stream-json")
	rf.StringVar(&resume.Run.PermissionMode, "permission-mode", "ask", "ask, auto or yolo (headless runs allow what would be asked; deny rules always apply)")
	rf.StringArrayVar(&resume.Run.Deny, "deny", nil, "an extra deny rule for this run (repeatable)")
	rf.StringVarP(&resume.Run.Model, "model", "m", "", "model: a provider name, a model name or provider/model (default: default_model)")
	rf.IntVar(&resume.Run.Goal.MaxTurns, "max-turns", 0, "a new turn limit for the goal, counting the turns it has run (0: keep its own)")
	rf.IntVar(&resume.Run.Goal.MaxTokens, "max-tokens", 0, "a new token budget for the goal, counting what it has used (0: keep its own)")
	rf.DurationVar(&resume.Run.Goal.MaxTime, "max-time", 0, "a new time budget for the goal, counting the time it has run (0: keep its own)")
	cmdutil.AddGlobalFlags(resumeCmd, &resume.GlobalOptions)
	cmd.AddCommand(listCmd, statusCmd, resumeCmd)
	return cmd
}

// workspaceGoals is the journal directory of the options' workspace.
func workspaceGoals(f *cmdutil.Factory, g *cmdutil.GlobalOptions) (dir, cwd string, err error) {
	cwd, err = g.Workdir()
	if err != nil {
		return "", "", err
	}
	cfg, err := cmdutil.LoadConfig(f, g, cwd)
	if err != nil {
		return "", "", err
	}
	return goalDir(cfg.Home, cwd), cwd, nil
}

// damagedGoalJSON is a damaged record's entry in `goal list --json`,
// beside the records; its fields are part of the CLI contract
// (docs/SPEC.md).
type damagedGoalJSON struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Damage  string `json:"damage"`
	Path    string `json:"path"`
	Session string `json:"session,omitempty"`
}

func runGoalList(f *cmdutil.Factory, o *GoalCmdOptions) error {
	dir, _, err := workspaceGoals(f, &o.GlobalOptions)
	if err != nil {
		return err
	}
	all, damaged, err := goal.Scan(dir)
	if err != nil {
		return err
	}
	if o.JSON {
		out := []any{}
		for _, r := range all {
			out = append(out, r)
		}
		for _, d := range damaged {
			out = append(out, damagedGoalJSON{ID: d.ID, Status: "damaged", Damage: d.Err.Error(), Path: d.Path, Session: d.Session})
		}
		return cmdutil.WriteJSON(f, out)
	}
	if len(all) == 0 && len(damaged) == 0 {
		fmt.Fprintln(f.Stdout, "no goals in this workspace; start one with reasonix run --goal \"…\"")
		return nil
	}
	w := tabwriter.NewWriter(f.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tSTATUS\tTURNS\tTOKENS\tSTARTED\tOBJECTIVE")
	for _, r := range all {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\n", r.ID, r.Status, r.Turns, r.Tokens, r.StartedAt.Local().Format("2006-01-02 15:04"), text.OneLine(r.Objective, 60))
	}
	// A damaged record's cause is its row's last cell, which does not
	// widen the columns of the others.
	for _, d := range damaged {
		fmt.Fprintf(w, "%s\t%s\n", d.ID, damageText(d))
	}
	return w.Flush()
}

// damageText is how a listing shows a damaged goal record.
func damageText(d *goal.DamagedError) string {
	return "damaged: " + text.OneLine(d.Err.Error(), 200)
}

// warnDamaged says on stderr which damaged records a choice of "the
// latest" goal could not consider: one of them may be the goal meant.
func warnDamaged(f *cmdutil.Factory, dir string) {
	_, damaged, err := goal.Scan(dir)
	if err != nil {
		return
	}
	for _, d := range damaged {
		fmt.Fprintf(f.Stderr, "reasonix: warning: goal %s was not considered: %s (%s)\n", d.ID, damageText(d), d.Path)
	}
}

// pick loads the goal id names, or the latest one keep accepts. A damaged
// record named by id is an error that says what of the goal is lost.
func pick(f *cmdutil.Factory, dir, id string, keep func(*goal.Record) bool, what string) (*goal.Record, error) {
	var rec *goal.Record
	var err error
	if id != "" {
		rec, err = goal.Load(dir, id)
	} else {
		warnDamaged(f, dir)
		rec, err = goal.Latest(dir, keep)
	}
	var d *goal.DamagedError
	switch {
	case errors.Is(err, goal.ErrNoGoal):
		if id != "" {
			return nil, cmdutil.UsageErrorf("goal %q: no such goal in this workspace (see reasonix goal list)", id)
		}
		return nil, cmdutil.UsageErrorf("this workspace has no %s goal (see reasonix goal list)", what)
	case errors.As(err, &d):
		msg := fmt.Sprintf("goal %s: its record %s is damaged (%v): its objective, status, budgets used and todo list could not be recovered",
			d.ID, d.Path, d.Err)
		if d.Session != "" {
			msg += fmt.Sprintf("; its session %s is kept: continue it with reasonix run --resume %s", d.Session, d.Session)
		}
		return nil, errors.New(msg)
	}
	return rec, err
}

func runGoalStatus(f *cmdutil.Factory, o *GoalCmdOptions) error {
	dir, _, err := workspaceGoals(f, &o.GlobalOptions)
	if err != nil {
		return err
	}
	rec, err := pick(f, dir, o.ID, nil, "")
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.WriteJSON(f, rec)
	}
	fmt.Fprintf(f.Stdout, "goal:      %s\nstatus:    %s\nstrategy:  %s\nobjective: %s\nturns:     %d", rec.ID, rec.Status, rec.Strategy, text.OneLine(rec.Objective, 200), rec.Turns)
	if rec.Limits.MaxTurns > 0 {
		fmt.Fprintf(f.Stdout, " of %d", rec.Limits.MaxTurns)
	}
	fmt.Fprintf(f.Stdout, "\ntokens:    %d", rec.Tokens)
	if rec.Limits.MaxTokens > 0 {
		fmt.Fprintf(f.Stdout, " of %d", rec.Limits.MaxTokens)
	}
	fmt.Fprintf(f.Stdout, "\nelapsed:   %s", rec.Elapsed.Round(time.Second))
	if rec.Limits.MaxTime > 0 {
		fmt.Fprintf(f.Stdout, " of %s", rec.Limits.MaxTime)
	}
	fmt.Fprintln(f.Stdout)
	done := len(goal.Completions(rec.Todo))
	fmt.Fprintf(f.Stdout, "todo:      %d of %d done\n", done, len(rec.Todo))
	if rec.Reason != "" {
		fmt.Fprintf(f.Stdout, "reason:    %s\n", rec.Reason)
	}
	if rec.Summary != "" {
		fmt.Fprintf(f.Stdout, "summary:   %s\n", text.OneLine(rec.Summary, 500))
	}
	if rec.Research != "" {
		fmt.Fprintf(f.Stdout, "research:  %s\n", rec.Research)
	}
	return nil
}

func runGoalResume(f *cmdutil.Factory, o *GoalCmdOptions) error {
	dir, _, err := workspaceGoals(f, &o.GlobalOptions)
	if err != nil {
		return err
	}
	rec, err := pick(f, dir, o.ID, (*goal.Record).Unfinished, "unfinished")
	if err != nil {
		return err
	}
	if !rec.Unfinished() {
		return cmdutil.UsageErrorf("goal %s is %s; there is nothing to resume", rec.ID, rec.Status)
	}
	opts := o.Run
	opts.GlobalOptions = o.GlobalOptions
	opts.Resume = rec.Session
	opts.InputFormat = "text"
	opts.Goal.resume = rec
	opts.Prompt = opts.Goal.prompt()
	return runRun(f, &opts)
}
