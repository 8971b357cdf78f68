package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"reasonix/actors/event"
	"reasonix/actors/kernel"
)

// Live is an interactive session running in an actor system of its own:
// the unit a long-lived frontend (the chat TUI, `reasonix serve`) holds.
// Its Bus carries the session's events and keeps their recent history, so
// a frontend that subscribes late or reconnects replays what it missed;
// its Session takes the frontend's commands. Close stops it all and closes
// the transcript. A Live is safe for concurrent use.
type Live struct {
	sys     *kernel.System
	bus     *event.Bus
	session *Session
	built   *Built
	viewer  *event.Viewer
	started time.Time

	stopOnce  sync.Once
	stopErr   error
	closeOnce sync.Once
	closeErr  error
}

// StartLive starts the session b describes, publishing to a new bus made
// with opts. It takes b over: Close closes b's transcripts, and so does a
// failed start.
func StartLive(b *Built, logger *slog.Logger, opts ...event.BusOption) (*Live, error) {
	if logger == nil {
		logger = b.Spec.Agent.Logger
	}
	sys := kernel.NewSystem(logger)
	bus := event.NewBus(opts...)
	spec := b.Spec
	spec.Agent.Bus = bus
	sess, err := StartSession(sys, spec)
	if err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return nil, errors.Join(err, sys.Shutdown(ctx), b.Close())
	}
	b.Spec = spec
	return &Live{sys: sys, bus: bus, session: sess, built: b, viewer: sess.Watch(bus), started: time.Now()}, nil
}

// ID is the session id.
func (l *Live) ID() string { return l.session.ID() }

// Bus is the session's event stream.
func (l *Live) Bus() *event.Bus { return l.bus }

// Session takes the frontend's commands.
func (l *Live) Session() *Session { return l.session }

// Built describes the session: its resolved model, effort, warnings,
// transcript and working directory (Spec.Cwd).
func (l *Live) Built() *Built { return l.built }

// Started is when the session was started in this process.
func (l *Live) Started() time.Time { return l.started }

// Snapshot is the session's state as its events so far make it: what a
// frontend shows when it attaches.
func (l *Live) Snapshot() event.Snapshot { return l.viewer.Snapshot() }

// SnapshotAt waits until the view has applied seq, then returns the
// snapshot: a frontend that subscribes from seq after taking it sees
// every later event exactly once.
func (l *Live) SnapshotAt(ctx context.Context, seq int64) (event.Snapshot, error) {
	return l.viewer.WaitSeq(ctx, seq)
}

// Stop cancels a running turn and stops the session and its actor system
// within timeout, leaving the transcripts open: a headless run closes them
// itself, since what that close finds decides whether the run saved
// everything. It is safe to call more than once; later calls return the
// first one's error.
func (l *Live) Stop(timeout time.Duration) error {
	l.stopOnce.Do(func() {
		stopErr := l.session.Close(timeout)
		l.viewer.Close()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		l.stopErr = errors.Join(stopErr, l.sys.Shutdown(ctx))
	})
	return l.stopErr
}

// Close stops the session (see Stop) and closes the transcripts. It is
// safe to call more than once; later calls return the first one's error.
func (l *Live) Close(timeout time.Duration) error {
	l.closeOnce.Do(func() {
		if err := errors.Join(l.Stop(timeout), l.built.Close()); err != nil {
			l.closeErr = fmt.Errorf("close session %s: %w", l.ID(), err)
		}
	})
	return l.closeErr
}
