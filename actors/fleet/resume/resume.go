// Package resume rebuilds a journalled fleet from its records: the
// submission that re-attaches it, with the results it had, and what a
// crash left to do. `reasonix fleet resume`, `run --continue` and a
// scheduler started again in the same process all go on from it.
package resume

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"reasonix/actors/event"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/core/journal"
	"reasonix/scheduler"
)

// Appender takes the records a resume decides (the failures of tasks it
// will not run again); *journal.Journal is one.
type Appender interface {
	Append(ctx context.Context, r journal.Record) (int64, error)
}

// Fleet is a journalled fleet rebuilt: the SubmitFleet that re-attaches
// it (same key, finished results kept) and what the resume found.
type Fleet struct {
	Submit *fleetmsg.SubmitFleet
	// Rerun lists tasks that were running when the journal ended and run
	// again; Failed those failed instead (agent.resume_running = "fail").
	Rerun, Failed []string
	// Replayed is the fleet's state as its journal left it.
	Replayed *scheduler.Replayed
}

// Rebuild rebuilds a fleet from its records. Finished tasks keep their
// journalled results and never run again; tasks that were running run
// again, or fail when running is "fail"; queued tasks start. The failures
// it decides are journalled through j before they are returned.
func Rebuild(ctx context.Context, j Appender, recs []journal.Record, running string) (*Fleet, error) {
	r, err := scheduler.Replay(recs)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("resume fleet: no records")
	}
	key := recs[0].Fleet
	out := &Fleet{Replayed: r, Submit: &fleetmsg.SubmitFleet{Key: key, Done: map[string]event.TaskResult{}}}
	for i, raw := range r.Submission.Specs {
		var spec event.TaskSpec
		if err := json.Unmarshal(raw, &spec); err != nil {
			return nil, fmt.Errorf("resume fleet %s: task %d: %w", key, i+1, err)
		}
		out.Submit.Tasks = append(out.Submit.Tasks, spec)
	}
	if len(out.Submit.Tasks) != len(r.Order) {
		return nil, fmt.Errorf("resume fleet %s: %d task specs for %d tasks", key, len(out.Submit.Tasks), len(r.Order))
	}
	if len(r.Submission.Tasks) > 0 {
		out.Submit.FleetID = r.Submission.Tasks[0].Fleet
	}
	for id, raw := range r.Results {
		var res event.TaskResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("resume fleet %s: result of %s: %w", key, id, err)
		}
		out.Submit.Done[id] = res
	}
	for _, id := range r.Pending() {
		if !r.Running[id] {
			continue
		}
		if running != "fail" {
			out.Rerun = append(out.Rerun, id)
			continue
		}
		res := event.TaskResult{TaskID: id, Status: event.TaskFailed, Error: "it was running when the process stopped (agent.resume_running = \"fail\")"}
		b, _ := json.Marshal(res)
		if _, err := j.Append(ctx, journal.Record{Fleet: key, Kind: journal.KindFinish, Task: id, At: time.Now(), Data: b}); err != nil {
			return nil, fmt.Errorf("resume fleet %s: %w", key, err)
		}
		out.Submit.Done[id] = res
		out.Failed = append(out.Failed, id)
	}
	return out, nil
}

// PendingMerges lists, in order, the finished worktree tasks whose result
// was journalled with its merge pending and whose merge never was: a crash
// came between the two, and the merge is still to do, once.
func (f *Fleet) PendingMerges() []string {
	var ids []string
	for id, res := range f.Submit.Done {
		if res.Merge != nil && res.Merge.Status == event.MergePending && f.Replayed.Merges[id] == nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}
