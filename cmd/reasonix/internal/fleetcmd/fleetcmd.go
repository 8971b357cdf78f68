package fleetcmd

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/actors/fleet/resume"
	"reasonix/actors/kernel"
	"reasonix/assemble"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/journal"
	"reasonix/core/provider"
	"reasonix/core/session"
)

// FleetOptions are the inputs of `reasonix fleet list|status|resume`.
type FleetOptions struct {
	cmdutil.GlobalOptions
	// Action is list, status or resume; ID the fleet for status and resume.
	Action string
	ID     string
	JSON   bool
	// Running is what resume does with tasks that were running when the
	// process died: rerun or fail. Empty means rerun.
	Running string
	// Timeout bounds a resume.
	Timeout time.Duration
}

// NewCmdFleet builds `reasonix fleet`, the commands on journalled fleets.
// runF replaces the actions in tests.
func NewCmdFleet(f *cmdutil.Factory, runF func(*FleetOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "List, inspect and resume journalled fleets of subagents",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageErrorf("unknown command %q for %q; want list, status or resume", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	run := func(opts *FleetOptions) error {
		if runF != nil {
			return runF(opts)
		}
		return runFleet(f, opts)
	}
	list := &FleetOptions{Action: "list"}
	listCmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List journalled fleets, newest first",
		Long: `List the fleets the scheduler journalled under the reasonix home, newest
first: id, start time, tasks finished of all, and whether the fleet's result
was delivered ("done") or the process stopped before ("interrupted", which
reasonix fleet resume finishes). A fleet whose journal records are damaged
is listed as "damaged: <cause>", with what that loses; reasonix fleet status
shows every such record.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return run(list) },
	}
	listCmd.Flags().BoolVar(&list.JSON, "json", false, "print JSON instead of a table")
	cmdutil.AddGlobalFlags(listCmd, &list.GlobalOptions)

	status := &FleetOptions{Action: "status"}
	statusCmd := &cobra.Command{
		Use:   "status ID",
		Short: "Show a fleet's tasks and its provider's concurrency window",
		Long: `Show each task of a journalled fleet (finished with its status, running or
queued) and, as last recorded when a task started, its provider endpoint's
concurrency window, requests in flight and requests waiting.`,
		Args: exactlyOneArg,
		RunE: func(cmd *cobra.Command, args []string) error { status.ID = args[0]; return run(status) },
	}
	statusCmd.Flags().BoolVar(&status.JSON, "json", false, "print JSON instead of text")
	cmdutil.AddGlobalFlags(statusCmd, &status.GlobalOptions)

	resume := &FleetOptions{Action: "resume"}
	resumeCmd := &cobra.Command{
		Use:   "resume ID",
		Short: "Finish a fleet whose process stopped, without re-running finished tasks",
		Long: `Re-attach a journalled fleet: finished tasks keep their results and are not
run again, tasks that were running are run again or failed, as --running
or agent.resume_running says ("rerun", the default, or "fail"), and queued
tasks start. The complete
result, every task in input order, is printed, and when the parent session's
call that started the fleet is still unanswered it becomes that call's
result, so reasonix run --continue carries on from it. The fleet runs
inside its parent session, which must be in this workspace (the one the
fleet ran in) and not running; no new session is created.`,
		Args: exactlyOneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			resume.ID = args[0]
			if resume.Running != "" && resume.Running != "rerun" && resume.Running != "fail" {
				return cmdutil.UsageErrorf("--running %q: want rerun or fail", resume.Running)
			}
			return run(resume)
		},
	}
	resumeCmd.Flags().StringVar(&resume.Running, "running", "", "what to do with tasks that were running: rerun or fail (default: agent.resume_running)")
	resumeCmd.Flags().DurationVar(&resume.Timeout, "timeout", 2*time.Hour, "give up on the resumed fleet after this long")
	cmdutil.AddGlobalFlags(resumeCmd, &resume.GlobalOptions)

	cmd.AddCommand(listCmd, statusCmd, resumeCmd)
	return cmd
}

func exactlyOneArg(cmd *cobra.Command, args []string) error {
	if err := cobra.ExactArgs(1)(cmd, args); err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	return nil
}

func runFleet(f *cmdutil.Factory, opts *FleetOptions) error {
	cwd, err := opts.Workdir()
	if err != nil {
		return err
	}
	cfg, err := cmdutil.LoadConfig(f, &opts.GlobalOptions, cwd)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if _, err := os.Stat(journal.Path(cfg.Home)); errors.Is(err, os.ErrNotExist) && opts.Action == "list" {
		_, err := fmt.Fprintln(f.Stdout, "No fleets journalled yet; a fleet, task or parallel_tasks call starts one.")
		return err
	}
	j, err := journal.Open(ctx, cfg.Home)
	if err != nil {
		return err
	}
	defer j.Close()
	switch opts.Action {
	case "list":
		return fleetList(ctx, f, j, opts)
	case "status":
		return fleetStatus(ctx, f, j, opts)
	}
	return FleetResume(ctx, f, j, opts, cwd)
}

// FleetJSON is one entry of `fleet list --json`; its fields are part of
// the CLI contract (docs/SPEC.md).
type FleetJSON struct {
	ID       string `json:"id"`
	Started  string `json:"started"`
	Updated  string `json:"updated"`
	Tasks    int    `json:"tasks"`
	Finished int    `json:"finished"`
	State    string `json:"state"`
	// Damage lists what of a damaged fleet could not be recovered.
	Damage []string `json:"damage,omitempty"`
}

func fleetList(ctx context.Context, f *cmdutil.Factory, j *journal.Journal, opts *FleetOptions) error {
	fleets, err := j.Fleets(ctx)
	if err != nil {
		return err
	}
	var out []FleetJSON
	for _, fl := range fleets {
		e := FleetJSON{ID: fl.Key, Started: fl.Created.Format(time.RFC3339), Updated: fl.Updated.Format(time.RFC3339), State: "interrupted"}
		if fl.Replied {
			e.State = "done"
		}
		// One fleet's damage must not hide the others.
		recs, err := j.Records(ctx, fl.Key)
		c := &fleetCheck{Err: err}
		if err == nil {
			c = CheckFleet(recs)
		}
		if r := c.Replayed; r != nil {
			e.Tasks, e.Finished = len(r.Order), len(r.Results)
		}
		if c.Damaged() {
			e.State = c.Summary()
			e.Damage = c.lines()
		}
		out = append(out, e)
	}
	if opts.JSON {
		if out == nil {
			out = []FleetJSON{}
		}
		for i := range out {
			if out[i].Damage != nil {
				out[i].State = "damaged"
			}
		}
		return writeFleetJSON(f, out)
	}
	if len(out) == 0 {
		_, err := fmt.Fprintln(f.Stdout, "No fleets journalled yet.")
		return err
	}
	tw := tabwriter.NewWriter(f.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tFINISHED\tSTATE")
	for _, e := range out {
		started, _ := time.Parse(time.RFC3339, e.Started)
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\n", e.ID, started.Local().Format("2006-01-02 15:04"), e.Finished, e.Tasks, e.State)
	}
	return tw.Flush()
}

func writeFleetJSON(f *cmdutil.Factory, v any) error {
	enc := json.NewEncoder(f.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// loadFleet reads, checks and replays one fleet; an unknown id is a
// usage error, a fleet that cannot be rebuilt an error that says why.
func loadFleet(ctx context.Context, j *journal.Journal, id string) (*fleetCheck, error) {
	recs, err := j.Records(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, cmdutil.UsageErrorf("no fleet %q (see reasonix fleet list)", id)
	}
	c := CheckFleet(recs)
	if c.Err != nil {
		return nil, fmt.Errorf("fleet %s is damaged and cannot be rebuilt: %w", id, c.Err)
	}
	return c, nil
}

// taskStatusJSON is one task of `fleet status --json`.
type taskStatusJSON struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Status string `json:"status,omitempty"`
	Prompt string `json:"prompt"`
	Turns  int    `json:"turns,omitempty"`
	Error  string `json:"error,omitempty"`
	// Worker and Attempt are where the task's last attempt was placed
	// (empty: the scheduler's own process) and its number from 2 on.
	Worker  string `json:"worker,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
}

// FleetStatusJSON is `fleet status --json`; its fields are part of the
// CLI contract (docs/SPEC.md).
type FleetStatusJSON struct {
	ID       string                 `json:"id"`
	State    string                 `json:"state"`
	Tasks    []taskStatusJSON       `json:"tasks"`
	Endpoint *provider.LimiterStats `json:"endpoint,omitempty"`
	// Damage lists what of the fleet could not be recovered.
	Damage []string `json:"damage,omitempty"`
}

func fleetStatus(ctx context.Context, f *cmdutil.Factory, j *journal.Journal, opts *FleetOptions) error {
	c, err := loadFleet(ctx, j, opts.ID)
	if err != nil {
		return err
	}
	recs, r := c.Records, c.Replayed
	out := FleetStatusJSON{ID: opts.ID, State: "interrupted", Damage: c.Lost}
	if r.Replied {
		out.State = "done"
	}
	type placed struct {
		worker  string
		attempt int
	}
	last := map[string]placed{}
	remote := false
	for _, rec := range recs {
		if rec.Kind != journal.KindStart || len(rec.Data) == 0 {
			continue
		}
		var start struct {
			Endpoint *provider.LimiterStats `json:"endpoint"`
			Worker   string                 `json:"worker"`
			Attempt  int                    `json:"attempt"`
		}
		if json.Unmarshal(rec.Data, &start) != nil {
			continue
		}
		if start.Endpoint != nil {
			out.Endpoint = start.Endpoint
		}
		last[rec.Task] = placed{start.Worker, start.Attempt}
		remote = remote || start.Worker != ""
	}
	for i, id := range r.Order {
		ts := taskStatusJSON{ID: id, State: "queued", Worker: last[id].worker, Attempt: last[id].attempt}
		if i < len(r.Submission.Specs) {
			var spec event.TaskSpec
			if json.Unmarshal(r.Submission.Specs[i], &spec) == nil {
				ts.Prompt = oneLine(spec.Prompt, 80)
			}
		}
		if raw, ok := r.Results[id]; ok {
			var res event.TaskResult
			_ = json.Unmarshal(raw, &res)
			ts.State, ts.Status, ts.Turns, ts.Error = "finished", res.Status, res.Turns, res.Error
		} else if r.Running[id] {
			ts.State = "running"
		}
		out.Tasks = append(out.Tasks, ts)
	}
	if opts.JSON {
		return writeFleetJSON(f, out)
	}
	fmt.Fprintf(f.Stdout, "Fleet %s: %s, %d of %d tasks finished\n", out.ID, out.State, len(r.Results), len(r.Order))
	for _, l := range out.Damage {
		fmt.Fprintf(f.Stdout, "damaged: %s\n", l)
	}
	if e := out.Endpoint; e != nil {
		fmt.Fprintf(f.Stdout, "Endpoint %s: window %d of %d, %d in flight, %d waiting, %d throttled (as of the last task start)\n",
			e.Endpoint, e.Window, e.Max, e.InFlight, e.Waiting, e.Throttled)
	}
	tw := tabwriter.NewWriter(f.Stdout, 0, 0, 2, ' ', 0)
	if !remote {
		fmt.Fprintln(tw, "TASK\tSTATE\tSTATUS\tTURNS\tPROMPT")
		for _, ts := range out.Tasks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", ts.ID, ts.State, ts.Status, ts.Turns, ts.Prompt)
		}
		return tw.Flush()
	}
	// Some tasks ran on worker hosts: say where each last ran ("-" for
	// this process) and which attempt that was.
	fmt.Fprintln(tw, "TASK\tSTATE\tSTATUS\tTURNS\tWORKER\tATTEMPT\tPROMPT")
	for _, ts := range out.Tasks {
		worker := cmp.Or(ts.Worker, "-")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\t%s\n", ts.ID, ts.State, ts.Status, ts.Turns, worker, max(ts.Attempt, 1), ts.Prompt)
	}
	return tw.Flush()
}

// oneLine keeps the first line of s, at most n runes.
func oneLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// FleetResume finishes a journalled fleet inside the session it belongs
// to: the parent's transcript is reopened, the fleet runs under the
// parent's id (its tasks' transcripts are the parent's subagents') and the
// result answers the parent's waiting call, so the parent goes on in place
// and no other session is created. The parent must be in this workspace:
// that is where its tasks ran and must run again.
func FleetResume(ctx context.Context, f *cmdutil.Factory, j *journal.Journal, opts *FleetOptions, cwd string) error {
	fc, err := loadFleet(ctx, j, opts.ID)
	if err != nil {
		return err
	}
	fc.report(f, opts.ID)
	recs := fc.Records
	cfg, err := cmdutil.LoadConfig(f, &opts.GlobalOptions, cwd)
	if err != nil {
		return err
	}
	parent, err := openFleetParent(f, cfg.Home, cwd, opts.ID)
	if err != nil {
		return err
	}
	// Until a built session takes the parent's store over, it is closed
	// here, after the answer is appended.
	owned := true
	defer func() {
		if owned {
			_ = parent.store.Close()
		}
	}()
	running := opts.Running
	if running == "" {
		running = cfg.Agent.ResumeRunning
	}
	rf, err := resume.Rebuild(ctx, j, recs, running)
	if err != nil {
		return err
	}
	for _, note := range assemble.SettleWorktrees(ctx, cfg, cwd, j, rf) {
		fmt.Fprintf(f.Stderr, "reasonix: fleet %s: %s\n", opts.ID, note)
	}
	logger, closeLog := cmdutil.OpenLogger(cfg.Home, f.Env)
	defer closeLog()
	var res *fleetmsg.FleetResult
	if len(rf.Submit.Done) == len(rf.Submit.Tasks) {
		res = &fleetmsg.FleetResult{FleetID: rf.Submit.FleetID}
		for _, t := range rf.Submit.Tasks {
			res.Results = append(res.Results, rf.Submit.Done[t.ID])
		}
	} else {
		// buildSession closes the store when it fails, Built.Close when
		// it does not.
		owned = false
		b, err := cmdutil.BuildSession(cfg, assemble.BuildOptions{Cwd: cwd, Logger: logger, Client: cmdutil.MCPClient(f), Getenv: f.Env,
			Resume: &assemble.Resume{ID: parent.id, Transcript: parent.store}})
		if err != nil {
			return err
		}
		defer b.Close()
		if b.Spec.Fleet == nil {
			return cmdutil.UsageErrorf("this configuration runs no subagents; the fleet cannot be resumed with it")
		}
		spec := *b.Spec.Fleet
		spec.Journal = j
		sys := kernel.NewSystem(logger)
		res, err = fleet.RunFleet(sys, spec, b.Spec.Agent.Session, event.NewBus(), rf.Submit, opts.Timeout)
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = sys.Shutdown(sctx)
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(f.Stderr, "reasonix: fleet %s: %d kept from before, %d run again, %d failed as interrupted\n",
		opts.ID, len(rf.Submit.Done)-len(rf.Failed), len(rf.Rerun), len(rf.Failed))
	if err := parent.answer(f, rf.Submit.Tasks, res); err != nil {
		fmt.Fprintln(f.Stderr, "reasonix: warning:", err)
	}
	if err := parent.deliverMessages(f, rf.Replayed.Messages); err != nil {
		fmt.Fprintln(f.Stderr, "reasonix: warning:", err)
	}
	text, _ := fleet.FormatFleetResult(team.ToolFleet, res)
	_, err = fmt.Fprintln(f.Stdout, text)
	return err
}

// fleetParent is the session a journalled fleet belongs to, reopened for
// `fleet resume`: its id, its transcript held for appending, and its
// conversation as it was when the fleet's process stopped.
type fleetParent struct {
	id    string
	store *session.Store
	msgs  []provider.Message
}

// openFleetParent reopens the session of fleet key (<session>/<fleet>) in
// cwd's workspace. A parent that is not there is a usage error: the
// fleet's tasks belong to the workspace it ran in. A parent another
// process still writes is refused, as its fleet is not interrupted.
func openFleetParent(f *cmdutil.Factory, home, cwd, key string) (*fleetParent, error) {
	id, _, _ := strings.Cut(key, "/")
	path := filepath.Join(session.ProjectDir(home, cwd), id+".jsonl")
	if id == "" || id != filepath.Base(id) || !cmdutil.Exists(path) {
		return nil, cmdutil.UsageErrorf("fleet %s: its session %q is not in this workspace (%s); run reasonix fleet resume where the fleet ran, or pass --cwd", key, id, cwd)
	}
	_, msgs, warn, err := session.Load(path)
	if err != nil {
		return nil, fmt.Errorf("parent session %s: %w", id, err)
	}
	if warn != nil {
		fmt.Fprintln(f.Stderr, "reasonix: warning:", warn)
	}
	store, err := session.Reopen(path)
	if errors.Is(err, session.ErrBusy) {
		return nil, fmt.Errorf("parent session %s is still running, so fleet %s is not interrupted: %w", id, key, err)
	}
	if err != nil {
		return nil, fmt.Errorf("parent session %s: %w", id, err)
	}
	return &fleetParent{id: id, store: store, msgs: msgs}, nil
}

// flush waits until what was appended to the parent's transcript is on
// disk: the command says so only then, and a run --continue in this
// process loads the transcript after it.
func (p *fleetParent) flush() error {
	done := make(chan error, 1)
	p.store.Barrier(func(err error) { done <- err })
	if err := <-done; err != nil {
		return fmt.Errorf("parent session %s: %w", p.id, err)
	}
	return nil
}

// answer records the resumed fleet's result as the tool result of the
// parent's call that submitted it, when that call is still unanswered, so
// the parent can be continued with it.
func (p *fleetParent) answer(f *cmdutil.Factory, tasks []event.TaskSpec, res *fleetmsg.FleetResult) error {
	for _, call := range session.OpenCalls(p.msgs) {
		if !fleet.CallOfFleet(call.Name, call.Arguments, tasks) {
			continue
		}
		text, _ := fleet.FormatFleetResult(call.Name, res)
		if err := p.store.Append(provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: text}); err != nil {
			return fmt.Errorf("parent session %s: %w", p.id, err)
		}
		if err := p.flush(); err != nil {
			return err
		}
		fmt.Fprintf(f.Stderr, "reasonix: the result answers the %s call of session %s; continue it with reasonix run --continue (or --resume %s)\n", call.Name, p.id, p.id)
		return nil
	}
	return p.deliverBackground(f, tasks, res)
}

// deliverMessages gives the parent the messages the fleet's tasks sent
// it (journalled as they were sent) that its conversation does not hold:
// each as the user message a live session appends. A message held n
// times in the journal and m times in the conversation is added n-m
// times, so what the parent read before the crash is not read twice.
func (p *fleetParent) deliverMessages(f *cmdutil.Factory, recs []json.RawMessage) error {
	held := map[string]int{}
	for _, m := range p.msgs {
		if m.Role == provider.RoleUser {
			held[m.Content]++
		}
	}
	added := 0
	for _, raw := range recs {
		var m fleetmsg.MessageToParent
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("parent session %s: a journalled message: %w", p.id, err)
		}
		text := team.MessageText(m.From, m.Name, m.Text)
		if held[text] > 0 {
			held[text]--
			continue
		}
		if err := p.store.Append(provider.Message{Role: provider.RoleUser, Content: text}); err != nil {
			return fmt.Errorf("parent session %s: %w", p.id, err)
		}
		p.msgs = append(p.msgs, provider.Message{Role: provider.RoleUser, Content: text})
		added++
	}
	if added == 0 {
		return nil
	}
	if err := p.flush(); err != nil {
		return err
	}
	fmt.Fprintf(f.Stderr, "reasonix: %d message(s) to session %s that it had not read are added to it\n", added, p.id)
	return nil
}

