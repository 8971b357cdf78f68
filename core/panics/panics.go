package panics

import (
	"fmt"
	"runtime/debug"
	"sync"
)

// Error is a recovered panic: the value passed to panic and the stack of
// the goroutine that panicked.
type Error struct {
	Value any
	Stack []byte
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is itself an error, so callers
// can match it with errors.Is and errors.As.
func (e *Error) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Recover, deferred directly, stops a panic of the deferring goroutine and
// hands it to report as an *Error; it does nothing when there is no panic.
// report may be nil, which drops the panic (use that only where the caller
// learns of the failure some other way).
func Recover(report func(error)) {
	r := recover()
	if r == nil {
		return
	}
	if report != nil {
		report(&Error{Value: r, Stack: debug.Stack()})
	}
}

// Catch, deferred directly, stores a panic of the deferring function in
// *errp as an *Error, so the function returns it like any other error.
func Catch(errp *error) {
	r := recover()
	if r == nil {
		return
	}
	*errp = &Error{Value: r, Stack: debug.Stack()}
}

// Go runs f in a new goroutine; a panic in f is recovered and handed to
// report (see Recover).
func Go(f func(), report func(error)) {
	go func() {
		defer Recover(report)
		f()
	}()
}

// GoGroup is Go for a goroutine counted in wg, which is marked done after
// report has returned.
func GoGroup(wg *sync.WaitGroup, f func(), report func(error)) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer Recover(report)
		f()
	}()
}
