package remote

import (
	"time"

	"reasonix/actors/event"
	"reasonix/core/provider"
)

// The messages below cross the process boundary between a scheduler and a
// `reasonix worker`. They are plain data: the actors on both sides handle
// these Go values, and each one has a protobuf twin in actors/workerpb
// that only the wire mapping (wire.go) sees. Every one is sent
// through sendWorker or requestWorker, which put its twin on the wire, and
// a receiving actor turns a twin back with fromWire before it looks at it.
// Two actors of one process (the tests of both sides) exchange the twins
// the same way, so every test goes through the mapping.
//
// The schema only grows: a field or message is never renumbered or
// reused, and every exchange starts with a hello whose protocol number
// both ends check before anything else is sent, because a message type
// unknown to the receiver cannot be decoded there.

// workerProtocol is the version of the message set. A worker answers a
// hello of another version with a refusal and the scheduler sends it
// nothing else.
const Protocol = 1

// workerActorName is the well-known name of the actor a worker process
// hosts; a scheduler addresses it as actor.NewPID(address, workerActorName).
const HostActorName = "reasonix-worker"

// workerHello opens (or re-opens) a scheduler's link to a worker. Epoch is
// chosen by the scheduler and grows with each up-period of the link; every
// later message of the link carries it, so a worker can drop what belongs
// to an earlier period. The worker watches the sender (the link actor) so
// a scheduler that dies is noticed at once.
type Hello struct {
	Protocol int
	// Scheduler identifies the scheduler process (random per start): a
	// worker keeps one lease per scheduler.
	Scheduler string
	// Session is the parent session, for the worker's logs.
	Session string
	// Workspace names the checkout the scheduler's tasks expect.
	Workspace string
	Epoch     uint64
	// LeaseMS is how long the worker keeps the scheduler's tasks running
	// without a heartbeat; after it, the worker cancels them.
	LeaseMS int64
}

// workerWelcome answers a hello. Refused is empty when the worker accepts
// the link, else why not ("protocol", "workspace", "draining").
type Welcome struct {
	Protocol int
	Worker   string // the worker's name
	Boot     string // random per worker start
	Epoch    uint64
	Capacity int
	Running  int
	// Workspaces are the names the worker serves.
	Workspaces []string
	Refused    string
}

// workerHeartbeat renews the scheduler's lease; the worker answers with a
// workerHeartbeatAck of the same N.
type Heartbeat struct {
	Epoch uint64
	N     uint64
}

// workerHeartbeatAck answers a heartbeat with the worker's load.
type HeartbeatAck struct {
	Epoch   uint64
	N       uint64
	Running int
	Free    int
}

// workerStart asks a worker to run one attempt of a task. The sender (the
// task's proxy on the scheduler) receives every later message of the
// attempt. Spec.Budget holds the ceilings allotted at start; FleetBudget
// is left zero.
type Start struct {
	Epoch     uint64
	Attempt   int
	Session   string
	Fleet     string
	Workspace string
	Spec      event.TaskSpec
	// Posture, when set, is the posture the subagent runs under.
	Posture string
	// Interactive says the parent has a frontend that answers approvals.
	Interactive bool
	// LendWindow says the scheduler lends slots of its endpoint windows
	// to the attempt: the worker borrows each model request's slot with a
	// SlotAsk instead of using a window of its own.
	LendWindow bool
}

// SlotAsk asks the scheduler, through the attempt's proxy, for one slot of
// its window of Endpoint for a model request of the attempt. Key is the
// API key's fingerprint (provider.KeyFingerprint); ID is the worker's,
// unique within the attempt.
type SlotAsk struct {
	Task     string
	Attempt  int
	ID       uint64
	Endpoint string
	Key      string
}

// SlotGrant answers the SlotAsk of the same ID once the scheduler's window
// admits the request. Refused, when set, says why the scheduler lends no
// slot (another key): the worker uses its own window for that endpoint.
type SlotGrant struct {
	Task    string
	Attempt int
	ID      uint64
	Refused string
}

// SlotDone gives back the slot of the SlotAsk of the same ID, granted or
// still waiting, with the request's outcome and time to first byte, which
// the scheduler's window learns from as from a request of its own. Next,
// when not zero, asks ahead for the attempt's next request on the same
// endpoint and key under that ID: granted at once if the window has room
// (so the next request does not wait for a round trip), else not at all.
type SlotDone struct {
	Task    string
	Attempt int
	ID      uint64
	Outcome provider.Outcome
	TTFB    time.Duration
	Next    uint64
}

// workerAccepted says the worker built the task's agent and started it.
type Accepted struct {
	Task    string
	Attempt int
	// Model is the model the worker resolved for the task.
	Model string
	// Price is the model's configured price, nil when it has none.
	Price *event.Price
}

// workerRefused says the worker did not start the attempt; it is not the
// task's failure unless Reason says the task can never run there.
type Refused struct {
	Task    string
	Attempt int
	// Reason is "full", "workspace", "epoch", "draining" or, for a task
	// whose agent cannot be built there, the build error.
	Reason string
	// Fatal marks a refusal no other attempt would change (an unknown
	// profile or model): the task fails with Reason.
	Fatal bool
}

// workerEvent is one event of a task in its stream-json form.
type TaskEvent struct {
	Kind string
	JSON []byte
}

// workerEvents carries a task's events in publish order. First is the
// number of the first item (counting from 1 for each attempt), so the
// proxy can tell a gap.
type TaskEvents struct {
	Task    string
	Attempt int
	First   uint64
	Items   []TaskEvent
}

// workerFinished is the attempt's terminal message. Last is the number of
// the attempt's last event: the proxy ends the task only after it has
// relayed every event before it.
type Finished struct {
	Task    string
	Attempt int
	Last    uint64
	// Status, Text, Error, Steps and Usage are the subagent's
	// TurnFinished.
	Status string
	Text   string
	Error  string
	Steps  int
	Usage  provider.Usage
	// Transcript is the path of the task's transcript on the worker.
	Transcript string
	// Changes are a worktree writer's changes, to merge on the
	// scheduler's side.
	Changes *event.Changes
}

// workerCancel stops one attempt on the worker; Why is logged there.
type Cancel struct {
	Task    string
	Attempt int
	Why     string
}

// workerApproval carries a frontend's answer to a remote subagent's
// approval request.
type Approval struct {
	Task      string
	Attempt   int
	RequestID string
	Choice    string
	Rule      string
}

// workerPosture switches the posture of every task of the scheduler on
// the worker.
type Posture struct {
	Epoch   uint64
	Posture string
}

// workerBye ends a link on purpose: a scheduler shutting down, or a worker
// draining. The receiver cancels (worker) or re-queues (scheduler) what
// the link carried, without waiting for a timeout.
type Bye struct {
	Epoch uint64
	Why   string
}