// deliverBackground gives the parent the results of a background fleet
// (its call was answered with the ids at once), or of a follow-up a
// message started, that its conversation has not read: each as the user
// message a live session appends, once. A result is labelled with its
// agent, so the follow-up <id>+<n> is its agent's run n+1: it is added
// when the conversation holds fewer than n+1 results of that agent
// (appended, or taken by task_wait).
func (p *fleetParent) deliverBackground(f *cmdutil.Factory, tasks []event.TaskSpec, res *fleetmsg.FleetResult) error {
	background := false
	specs := map[string]event.TaskSpec{}
	for _, t := range tasks {
		specs[t.ID] = t
		background = background || t.Of != ""
	}
	for _, m := range p.msgs {
		for _, c := range m.ToolCalls {
			background = background || team.InBackground(c.Arguments) && fleet.CallOfFleet(c.Name, c.Arguments, tasks)
		}
	}
	if !background {
		return nil
	}
	added := 0
	for _, r := range res.Results {
		spec := specs[r.TaskID]
		agent, run := r.TaskID, 1
		if spec.Of != "" {
			agent = spec.Of
			if _, err := fmt.Sscanf(strings.TrimPrefix(r.TaskID, spec.Of+"+"), "%d", &run); err == nil {
				run++
			}
		}
		head, held := "\n[Background task "+team.Label(agent, spec.Name)+" ", 0
		for _, m := range p.msgs {
			if m.Role == provider.RoleUser || m.Role == provider.RoleTool {
				held += strings.Count("\n"+m.Content, head)
			}
		}
		if held >= run {
			continue
		}
		msg := provider.Message{Role: provider.RoleUser, Content: team.ResultText(agent, spec.Name, r)}
		if err := p.store.Append(msg); err != nil {
			return fmt.Errorf("parent session %s: %w", p.id, err)
		}
		p.msgs = append(p.msgs, msg)
		added++
	}
	if added == 0 {
		return nil
	}
	if err := p.flush(); err != nil {
		return err
	}
	fmt.Fprintf(f.Stderr, "reasonix: %d background result(s) session %s had not read are added to it; continue it with reasonix run --continue (or --resume %s)\n", added, p.id, p.id)
	return nil
}
