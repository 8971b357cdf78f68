package kernel

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// Crashed is what a panic in an actor's handler becomes. The repair
// middleware recovers the panic and delivers a Crashed to the same actor
// at once, before any other message, so its repair method brings it back
// to a known-good state (open tool calls answered, slots released, the
// requester of the lost message told) instead of carrying on from
// whatever the handler left half done. A panic inside the repair itself
// is not recovered: the supervisor stops the actor and its parent, which
// watches it, turns the loss into replies.
type Crashed struct {
	// Actor is the kind of actor that crashed ("executor", "scheduler", …).
	Actor string
	// Message is the Go type of the message whose handler panicked.
	Message string
	// Sender is that message's sender, nil for a Send.
	Sender *actor.PID
	// Lost is the message itself: its handler did not finish, so the
	// repair may have to answer it (a request) or apply what it said (a
	// reply it was waiting for).
	Lost   any
	Reason string
	Stack  string
}

// Error is the crash as a one-line reason for a result the model or the
// user reads.
func (c *Crashed) Error() string {
	return fmt.Sprintf("internal error in %s while handling %s: %s", c.Actor, c.Message, c.Reason)
}

// messageStarter is an actor that keeps per-message state (has this
// message been answered?) for its repair; the middleware resets it before
// each message, so it is right even when the handler never ran.
type messageStarter interface {
	BeginMessage()
}

// FaultHook, when set, is called by the repair middleware around every
// handler (after is false before it runs, true once it returned), and
// before the repair of a crash. Tests set
// it to inject a panic at a chosen handler; it is nil in production.
var FaultHook atomic.Pointer[func(kind string, msg any, after bool)]

// WithRepair is the props option every actor of the tree is spawned with:
// its receive middleware turns a handler's panic into a *Crashed for the
// actor's repair. kind names the actor in logs and in the Crashed.
func WithRepair(kind string, log *slog.Logger) actor.PropsOption {
	return actor.WithReceiverMiddleware(func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			if _, repairing := env.Message.(*Crashed); !repairing {
				defer func() {
					r := recover()
					if r == nil {
						return
					}
					crash := &Crashed{Actor: kind, Message: fmt.Sprintf("%T", env.Message), Sender: env.Sender, Lost: env.Message,
						Reason: fmt.Sprint(r), Stack: string(debug.Stack())}
					log.Error("actor handler panic; repairing", "actor", kind, "message", crash.Message,
						"reason", crash.Reason, "stack", crash.Stack)
					if h := FaultHook.Load(); h != nil {
						(*h)(kind, crash, false) // a test may fail the repair too
					}
					next(c, &actor.MessageEnvelope{Header: env.Header, Message: crash, Sender: env.Sender})
				}()
			}
			if _, repairing := env.Message.(*Crashed); !repairing {
				if a, ok := c.Actor().(messageStarter); ok {
					a.BeginMessage()
				}
			}
			if h := FaultHook.Load(); h != nil {
				(*h)(kind, env.Message, false)
			}
			next(c, env)
			if h := FaultHook.Load(); h != nil {
				(*h)(kind, env.Message, true)
			}
		}
	})
}

// Props is the one way an actor of the tree is made: producer with the
// repair middleware for kind (logging to log), and children that fail
// stopped, never restarted (see StopOnFailure), plus opts. Spawning
// through anything else would leave a handler's panic unrepaired.
func Props(kind string, log *slog.Logger, producer func() actor.Actor, opts ...actor.PropsOption) *actor.Props {
	all := append([]actor.PropsOption{actor.WithSupervisor(StopOnFailure), WithRepair(kind, log)}, opts...)
	return actor.PropsFromProducer(producer, all...)
}

// Answers records whether the message an actor is handling has its answer:
// the reply was sent, or another actor owns it now. The repair of a crash
// in that handler answers the message only when it has none yet. An actor
// embeds it; the repair middleware clears it before each message, so it is
// right even for a handler that never ran.
type Answers struct{ answered bool }

// BeginMessage clears the record; the repair middleware calls it.
func (a *Answers) BeginMessage() { a.answered = false }

// Answer records that the current message has its answer.
func (a *Answers) Answer() { a.answered = true }

// Answered reports whether the current message has its answer.
func (a *Answers) Answered() bool { return a.answered }
