package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/actors/fleet/resume"
	"reasonix/actors/kernel"
	"reasonix/core/journal"
	"reasonix/core/provider"
	"reasonix/scheduler"
)

// FleetJournal is where the scheduler writes its inputs before acting on
// them; *journal.Journal is the durable one.
type FleetJournal interface {
	Append(ctx context.Context, r journal.Record) (int64, error)
	// AppendAll writes several records in one synced transaction: all or
	// none.
	AppendAll(ctx context.Context, rs []journal.Record) ([]int64, error)
	// Records are a fleet's records in order; none for a fleet never
	// journalled.
	Records(ctx context.Context, fleet string) ([]journal.Record, error)
}

// JournalKey names a fleet in the journal: its session, its id and when
// it was submitted, so a session resumed in a later process, whose fleet
// ids start again, never meets its earlier fleets.
func JournalKey(session, fleetID string, at time.Time) string {
	return fmt.Sprintf("%s/%s-%d", session, fleetID, at.UnixMilli())
}

// fromJournal completes a FromJournal submission: a fleet the journal
// holds is rebuilt with the results it records (its running tasks run
// again or fail, per the lost policy), and one it does not hold (nil) is a
// new fleet to journal under the key. A journal that cannot be read leaves
// nothing to go on from: the error ends the fleet.
func (f *fleetActor) fromJournal(m *fleetmsg.SubmitFleet) (*resume.Fleet, error) {
	j, err := f.openJournal()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), journalTimeout)
	defer cancel()
	recs, err := j.Records(ctx, m.Key)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	rf, err := resume.Rebuild(ctx, j, recs, f.spec.LostPolicy)
	if err != nil {
		return nil, err
	}
	if rf.Submit.FleetID == "" {
		rf.Submit.FleetID = m.FleetID // a fleet of no tasks names none
	}
	if rf.Submit.FleetID != m.FleetID {
		return nil, fmt.Errorf("fleet journal %s holds fleet %q, not %q", m.Key, rf.Submit.FleetID, m.FleetID)
	}
	f.log.Info("fleet goes on from its journal", "fleet", m.Key, "done", len(rf.Submit.Done), "rerun", len(rf.Rerun), "failed", len(rf.Failed))
	return rf, nil
}

// journalTimeout bounds one journal write; a journal that cannot keep up
// has failed, like one that cannot write (see jot).
const journalTimeout = 5 * time.Second

