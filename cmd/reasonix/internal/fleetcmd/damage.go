package fleetcmd

import (
	"encoding/json"
	"errors"
	"fmt"

	"reasonix/actors/event"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/journal"
	"reasonix/scheduler"
)

// fleetCheck is what opening a journalled fleet found: the records that
// can be used, the fleet they replay to, and what of it is lost.
type fleetCheck struct {
	// Records are the fleet's records with the damaged ones left out, or
	// kept without their payload where the record means as much without
	// it (a start, a requeue, a cancellation, an expiry, the reply).
	Records []journal.Record
	// Replayed is the fleet as Records rebuild it; nil when they cannot.
	Replayed *scheduler.Replayed
	// Lost says, a line each, what could not be recovered and what
	// becomes of it.
	Lost []string
	// Err is why the fleet cannot be rebuilt at all.
	Err error
}

// Damaged reports whether the check found anything wrong.
func (c *fleetCheck) Damaged() bool { return c.Err != nil || len(c.Lost) > 0 }

// Summary is the check's findings on one line, for a listing.
func (c *fleetCheck) Summary() string {
	first, more := "", len(c.Lost)
	if c.Err != nil {
		first = c.Err.Error()
	} else {
		first, more = c.Lost[0], more-1
	}
	if more > 0 {
		first += fmt.Sprintf(" (and %d more; see reasonix fleet status)", more)
	}
	return "damaged: " + oneLine(first, 300)
}

// lines are the check's findings, a line each.
func (c *fleetCheck) lines() []string {
	if c.Err != nil {
		return append([]string{c.Err.Error()}, c.Lost...)
	}
	return c.Lost
}

// report says on stderr, before a resume acts on the fleet, what of it
// could not be recovered.
func (c *fleetCheck) report(f *cmdutil.Factory, id string) {
	for _, l := range c.Lost {
		fmt.Fprintf(f.Stderr, "reasonix: fleet %s is damaged: %s\n", id, l)
	}
}

// CheckFleet checks a fleet's records on opening it (journal.Check), so
// that damage is reported as such and what is intact is still used. A
// damaged result is the one loss that changes what a resume does: the
// task counts as unfinished and runs again (or fails, as the running
// policy says), unless the fleet's reply was delivered, in which case its
// result reached the parent and the task must never run again, so it ends
// failed with the reason.
func CheckFleet(recs []journal.Record) *fleetCheck {
	c := &fleetCheck{}
	bad := map[int64]*journal.Damage{}
	for _, d := range journal.Check(recs) {
		if d.Missing > 0 {
			c.Lost = append(c.Lost, d.Error()+": what was recorded there is lost")
			continue
		}
		bad[d.Seq] = d
	}
	replied := false
	// finished holds the tasks with a result that reads, by its record.
	finished := map[string]int64{}
	for _, r := range recs {
		replied = replied || r.Kind == journal.KindReply
		if r.Kind != journal.KindFinish {
			continue
		}
		if d := bad[r.Seq]; d != nil && errors.Is(d, journal.ErrNotJSON) {
			continue
		}
		// Valid JSON that is no result is as lost to a resume.
		if err := json.Unmarshal(r.Data, new(event.TaskResult)); err != nil {
			bad[r.Seq] = &journal.Damage{Seq: r.Seq, Kind: r.Kind, Task: r.Task, Err: fmt.Errorf("its result does not read: %w", err)}
			continue
		}
		if _, ok := finished[r.Task]; !ok {
			finished[r.Task] = r.Seq
		}
	}
	for _, r := range recs {
		d := bad[r.Seq]
		lost := d != nil && (errors.Is(d, journal.ErrNotJSON) || r.Kind == journal.KindFinish && finished[r.Task] != r.Seq)
		switch {
		case d == nil:
			c.Records = append(c.Records, r)
		case errors.Is(d, journal.ErrUnknownKind):
			c.Lost = append(c.Lost, fmt.Sprintf("%v: the record is ignored", d))
		case !lost:
			// It has no time, and nothing else is wrong: the time only
			// dates the record for people.
			c.Lost = append(c.Lost, fmt.Sprintf("%v: the record is kept", d))
			c.Records = append(c.Records, r)
		case r.Kind == journal.KindSubmit:
			c.Err = fmt.Errorf("%w: the fleet's tasks are lost", d)
		case r.Kind == journal.KindFinish && finished[r.Task] != 0:
			// The task ran again after the damage, or had finished twice.
			c.Lost = append(c.Lost, fmt.Sprintf("%v: the task's result is in record %d, which is intact", d, finished[r.Task]))
		case r.Kind == journal.KindFinish && !replied:
			c.Lost = append(c.Lost, fmt.Sprintf("%v: the task's result is lost and it counts as unfinished", d))
		case r.Kind == journal.KindFinish:
			c.Lost = append(c.Lost, fmt.Sprintf("%v: the task's result, delivered before, is lost; it ends failed", d))
			r.Data, _ = json.Marshal(event.TaskResult{TaskID: r.Task, Status: event.TaskFailed,
				Error: fmt.Sprintf("its result was delivered, but the journal's record of it is damaged (%v)", d.Err)})
			c.Records = append(c.Records, r)
		default:
			// A start, requeue, cancellation, expiry or reply means as
			// much without its details.
			c.Lost = append(c.Lost, fmt.Sprintf("%v: its details are lost, the record is kept", d))
			r.Data = nil
			c.Records = append(c.Records, r)
		}
	}
	if c.Err != nil {
		return c
	}
	r, err := scheduler.Replay(c.Records)
	if err != nil {
		c.Err = err
		return c
	}
	c.Replayed = r
	return c
}
