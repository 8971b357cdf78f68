package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"syscall"

	"reasonix/actors/event"
)

// SaveLog is a session's account of what it could not write: its
// transcript, the planner's, its subagents', its fleet journal, its
// compaction archives. A turn ends ok only when the account is clear at
// its end (see sessionActor.finish); otherwise its status is
// StatusIncomplete and its error names each thing and its cause.
//
// The actors and store goroutines that write report here directly rather
// than by message: a failure may happen on a store's own goroutine, or in
// an executor under a goal or a coordinator, and the session must know of
// it by the time the turn it belongs to ends, whatever actor is between.
// The first failure of each thing is also published as a notice, once: a
// full disk warns once, not once per record.
type SaveLog struct {
	bus     *event.Bus
	session string
	log     *slog.Logger

	mu sync.Mutex
	// order lists the failed things by their first failure.
	order  []string
	failed map[string]saveFailure
}

// saveFailure is what failed of one thing. An ongoing failure (a store
// that keeps its records and retries them) lasts until saved is called; a
// one-off one (an archive not written, a journal record refused) is
// reported at the end of one turn and then forgotten.
type saveFailure struct {
	cause   string
	ongoing bool
}

// NewSaveLog is an empty log that reports on bus for session.
func NewSaveLog(bus *event.Bus, session string, log *slog.Logger) *SaveLog {
	return &SaveLog{bus: bus, session: session, log: log, failed: map[string]saveFailure{}}
}

// Fail records that what was not saved, and why.
func (l *SaveLog) Fail(what string, err error, ongoing bool) {
	if l == nil || err == nil {
		return
	}
	l.FailCause(what, SaveCause(err), ongoing)
}

// FailCause records that what was not saved, with cause already worded.
func (l *SaveLog) FailCause(what, cause string, ongoing bool) {
	if l == nil {
		return
	}
	l.mu.Lock()
	_, known := l.failed[what]
	l.failed[what] = saveFailure{cause: cause, ongoing: ongoing}
	if !known {
		l.order = append(l.order, what)
	}
	l.mu.Unlock()
	if known {
		return
	}
	if l.log != nil {
		l.log.Error("not saved", "what", what, "cause", cause)
	}
	msg := what + " not saved: " + cause
	if ongoing {
		msg += "; what is not written yet is kept and written once it can be"
	}
	l.publish(&event.Notice{Level: "warn", Message: msg})
}

// Saved records that an ongoing failure of what is over: everything that
// waited has been written.
func (l *SaveLog) Saved(what string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	f, known := l.failed[what]
	if known {
		delete(l.failed, what)
		l.order = slices.DeleteFunc(l.order, func(w string) bool { return w == what })
	}
	l.mu.Unlock()
	if !known {
		return
	}
	if l.log != nil {
		l.log.Info("saved again", "what", what, "was", f.cause)
	}
	l.publish(&event.Notice{Level: "info", Message: what + " saved again: what waited is written"})
}

// Take returns what a turn ending now must report, "" when everything was
// saved, and forgets the one-off failures it reports.
func (l *SaveLog) Take() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for _, what := range l.order {
		parts = append(parts, what+" not saved: "+l.failed[what].cause)
	}
	l.order = slices.DeleteFunc(l.order, func(what string) bool {
		if l.failed[what].ongoing {
			return false
		}
		delete(l.failed, what)
		return true
	})
	if len(parts) == 0 {
		return ""
	}
	return "incomplete: " + strings.Join(parts, "; ")
}

func (l *SaveLog) publish(n *event.Notice) {
	if l.bus == nil {
		return
	}
	n.Session = l.session
	l.bus.Publish(n)
}

// Watch makes the session hear of the failures of a store that keeps and
// retries its records (session.Store): what is failing from the store's
// first failed write until a retry wrote everything that waited. A
// one-off store (a subagent's, which ends with its task) reports a loss
// once instead.
func (l *SaveLog) Watch(t Transcript, what string, ongoing bool) {
	n, ok := t.(interface{ Notify(func(error)) })
	if l == nil || !ok {
		return
	}
	n.Notify(func(err error) {
		if err != nil {
			l.Fail(what, err, ongoing)
		} else {
			l.Saved(what)
		}
	})
}

// SaveCause describes why something was not saved, naming a full disk
// (ENOSPC) plainly, since that is what the user can do something about.
func SaveCause(err error) string {
	msg := err.Error()
	if errors.Is(err, syscall.ENOSPC) && !strings.Contains(msg, "ENOSPC") {
		msg += " (ENOSPC)"
	}
	return msg
}

// sqliteFull is SQLite's result code for a full disk (or database).
const sqliteFull = 13

// DiskFull marks an SQLite "database or disk is full" error as ENOSPC, so
// the journal's failures name a full disk the way the files' do.
func DiskFull(err error) error {
	var coded interface{ Code() int }
	if errors.As(err, &coded) && coded.Code()&0xff == sqliteFull && !errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w: %w", err, syscall.ENOSPC)
	}
	return err
}
