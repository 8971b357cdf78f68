package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/core/panics"
)

// System owns one protoactor actor system and every goroutine the actors
// start, so shutting it down leaves nothing running.
type System struct {
	as     *actor.ActorSystem
	logger *slog.Logger
	wg     sync.WaitGroup
	// abandoned counts goroutines given up on (a tool that ignores its
	// context) that have not returned yet.
	abandoned atomic.Int64
	// mu guards endpoint, the network endpoint attached to the system (a
	// started remote), if any; Shutdown stops it after the actors'
	// goroutines.
	mu       sync.Mutex
	endpoint Endpoint
}

// Endpoint is a network face of a System (a remote endpoint): something
// Shutdown must stop once the actors' goroutines are done.
type Endpoint interface {
	// Stop closes the endpoint, within timeout.
	Stop(timeout time.Duration)
}

// Attach makes e the system's endpoint; it reports false, attaching
// nothing, when the system has one already.
func (s *System) Attach(e Endpoint) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.endpoint != nil {
		return false
	}
	s.endpoint = e
	return true
}

// Detach forgets e if it is the system's endpoint (one that failed to
// start).
func (s *System) Detach(e Endpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.endpoint == e {
		s.endpoint = nil
	}
}

// Endpoint is the endpoint attached to the system, nil when none is.
func (s *System) Endpoint() Endpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endpoint
}

// ActorSystem is the protoactor system underneath, for the packages that
// extend it (a remote endpoint, a registry lookup).
func (s *System) ActorSystem() *actor.ActorSystem { return s.as }

// Alive reports whether the actor with PID id is running in this process.
// A repair asks it of the actors whose Terminated may be the very message
// that was lost.
func (s *System) Alive(id string) bool {
	_, ok := s.as.ProcessRegistry.GetLocal(id)
	return ok
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
func (s *System) Go(f func(), onPanic func(reason any, stack []byte)) *Goroutine {
	g := &Goroutine{sys: s}
	s.wg.Add(1)
	go func() {
		defer g.exit()
		defer panics.Recover(func(err error) {
			pe := err.(*panics.Error)
			s.logger.Error("goroutine panic", "reason", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
			if onPanic != nil {
				onPanic(pe.Value, pe.Stack)
			}
		})
		f()
	}()
	return g
}

// Goroutine is one goroutine started with System.Go.
type Goroutine struct {
	sys *System
	mu  sync.Mutex
	// abandoned and exited say which of Abandon and exit came first.
	abandoned, exited bool
}

// Abandon stops Shutdown from waiting for g: its owner gave up on it (a
// tool that ignored its context past the grace period) and has already
// answered for it. g still counts in Abandoned until it returns.
func (g *Goroutine) Abandon() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.abandoned || g.exited {
		return
	}
	g.abandoned = true
	g.sys.abandoned.Add(1)
	g.sys.wg.Done()
}

func (g *Goroutine) exit() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.exited = true
	if g.abandoned {
		g.sys.abandoned.Add(-1)
		return
	}
	g.sys.wg.Done()
}

// Abandoned is the number of abandoned goroutines still running.
func (s *System) Abandoned() int { return int(s.abandoned.Load()) }

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

// remoteStopTimeout bounds how long Shutdown waits for the remote
// endpoint when ctx sets no sooner deadline.
const remoteStopTimeout = 15 * time.Second

// Shutdown waits for the goroutines actors started (they end once their
// actors cancelled them), stops the remote endpoint if one was started
// (bounded by ctx's deadline, at most remoteStopTimeout, at least a short
// grace), and then shuts the actor system down. Stop the tree with Stop
// first: protoactor's own Shutdown stops no actors.
func (s *System) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("shutdown: goroutines still running: %w", ctx.Err())
	}
	if n := s.Abandoned(); n > 0 {
		s.logger.Warn("shutdown: abandoned goroutines still running", "count", n)
	}
	if r := s.Endpoint(); r != nil {
		timeout := remoteStopTimeout
		if d, ok := ctx.Deadline(); ok {
			timeout = min(max(time.Until(d), 500*time.Millisecond), remoteStopTimeout)
		}
		r.Stop(timeout)
	}
	s.as.Shutdown()
	return err
}
