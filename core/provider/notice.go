package provider

import (
	"context"
	"errors"
	"time"
)

// Detailer is an error that carries more than its message for a person
// who wants it: a provider's raw reply body behind a readable message.
type Detailer interface {
	Detail() string
}

// DetailOf returns the detail of the first error in err's chain that has
// one, or "".
func DetailOf(err error) string {
	for ; err != nil; err = errors.Unwrap(err) {
		if d, ok := err.(Detailer); ok {
			return d.Detail()
		}
	}
	return ""
}

// RetryNotice describes a request about to be sent again.
type RetryNotice struct {
	// Attempt is the number of the attempt about to be made, Of the most
	// there will be (first try included).
	Attempt, Of int
	// Delay is how long it waits first; Reason why the last attempt
	// failed, in words ("429 Too Many Requests").
	Delay  time.Duration
	Reason string
}

type retryKey struct{}

// WithRetryNotice returns a context whose requests tell notify each time
// they are about to be retried, so a frontend can say why it waits.
// notify must not block.
func WithRetryNotice(ctx context.Context, notify func(RetryNotice)) context.Context {
	return context.WithValue(ctx, retryKey{}, notify)
}

// NotifyRetry reports n to ctx's listener, if it has one.
func NotifyRetry(ctx context.Context, n RetryNotice) {
	if f, ok := ctx.Value(retryKey{}).(func(RetryNotice)); ok && f != nil {
		f(n)
	}
}
