package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"reasonix/actors/event"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/core/text"
	"reasonix/core/tool"
)

// Delegation tools hand work to subagents through the session's scheduler.
// They are tools to the model, but the executor runs them itself: it sends
// SubmitFleet to the scheduler and records the FleetResult as the call's
// result (or, for a background call, the ids at once), so no goroutine
// waits on a fleet.
const (
	ToolTask          = "task"
	ToolFleet         = "fleet"
	ToolParallelTasks = "parallel_tasks"
)

// MaxFleetTasks bounds one fleet call.
const MaxFleetTasks = 64

// maxTaskText caps one task's answer in the parent's tool result, so a
// 64-task fleet cannot flood the parent's context.
const maxTaskText = 8 << 10

// delegateTool is the schema side of a delegation tool.
type delegateTool struct {
	name, desc string
	schema     string
	readOnly   bool
}

func (d *delegateTool) Name() string            { return d.name }
func (d *delegateTool) Description() string     { return d.desc }
func (d *delegateTool) Schema() json.RawMessage { return json.RawMessage(d.schema) }
func (d *delegateTool) ReadOnly() bool          { return d.readOnly }

// Execute is never called: the executor dispatches delegation calls to the
// scheduler. A registry used without a scheduler gets a clear error.
func (d *delegateTool) Execute(context.Context, json.RawMessage) (string, error) {
	return "", errors.New("subagents are not available in this session")
}

// IsDelegation reports whether t is one of the delegation tools.
func IsDelegation(t tool.Tool) bool {
	_, ok := t.(*delegateTool)
	return ok
}

// The profile parameter deliberately lists no names: profiles are resolved
// at run time, and naming them in the schema would change the cached
// prefix whenever a profile is added.
const taskProps = `"prompt":{"type":"string","description":"Complete instructions for the subagent. It starts with no context: include what it needs to know and what to return."},` +
	`"profile":{"type":"string","description":"Optional name of a subagent profile to run the task with."},` +
	`"write_paths":{"type":"array","items":{"type":"string"},"description":"Files or directories the task may modify. Omit for a read-only task. Tasks whose paths overlap never run at the same time."},` +
	`"isolation":{"type":"string","enum":["claims","worktree"],"description":"How a writer is kept apart from other writers: claims (its write_paths; writers whose paths overlap take turns) or worktree (a git worktree of its own, merged back into the workspace when it ends ok, so writers on the same files run at once). Default: the configured one."},` +
	`"model":{"type":"string","description":"Optional model for this task."},` +
	`"effort":{"type":"string","description":"Optional reasoning effort for this task."},` +
	`"budget":` + budgetSchema + `,` + nameProp

// nameProp names a task for send_message and task_wait.
const nameProp = `"name":{"type":"string","description":"Optional name to address the task by (send_message, task_wait), unique in the session."}`

// backgroundProp makes a delegation call return at once.
const backgroundProp = `"background":{"type":"boolean","description":"Return at once with the task ids and keep working; each task's result is added to the conversation when it ends."}`

// budgetSchema describes the optional ceilings of a task or a fleet.
const budgetSchema = `{"type":"object","additionalProperties":false,"description":"Optional ceilings. A task that reaches one stops and returns its partial answer, marked over_budget.",` +
	`"properties":{"tokens":{"type":"integer","minimum":1,"description":"Input plus output tokens."},` +
	`"turns":{"type":"integer","minimum":1,"description":"Model requests."},` +
	`"seconds":{"type":"integer","minimum":1,"description":"Wall time."},` +
	`"cost":{"type":"number","minimum":0,"description":"Cost in the currency of the configured model prices; without prices it is not enforced."}}}`

// DelegationTools returns the task, fleet and parallel_tasks tools for a
// session that has a scheduler, and the tools for their background runs.
func DelegationTools() []tool.Tool {
	return append(delegationTools(), BackgroundTools()...)
}