// startRecord is the payload of a start record: what `fleet status` shows
// of a task's start.
type startRecord struct {
	Budget   *event.Budget          `json:"budget,omitempty"`
	Endpoint *provider.LimiterStats `json:"endpoint,omitempty"`
	// Worker is the worker host the attempt was placed on ("" for this
	// process) and Attempt its number.
	Worker  string `json:"worker,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
}

// openJournal opens the journal under JournalHome on the first fleet, so
// a session that never delegates never touches the database. One that
// would not open is tried again by the next fleet: the disk may have room
// by then.
func (f *fleetActor) openJournal() (FleetJournal, error) {
	if f.spec.Journal != nil {
		return f.spec.Journal, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), journalTimeout)
	defer cancel()
	j, err := journal.Open(ctx, f.spec.JournalHome)
	if err != nil {
		return nil, err
	}
	f.spec.Journal, f.ownJournal = j, j
	return j, nil
}

// closeJournal closes a journal the scheduler opened itself.
func (f *fleetActor) closeJournal() {
	if f.ownJournal != nil {
		if err := f.ownJournal.Close(); err != nil {
			f.log.Warn("close fleet journal", "err", err)
		}
		f.ownJournal, f.spec.Journal = nil, nil
	}
}

// jot appends one record of a fleet before the decision it describes is
// applied; the write is synced when it returns. A record that cannot be
// written breaks the fleet's journal: jot returns the failure, from then
// on for every record of that fleet, and the fleet is ended once the
// handler that met it returns (endBroken), so nothing of it runs
// unjournalled. The journal then ends where the failure struck, which is
// what `fleet resume` picks up from.
func (f *fleetActor) jot(fleetID, kind, task string, data any) error {
	fl := f.fleets[fleetID]
	if fl == nil || fl.key == "" {
		return nil
	}
	if fl.journalErr != nil {
		return fl.journalErr
	}
	err := f.write(fl.key, kind, task, data)
	if err == nil {
		return nil
	}
	return f.journalFailed(fleetID, fl, kind, err)
}

// journalFailed breaks a fleet's journal (see jot) and returns the error
// every later record of the fleet gets.
func (f *fleetActor) journalFailed(fleetID string, fl *fleetCall, kind string, err error) error {
	err = agent.DiskFull(err)
	fl.journalErr = err
	f.broken = append(f.broken, fleetID)
	f.log.Error("fleet journal failed; the fleet ends", "fleet", fl.key, "kind", kind, "err", err)
	f.spec.Saves.Fail("fleet journal", err, false)
	return err
}

// write appends one record to the journal, opening it first if need be.
func (f *fleetActor) write(key, kind, task string, data any) error {
	j, err := f.openJournal()
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if data != nil {
		if raw, err = json.Marshal(data); err != nil {
			return fmt.Errorf("fleet journal record %s: %w", kind, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), journalTimeout)
	defer cancel()
	_, err = j.Append(ctx, journal.Record{Fleet: key, Kind: kind, Task: task, At: time.Now(), Data: raw})
	return err
}

// writeAll appends records in one transaction, opening the journal first
// if need be.
func (f *fleetActor) writeAll(recs []journal.Record) error {
	j, err := f.openJournal()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), journalTimeout)
	defer cancel()
	_, err = j.AppendAll(ctx, recs)
	return err
}

// journalResult journals res as the result of its task, before it is
// delivered. A result the journal cannot take is not delivered: the task
// fails with the journal's error instead, so every result that reaches the
// parent is in the journal and a later `fleet resume` never runs that task
// again; the one held back runs again there. What the task used is kept.
func (f *fleetActor) journalResult(fleetID string, res event.TaskResult) event.TaskResult {
	err := f.jot(fleetID, journal.KindFinish, res.TaskID, res)
	if err == nil {
		return res
	}
	key := ""
	if fl := f.fleets[fleetID]; fl != nil {
		key = fl.key
	}
	out := res
	out.Status, out.Text, out.OverBudget = event.TaskFailed, "", ""
	out.Error = fmt.Sprintf("fleet journal not saved: %s; reasonix fleet resume %s runs this task again once the journal can be written", agent.SaveCause(err), key)
	return out
}

// endBroken ends every fleet whose journal failed in the handler that just
// ran, as a cancel would: its queued tasks never start and its running ones
// are stopped. Each result it still delivers is held back by journalResult.
func (f *fleetActor) endBroken(c actor.Context) {
	ids := f.broken
	f.broken = nil
	for _, id := range ids {
		if fl := f.fleets[id]; fl != nil && !fl.ending {
			fl.ending = true
			f.cancelFleet(c, id)
		}
	}
}

// jotSubmit journals a new fleet with every task as the queue will see it
// and the task specs that rebuild it.
func (f *fleetActor) jotSubmit(m *fleetmsg.SubmitFleet, fl *fleetCall) {
	if f.spec.Journal == nil && f.spec.JournalHome == "" {
		return
	}
	fl.key = m.Key
	if fl.key == "" {
		fl.key = JournalKey(f.session, m.FleetID, fl.created)
	}
	sub := scheduler.Submission{}
	for _, spec := range m.Tasks {
		sub.Tasks = append(sub.Tasks, f.queueTask(m.FleetID, spec))
		b, _ := json.Marshal(spec)
		sub.Specs = append(sub.Specs, b)
	}
	_ = f.jot(m.FleetID, journal.KindSubmit, "", sub) // a failure ends the fleet (endBroken)
}

// queueTask is a task as the queue sees it.
func (f *fleetActor) queueTask(fleetID string, spec event.TaskSpec) scheduler.Task {
	// A worktree writer may run on a worker, in a worktree there, whose
	// changes come back as a patch.
	iso := spec.Writer && spec.Isolation == event.IsolationWorktree
	return scheduler.Task{ID: spec.ID, Fleet: fleetID, Writer: spec.Writer, WritePaths: spec.WritePaths, Timeout: f.spec.TaskTimeout,
		Local: spec.Continue != "", Isolated: iso}
}

// RunFleet runs one fleet on a scheduler of its own, outside any session,
// and returns its result: how `reasonix fleet resume` finishes a fleet
// whose process died. It waits at most timeout and stops the scheduler
// (and whatever subagents it still runs) before it returns.
func RunFleet(sys *kernel.System, spec FleetSpec, session string, bus *event.Bus, m *fleetmsg.SubmitFleet, timeout time.Duration) (*fleetmsg.FleetResult, error) {
	if err := StartWorkersRemote(sys, &spec); err != nil {
		sys.Logger().Warn("fleet resume runs every task in this process", "err", err)
	}
	pid := sys.Root().Spawn(FleetProps(sys, session, bus, spec))
	defer func() { _ = sys.Stop(pid, 30*time.Second) }()
	res, err := sys.Root().RequestFuture(pid, m, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("run fleet %s: %w", m.FleetID, err)
	}
	out, ok := res.(*fleetmsg.FleetResult)
	if !ok {
		return nil, fmt.Errorf("run fleet %s: unexpected reply %T", m.FleetID, res)
	}
	return out, nil
}

// FormatFleetResult renders a fleet's result as the tool result of the
// delegation call tool (task, fleet or parallel_tasks) reads: a summary
// line, then every task in input order.
func FormatFleetResult(tool string, r *fleetmsg.FleetResult) (text string, isError bool) {
	return team.FormatFleet(tool, r)
}

// CallOfFleet reports whether a delegation call with these arguments is
// the one that submitted tasks: the same tool and the same prompts in
// the same order. It finds a resumed fleet's call in its parent's
// transcript.
func CallOfFleet(tool, args string, tasks []event.TaskSpec) bool {
	if tool != team.ToolTask && tool != team.ToolFleet && tool != team.ToolParallelTasks {
		return false
	}
	specs, err := team.ParseDelegation(tool, args, "f")
	if err != nil || len(specs) != len(tasks) {
		return false
	}
	for i := range specs {
		if specs[i].Prompt != tasks[i].Prompt || specs[i].Profile != tasks[i].Profile {
			return false
		}
	}
	return true
}
