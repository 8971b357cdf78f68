package kernel

import (
	"fmt"
	"sync/atomic"
)

// Fault is a panic injected once into one handler, for tests of the
// repairs: Load reports whether it fired, and Done closes when it did, so a
// test whose awaited event comes from the very handler an after-fault
// follows can wait for the fault before it clears it.
type Fault struct {
	atomic.Bool
	Done chan struct{}
}

// InjectFault makes the repair middleware panic once in the handler of the
// actor of kind for a message whose type prints (%T) as msgType, before
// the handler runs or, with after, once it returned. clear removes it.
// Only one fault is armed at a time per process, so tests that inject one
// must not run in parallel with each other.
func InjectFault(kind, msgType string, after bool) (f *Fault, clear func()) {
	f = &Fault{Done: make(chan struct{})}
	hook := func(k string, msg any, a bool) {
		if k != kind || a != after || fmt.Sprintf("%T", msg) != msgType {
			return
		}
		if f.CompareAndSwap(false, true) {
			close(f.Done)
			panic("injected fault in " + msgType)
		}
	}
	FaultHook.Store(&hook)
	return f, func() { FaultHook.Store(nil) }
}
