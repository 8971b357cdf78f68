package scheduler

import (
	"encoding/json"
	"fmt"
	"time"

	"reasonix/core/journal"
)

// Submission is the payload of a fleet's submit record: the tasks as the
// Queue sees them, in input order, with the caller's own description of
// each (its spec) carried along opaquely.
type Submission struct {
	Tasks []Task            `json:"tasks"`
	Specs []json.RawMessage `json:"specs,omitempty"`
}

// Replayed is a fleet rebuilt from its journal. A result is kept exactly
// once, from the first finish record of its task: a task finished twice
// (re-run after a crash that came between its two records) keeps its
// first answer, and a task with no finish record is pending, never lost.
type Replayed struct {
	// Submission is what the fleet was submitted with; Order its task IDs.
	Submission Submission
	Order      []string
	// Results maps each finished task to its result payload.
	Results map[string]json.RawMessage
	// Running holds the tasks that had started and not finished when the
	// journal ends: they may have been part way through their work. A
	// requeue record takes a task out again: its attempt was given up, so
	// it is simply queued.
	Running map[string]bool
	// Cancelled and Expired hold unfinished tasks whose cancellation or
	// expiry was recorded; CancelledFleet says the whole fleet was.
	Cancelled      map[string]bool
	Expired        map[string]bool
	CancelledFleet bool
	// Replied says the fleet's result was delivered.
	Replied bool
	// Messages are the payloads of the fleet's message records, in order:
	// what its tasks sent to the submitter.
	Messages []json.RawMessage
	// Worktrees and Merges map a task to the payload of its last worktree
	// and merge record.
	Worktrees, Merges map[string]json.RawMessage
	// Updated is the time of the last record.
	Updated time.Time
}

// Replay folds a fleet's records, in order, into its state. Records
// before the submit, or about tasks the submit did not list, are errors:
// the journal is written by one scheduler, so they mean corruption.
func Replay(recs []journal.Record) (*Replayed, error) {
	r := &Replayed{Results: map[string]json.RawMessage{}, Running: map[string]bool{},
		Cancelled: map[string]bool{}, Expired: map[string]bool{}, Worktrees: map[string]json.RawMessage{}, Merges: map[string]json.RawMessage{}}
	known := map[string]bool{}
	submitted := false
	for _, rec := range recs {
		r.Updated = rec.At
		if rec.Kind != journal.KindSubmit && !submitted {
			return nil, fmt.Errorf("replay fleet %s: %s record %d before the submit", rec.Fleet, rec.Kind, rec.Seq)
		}
		if rec.Task != "" && !known[rec.Task] && rec.Kind != journal.KindSubmit {
			return nil, fmt.Errorf("replay fleet %s: record %d names unknown task %q", rec.Fleet, rec.Seq, rec.Task)
		}
		_, done := r.Results[rec.Task]
		switch rec.Kind {
		case journal.KindSubmit:
			if submitted {
				return nil, fmt.Errorf("replay fleet %s: second submit at record %d", rec.Fleet, rec.Seq)
			}
			if err := json.Unmarshal(rec.Data, &r.Submission); err != nil {
				return nil, fmt.Errorf("replay fleet %s: submit: %w", rec.Fleet, err)
			}
			submitted = true
			for _, t := range r.Submission.Tasks {
				if known[t.ID] {
					return nil, fmt.Errorf("replay fleet %s: task %q submitted twice", rec.Fleet, t.ID)
				}
				known[t.ID] = true
				r.Order = append(r.Order, t.ID)
			}
		case journal.KindStart:
			if !done {
				r.Running[rec.Task] = true
			}
		case journal.KindFinish:
			if !done {
				r.Results[rec.Task] = rec.Data
				delete(r.Running, rec.Task)
				delete(r.Cancelled, rec.Task)
				delete(r.Expired, rec.Task)
			}
		case journal.KindRequeue:
			if rec.Task == "" {
				return nil, fmt.Errorf("replay fleet %s: requeue record %d names no task", rec.Fleet, rec.Seq)
			}
			if !done {
				delete(r.Running, rec.Task)
			}
		case journal.KindCancel:
			switch {
			case rec.Task == "":
				r.CancelledFleet = true
			case !done:
				r.Cancelled[rec.Task] = true
			}
		case journal.KindExpire:
			if !done {
				r.Expired[rec.Task] = true
			}
		case journal.KindReply:
			r.Replied = true
		case journal.KindMessage:
			r.Messages = append(r.Messages, rec.Data)
		case journal.KindWorktree:
			r.Worktrees[rec.Task] = rec.Data
		case journal.KindMerge:
			r.Merges[rec.Task] = rec.Data
		default:
			return nil, fmt.Errorf("replay fleet %s: unknown record kind %q", rec.Fleet, rec.Kind)
		}
	}
	if !submitted {
		return nil, fmt.Errorf("replay fleet: no submit record")
	}
	return r, nil
}

// Pending lists the tasks without a result, in input order.
func (r *Replayed) Pending() []string {
	var out []string
	for _, id := range r.Order {
		if _, ok := r.Results[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

// Complete reports whether every task has its result.
func (r *Replayed) Complete() bool { return len(r.Results) == len(r.Order) }

// Rebuild is a fresh Queue holding the given pending tasks (a subset of
// Pending chosen by the caller's resume policy), queued in input order,
// each at its first attempt. The Queue knows only the local node, with
// cfg.MaxRunning slots: the caller adds its workers (and sets the local
// slots, zero included) with SetNode before the first Next. Tasks are not
// checked against those nodes again (see SetNode), so a writer no node
// covers any more waits until it is cancelled.
func (r *Replayed) Rebuild(cfg Config, ids []string, now time.Time) (*Queue, error) {
	q, err := New(cfg)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for _, t := range r.Submission.Tasks {
		if _, done := r.Results[t.ID]; done || !want[t.ID] {
			continue
		}
		if err := q.Submit(t, now); err != nil {
			return nil, fmt.Errorf("rebuild queue: %w", err)
		}
	}
	return q, nil
}
