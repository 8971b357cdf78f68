package headless

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"reasonix/actors"
	"reasonix/actors/event"
)

// backgroundWait is what waitBackground needs of a running session.
type backgroundWait struct {
	sess    *actors.Session
	sub     *event.Subscription
	session string
	each    func(event.Event)
	// interrupted closes at the first stop signal: the wait ends then,
	// and the session's stop cancels what still runs.
	interrupted <-chan struct{}
	// limit bounds the wait (0: none); past it the tasks still running
	// are cancelled, and their results get their turn.
	limit time.Duration
	log   *slog.Logger
}

// waitBackground keeps a headless run going after its last turn while it
// has background work: tasks still running, or results its conversation
// has not read. Results that come while no turn runs start a turn of
// their own (or, with agent.background_wakeup = false, are given one
// here); the run ends once nothing is running, nothing is undelivered and
// no turn is under way, and last becomes the last turn that ran.
//
// The session is asked for its background state before its turn state:
// anything that could still start a turn (a result not yet read) is
// counted in the first answer, so both being empty means the run is done.
func waitBackground(ctx context.Context, w backgroundWait, last *event.TurnDone) (*event.TurnDone, error) {
	var deadline time.Time
	if w.limit > 0 {
		deadline = time.Now().Add(w.limit)
	}
	cancelled := false
	for {
		st, err := w.sess.Background(commandQueryTimeout)
		if err != nil {
			return last, err
		}
		busy, err := w.sess.Busy(commandQueryTimeout)
		if err != nil {
			return last, err
		}
		switch {
		case !busy && len(st.Running) == 0 && st.Undelivered == 0:
			return w.drain(last), nil
		case !busy && len(st.Running) == 0:
			w.sess.Wake() // the results wait for a turn nobody else starts
		}
		waitCtx, stop := context.WithCancel(ctx)
		if !deadline.IsZero() && !cancelled {
			waitCtx, stop = context.WithDeadline(ctx, deadline)
		}
		go func() {
			select {
			case <-w.interrupted:
				stop()
			case <-waitCtx.Done():
			}
		}()
		ev, err := w.sub.Next(waitCtx)
		stop()
		switch {
		case isClosed(w.interrupted):
			return last, nil
		case err != nil && ctx.Err() != nil:
			return last, ctx.Err()
		case err != nil:
			// The limit passed: what still runs is cancelled, and its
			// results (cancelled) come back for one more turn.
			cancelled = true
			w.log.Info("background wait limit reached; cancelling", "running", st.Running)
			w.sess.CancelBackground()
			w.each(&event.Notice{Meta: event.Meta{Session: w.session}, Level: "warn",
				Message: fmt.Sprintf("--background-wait %s passed; cancelling the background tasks still running: %v", w.limit, st.Running)})
			continue
		}
		w.each(ev)
		if td, ok := ev.(*event.TurnDone); ok && td.Session == w.session && td.Task == "" {
			last = td
		}
	}
}

// drain renders the events already published (the last turn's end among
// them: the session publishes it before it answers that it is idle) and
// returns the last turn_done.
func (w backgroundWait) drain(last *event.TurnDone) *event.TurnDone {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for {
		ev, err := w.sub.Next(done)
		if err != nil {
			return last
		}
		w.each(ev)
		if td, ok := ev.(*event.TurnDone); ok && td.Session == w.session && td.Task == "" {
			last = td
		}
	}
}
