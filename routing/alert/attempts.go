package alert

import (
	"context"
	"errors"
	"sync/atomic"
)

// attemptsKey is the context key of a delivery's attempt counter.
type attemptsKey struct{}

// CountAttempts returns a context in which the notifier's retries
// (notify.Retry's attempts after the first of each call) are counted in c:
// a delivery that sent made 1 + that many attempts. A notification that
// takes several API calls (Slack's resolve: the parent's edit and a
// thread reply) is one attempt while none of them is retried.
func CountAttempts(ctx context.Context, c *atomic.Int64) context.Context {
	return context.WithValue(ctx, attemptsKey{}, c)
}

// Retried counts one retry in ctx's counter (CountAttempts), if it has
// one.
func Retried(ctx context.Context) {
	if c, ok := ctx.Value(attemptsKey{}).(*atomic.Int64); ok {
		c.Add(1)
	}
}

// attemptsError carries how many attempts a failed delivery made.
type attemptsError struct {
	err      error
	attempts int
}

func (e *attemptsError) Error() string { return e.err.Error() }
func (e *attemptsError) Unwrap() error { return e.err }

// WithAttempts wraps err, the failure of a delivery, with how many attempts
// it made (n ≤ 0 or a nil err: err unchanged). Retryable and Permanent see
// through it.
func WithAttempts(err error, n int) error {
	if err == nil || n <= 0 {
		return err
	}
	return &attemptsError{err: err, attempts: n}
}

// AttemptsOf returns the attempts err carries through WithAttempts (0:
// none).
func AttemptsOf(err error) int {
	var a *attemptsError
	if errors.As(err, &a) {
		return a.attempts
	}
	return 0
}