func delegationTools() []tool.Tool {
	return []tool.Tool{
		&delegateTool{
			name: ToolTask,
			desc: "Run one task in a subagent: an isolated session with its own context that returns only its final answer. " +
				"Use it for self-contained work (research, a focused change) to keep your own context small. " +
				"Without write_paths the subagent can only read.",
			schema: `{"type":"object","additionalProperties":false,"required":["prompt"],"properties":{` + backgroundProp + `,` + taskProps + `}}`,
		},
		&delegateTool{
			name: ToolFleet,
			desc: fmt.Sprintf("Run 2 to %d independent tasks in parallel subagents and wait for all of them. "+
				"The result lists every task's outcome in the order given. Give writers disjoint write_paths so they can run at once; "+
				"a failed task does not stop the others.", MaxFleetTasks),
			schema: fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["tasks"],"properties":{`+backgroundProp+`,"budget":%s,"tasks":{"type":"array","minItems":2,"maxItems":%d,"description":"The tasks to run. A task without its own budget gets an even share of what is left of the fleet's.","items":{"type":"object","additionalProperties":false,"required":["prompt"],"properties":{%s}}}}}`, budgetSchema, MaxFleetTasks, taskProps),
		},
		&delegateTool{
			name: ToolParallelTasks,
			desc: fmt.Sprintf("Run 1 to %d read-only research tasks in parallel subagents and return their answers in order. "+
				"The subagents can read and search but not modify anything.", MaxFleetTasks),
			schema:   fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["tasks"],"properties":{`+backgroundProp+`,"tasks":{"type":"array","minItems":1,"maxItems":%d,"description":"The tasks to run.","items":{"type":"object","additionalProperties":false,"required":["prompt"],"properties":{"prompt":{"type":"string","description":"Complete instructions for the subagent."},"profile":{"type":"string","description":"Optional name of a subagent profile."},`+nameProp+`}}}}}`, MaxFleetTasks),
			readOnly: true,
		},
	}
}

type taskArgs struct {
	Prompt     string       `json:"prompt"`
	Profile    string       `json:"profile"`
	WritePaths []string     `json:"write_paths"`
	Model      string       `json:"model"`
	Effort     string       `json:"effort"`
	Budget     event.Budget `json:"budget"`
	Name       string       `json:"name"`
	Isolation  string       `json:"isolation"`
}

// checkBudget rejects negative ceilings.
func checkBudget(b event.Budget) error {
	if b.Tokens < 0 || b.Turns < 0 || b.Seconds < 0 || b.Cost < 0 {
		return fmt.Errorf("budget values must be positive, got %+v", b)
	}
	return nil
}

