package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Damage is something wrong with a fleet's records as read back: a record
// that is not as Append writes them (an unknown kind, no time, a payload
// that is not JSON), or records missing from the sequence. SQLite keeps
// every record whole, so damage means the file was harmed or edited; the
// records around it are still good.
type Damage struct {
	// Seq is the damaged record's number, or the first missing one.
	Seq int64
	// Missing is how many records are gone from Seq on; 0 for a record
	// that is there but damaged.
	Missing int64
	// Kind and Task are the damaged record's, as far as they read.
	Kind, Task string
	Err        error
}

func (d *Damage) Error() string {
	if d.Missing > 0 {
		if d.Missing == 1 {
			return fmt.Sprintf("record %d is missing", d.Seq)
		}
		return fmt.Sprintf("records %d-%d are missing", d.Seq, d.Seq+d.Missing-1)
	}
	what := d.Kind
	if d.Task != "" {
		what += " of " + d.Task
	}
	return fmt.Sprintf("record %d (%s): %v", d.Seq, what, d.Err)
}

func (d *Damage) Unwrap() error { return d.Err }

// The kinds of damage a record can have, in its Damage's Err.
var (
	ErrUnknownKind = errors.New("unknown kind")
	ErrNoTime      = errors.New("it has no time")
	ErrNotJSON     = errors.New("its payload is not JSON")
)

// kinds are the record kinds a journal holds.
var kinds = map[string]bool{KindSubmit: true, KindStart: true, KindFinish: true, KindCancel: true,
	KindExpire: true, KindReply: true, KindRequeue: true, KindMessage: true,
	KindWorktree: true, KindMerge: true}

// Check returns the damage in one fleet's records, as Records returns
// them, in order. Readers use it on opening a fleet, so that damage is
// reported as damage rather than as a confusing replay, and so that what
// is intact can still be used.
func Check(recs []Record) []*Damage {
	var out []*Damage
	next := int64(1)
	for _, r := range recs {
		if r.Seq > next {
			out = append(out, &Damage{Seq: next, Missing: r.Seq - next})
		}
		next = r.Seq + 1
		var errs []any
		if !kinds[r.Kind] {
			errs = append(errs, fmt.Errorf("%w %q", ErrUnknownKind, r.Kind))
		}
		if r.At.UnixNano() <= 0 {
			errs = append(errs, ErrNoTime)
		}
		if len(r.Data) > 0 && !json.Valid(r.Data) {
			errs = append(errs, ErrNotJSON)
		}
		if len(errs) > 0 {
			err := fmt.Errorf(strings.TrimSuffix(strings.Repeat("%w; ", len(errs)), "; "), errs...)
			out = append(out, &Damage{Seq: r.Seq, Kind: r.Kind, Task: r.Task, Err: err})
		}
	}
	return out
}
