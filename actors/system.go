package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// System owns one protoactor actor system and every goroutine the actors
// start, so shutting it down leaves nothing running.
type System struct {
	as     *actor.ActorSystem
	logger *slog.Logger
	wg     sync.WaitGroup
}

// NewSystem starts an actor system whose library logging goes to logger
// (never to stderr, which would corrupt a TUI or `run` output).
func NewSystem(logger *slog.Logger) *System {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	lib := logger.With("lib", "protoactor")
	as := actor.NewActorSystem(
		actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return lib }),
		// Late replies to stopped actors (a result racing a cancel) are
		// normal here. protoactor starts a timer goroutine per throttle
		// period on the first dead letter; a short period keeps that
		// goroutine from outliving the system by a second.
		actor.WithDeadLetterThrottleInterval(50*time.Millisecond),
	)
	return &System{as: as, logger: logger}
}

// Logger is the system's logger.
func (s *System) Logger() *slog.Logger { return s.logger }

// Root is the context used to talk to the tree from outside it.
func (s *System) Root() *actor.RootContext { return s.as.Root }

// Send delivers msg to pid from outside the tree (or from a goroutine an
// actor started, which must not touch its actor's context).
func (s *System) Send(pid *actor.PID, msg any) { s.as.Root.Send(pid, msg) }

// Go runs f in a goroutine the system waits for at Shutdown. A panic in f is
// recovered and handed to onPanic with the stack (a panic in a goroutine
// would otherwise kill the process; protoactor only guards Receive).
func (s *System) Go(f func(), onPanic func(reason any, stack []byte)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				stack := debug.Stack()
				s.logger.Error("goroutine panic", "reason", fmt.Sprint(r), "stack", string(stack))
				if onPanic != nil {
					onPanic(r, stack)
				}
			}
		}()
		f()
	}()
}

// Stop stops pid and its children after the messages already queued
// (PoisonFuture), waiting at most timeout.
func (s *System) Stop(pid *actor.PID, timeout time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- s.as.Root.PoisonFuture(pid).Wait() }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, actor.ErrTimeout) && !errors.Is(err, actor.ErrDeadLetter) {
			return fmt.Errorf("stop %s: %w", pid.Id, err)
		}
		if errors.Is(err, actor.ErrTimeout) {
			return fmt.Errorf("stop %s: %w", pid.Id, err)
		}
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("stop %s: timed out after %s", pid.Id, timeout)
	}
}

// Shutdown waits for the goroutines actors started (they end once their
// actors cancelled them) and then shuts the actor system down. Stop the
// tree with Stop first: protoactor's own Shutdown stops no actors.
func (s *System) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("shutdown: goroutines still running: %w", ctx.Err())
	}
	s.as.Shutdown()
	return err
}
