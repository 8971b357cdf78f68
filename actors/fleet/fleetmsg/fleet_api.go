package fleetmsg

import (
	"time"

	"reasonix/actors/event"
	"reasonix/core/provider"
)

// SubmitFleet asks the scheduler to run tasks. The reply, exactly one, is a
// *FleetResult listing every task in input order once all have ended.
type SubmitFleet struct {
	FleetID string
	Tasks   []event.TaskSpec
	// Key, when set, re-attaches a journalled fleet (see resume.Rebuild):
	// its records go on under that key and Done holds the tasks that
	// finished before, which keep their results and do not run again.
	Key  string
	Done map[string]event.TaskResult
	// FromJournal says Key names the fleet in the journal whether or not
	// it is there yet: a fleet with no records is journalled under Key as
	// a new one, and one with records goes on from them (as resume.Rebuild
	// says). It is how a restarted scheduler takes over the fleets of the
	// one that stopped.
	FromJournal bool
	// Background says the submitter goes on while the fleet runs: it is
	// sent a TaskEnded as each task ends, and the FleetResult still ends
	// the fleet.
	Background bool
}

// CancelFleet stops a fleet: queued tasks end cancelled, running ones are
// cancelled and end as soon as they stop. Its FleetResult still arrives.
type CancelFleet struct {
	FleetID string
}

// CancelTask stops one task and leaves its siblings running.
type CancelTask struct {
	TaskID string
}

// FleetResult is the terminal reply to SubmitFleet.
type FleetResult struct {
	FleetID string
	Results []event.TaskResult
}

// QueryFleet asks the scheduler for its state; the reply is a
// *FleetStatus.
type QueryFleet struct {
	// Ref is returned in the FleetStatus, to tell answers apart.
	Ref string
}

// FleetStatus is the scheduler's state for status displays.
type FleetStatus struct {
	// Ref is the QueryFleet's.
	Ref                             string
	Queued, Running, Writers, Ended int
	Tasks                           []TaskState
	// Endpoints are the process's provider endpoints: each one's
	// concurrency window, requests in flight and waiting.
	Endpoints []provider.LimiterStats
	// Workers are the configured worker hosts, in config order.
	Workers []WorkerState
}

// WorkerState is one worker host as the scheduler sees it.
type WorkerState struct {
	Name    string
	Address string
	// State is "probing" (not reached yet), "up", "lost" (was up, is
	// being probed again) or "refused" (it answers but will not serve
	// us; Error says why).
	State    string
	Capacity int
	// Running counts this scheduler's tasks on the worker.
	Running int
	// Since is when the worker entered its state.
	Since time.Time
	// Error is the last probe error, refusal or loss reason.
	Error string
}

// TaskState is one live task in a FleetStatus.
type TaskState struct {
	TaskID string
	Fleet  string
	State  string
	Writer bool
	// Worker is the worker host running the task; empty for the local
	// process or a task not running.
	Worker string
	// Tool is the tool the task called last, Tokens its input plus output
	// tokens so far and Lines the last lines of its output (a running
	// local task's; empty otherwise).
	Tool   string
	Tokens int
	Lines  []string
}

// TaskEnded tells the submitter of a background fleet (SubmitFleet with
// Background) that one of its tasks ended, as soon as it has, before the
// fleet's FleetResult. Agent is the task whose conversation it was (a
// follow-up's result names the task it continued) and Name its name.
type TaskEnded struct {
	FleetID string
	Agent   string
	Name    string
	Result  event.TaskResult
}

// SendMessage writes to an agent of the session: To is a task id or name,
// or "parent"; From is the sender ("parent", or the sending task's id).
// A running agent reads the text at its next step boundary; a finished one
// runs one more turn of its own conversation with it, whose answer comes
// to the parent as a TaskEnded. The reply, exactly one, is a *MessageSent
// with the same Ref.
type SendMessage struct {
	Ref  string
	From string
	To   string
	Text string
}

// MessageSent answers SendMessage: Error says why nothing was delivered;
// otherwise Agent is the task id the message went to and Followup, when
// set, the id of the turn it started in a finished agent.
type MessageSent struct {
	Ref      string
	Agent    string
	Followup string
	Error    string
}

// FollowupStarted tells an agent's submitter that a message (from
// anyone: a sibling, the user, the submitter itself) started run, one
// more run of agent, whose result it will receive, so that it waits for
// it as for the agent's first.
type FollowupStarted struct {
	Agent string
	Run   string
}

// MessageToParent carries a subagent's send_message to "parent" from the
// scheduler to the agent that delegated (through the session).
type MessageToParent struct {
	// ID is the scheduler's id of the message (team.Deliver.ID).
	ID   string `json:"id"`
	From string `json:"from"`
	Name string `json:"name,omitempty"`
	Text string `json:"text"`
}