// ParseDelegation turns a delegation call's arguments into task specs, with
// IDs <fleetID>.<n> numbered from 1 in input order.
func ParseDelegation(name, args, fleetID string) ([]event.TaskSpec, error) {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	var list []taskArgs
	var whole event.Budget
	switch name {
	case ToolTask:
		var one taskArgs
		if err := json.Unmarshal([]byte(args), &one); err != nil {
			return nil, fmt.Errorf("%s: arguments are not valid JSON: %w", name, err)
		}
		list = []taskArgs{one}
	default:
		var many struct {
			Tasks  []taskArgs   `json:"tasks"`
			Budget event.Budget `json:"budget"`
		}
		if err := json.Unmarshal([]byte(args), &many); err != nil {
			return nil, fmt.Errorf("%s: arguments are not valid JSON: %w", name, err)
		}
		list, whole = many.Tasks, many.Budget
		if err := checkBudget(whole); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		min := 2
		if name == ToolParallelTasks {
			min = 1
		}
		if len(list) < min || len(list) > MaxFleetTasks {
			return nil, fmt.Errorf("%s: needs %d to %d tasks, got %d", name, min, MaxFleetTasks, len(list))
		}
	}
	specs := make([]event.TaskSpec, 0, len(list))
	for i, a := range list {
		if strings.TrimSpace(a.Prompt) == "" {
			return nil, fmt.Errorf("%s: task %d has an empty prompt", name, i+1)
		}
		if err := checkBudget(a.Budget); err != nil {
			return nil, fmt.Errorf("%s: task %d: %w", name, i+1, err)
		}
		spec := event.TaskSpec{ID: fmt.Sprintf("%s.%d", fleetID, i+1), Prompt: a.Prompt, Profile: a.Profile, Model: a.Model, Effort: a.Effort,
			Budget: a.Budget, FleetBudget: whole, Name: strings.TrimSpace(a.Name)}
		if name != ToolParallelTasks && a.WritePaths != nil {
			spec.Writer, spec.WritePaths = true, a.WritePaths
		}
		switch a.Isolation {
		case "", event.IsolationClaims:
		case event.IsolationWorktree:
			if name != ToolParallelTasks {
				// A worktree is a copy to write in: the task writes there,
				// within its write_paths when it gives any.
				spec.Writer = true
			}
		default:
			return nil, fmt.Errorf("%s: task %d: isolation must be claims or worktree, not %q", name, i+1, a.Isolation)
		}
		if spec.Writer {
			spec.Isolation = a.Isolation
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// FormatFleet renders a FleetResult for the model: a summary line, then
// every task in input order.
func FormatFleet(name string, r *fleetmsg.FleetResult) (string, bool) {
	counts := map[string]int{}
	for _, t := range r.Results {
		counts[t.Status]++
	}
	allFailed := counts[event.TaskOK] == 0
	if name == ToolTask && len(r.Results) == 1 {
		t := r.Results[0]
		if t.Status == event.TaskOK {
			return CapText(t.Text), false
		}
		if t.Status == event.TaskOverBudget {
			return fmt.Sprintf("[partial answer: task %s stopped at its %s budget]\n%s", t.TaskID, t.OverBudget, CapText(t.Text)), false
		}
		return fmt.Sprintf("Error: task %s %s: %s\n%s", t.TaskID, t.Status, t.Error, CapText(t.Text)), true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tasks: %d ok, %d failed, %d timed out, %d cancelled", len(r.Results),
		counts[event.TaskOK], counts[event.TaskFailed], counts[event.TaskTimedOut], counts[event.TaskCancelled])
	if n := counts[event.TaskOverBudget]; n > 0 {
		fmt.Fprintf(&b, ", %d over budget (partial answers)", n)
		allFailed = false
	}
	b.WriteString(".\n")
	for i, t := range r.Results {
		fmt.Fprintf(&b, "\n## Task %d (%s): %s", i+1, t.TaskID, t.Status)
		if t.Steps > 0 {
			fmt.Fprintf(&b, ", %d steps", t.Steps)
		}
		if t.CacheHitPct > 0 {
			fmt.Fprintf(&b, ", %g%% cache hits", t.CacheHitPct)
		}
		if t.Cost > 0 {
			fmt.Fprintf(&b, ", cost %.4g", t.Cost)
		}
		b.WriteString("\n")
		if t.Status == event.TaskOverBudget {
			fmt.Fprintf(&b, "Partial answer: stopped at its %s budget.\n", t.OverBudget)
		}
		if t.Error != "" && t.Status != event.TaskOK && t.Status != event.TaskOverBudget {
			fmt.Fprintf(&b, "Error: %s\n", t.Error)
		}
		if t.Text != "" {
			b.WriteString(CapText(t.Text))
			b.WriteString("\n")
		}
	}
	return strings.TrimRight(b.String(), "\n"), allFailed
}

// CapText cuts an answer to what the parent's context takes of it.
func CapText(s string) string {
	if len(s) <= maxTaskText {
		return s
	}
	kept := text.Prefix(s, maxTaskText)
	return kept + fmt.Sprintf("\n[... %d more bytes of this answer cut ...]", len(s)-len(kept))
}

// DelegationWrites says a task, fleet or parallel_tasks call gives any of
// its tasks write_paths.
func DelegationWrites(args string) bool {
	var call struct {
		WritePaths []string `json:"write_paths"`
		Tasks      []struct {
			WritePaths []string `json:"write_paths"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(args), &call); err != nil {
		return true // unreadable: the scheduler will refuse it anyway
	}
	if len(call.WritePaths) > 0 {
		return true
	}
	for _, t := range call.Tasks {
		if len(t.WritePaths) > 0 {
			return true
		}
	}
	return false
}

// InBackground says a delegation call asks to run in the background.
func InBackground(args string) bool {
	var a struct {
		Background bool `json:"background"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	return a.Background
}
