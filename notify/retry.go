package notify

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// RetryPolicy says how often and how patiently Retry tries.
type RetryPolicy struct {
	// MaxAttempts caps the attempts, the first included (≤ 0: 5).
	MaxAttempts int
	// InitialBackoff is the base wait before the second attempt (≤ 0: 200ms).
	InitialBackoff time.Duration
	// MaxBackoff caps the base wait between attempts (≤ 0: 10s).
	MaxBackoff time.Duration
	// Wait waits d or until ctx is done, returning ctx.Err() in that case.
	// Nil uses a timer; tests inject a recorder so no test sleeps.
	Wait func(ctx context.Context, d time.Duration) error
}

// DefaultRetryPolicy returns 5 attempts with backoff from 200ms up to 10s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 5, InitialBackoff: 200 * time.Millisecond, MaxBackoff: 10 * time.Second}
}

func (p RetryPolicy) isZero() bool {
	return p.MaxAttempts == 0 && p.InitialBackoff == 0 && p.MaxBackoff == 0 && p.Wait == nil
}

func (p RetryPolicy) normalized() RetryPolicy {
	d := DefaultRetryPolicy()
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = d.InitialBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = d.MaxBackoff
	}
	if p.MaxBackoff < p.InitialBackoff {
		p.MaxBackoff = p.InitialBackoff
	}
	if p.Wait == nil {
		p.Wait = Sleep
	}
	return p
}

// Sleep waits d, or until ctx ends (its error); the default
// RetryPolicy.Wait.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Backoff returns the wait before attempt number attempt+1 (attempt ≥ 1):
// the base InitialBackoff·2^(attempt-1), capped at MaxBackoff, with "equal
// jitter" — a uniformly random wait in [base/2, base] — so that replicas
// retrying the same failure spread out instead of hitting the API together.
func (p RetryPolicy) Backoff(attempt int) time.Duration {
	p = p.normalized()
	base := p.InitialBackoff
	for i := 1; i < attempt && base < p.MaxBackoff; i++ {
		base *= 2
	}
	base = min(base, p.MaxBackoff)
	half := base / 2
	return half + rand.N(base-half+1)
}

// retryAfterError carries the wait the remote side asked for.
type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// RetryAfter wraps err with the wait the remote side asked for (an HTTP
// Retry-After); Retry waits at least d before the next attempt. A nil err
// stays nil.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, after: d}
}

// RetryAfterOf returns the wait carried by err through RetryAfter.
func RetryAfterOf(err error) (time.Duration, bool) {
	var ra *retryAfterError
	if errors.As(err, &ra) {
		return ra.after, true
	}
	return 0, false
}

// unknownOutcomeError marks the failure of an attempt that may have taken
// effect (OutcomeUnknown; held: OutcomeUnknownHeld).
type unknownOutcomeError struct {
	err  error
	held bool
}

func (e *unknownOutcomeError) Error() string { return e.err.Error() }
func (e *unknownOutcomeError) Unwrap() error { return e.err }

// OutcomeUnknown wraps err, the failure of an attempt that is not
// idempotent and may have taken effect all the same: its request was sent
// and no answer said what became of it (a timeout, a connection lost after
// the request was written). Retry does not try it again — a second attempt
// could do it twice (a Slack post shows twice: its API takes no
// idempotency key) — but the error stays retryable, so the webhook is
// answered 5xx and Alertmanager's retry sends it later: at most one
// duplicate per Alertmanager attempt. A nil err stays nil.
func OutcomeUnknown(err error) error {
	if err == nil {
		return nil
	}
	return &unknownOutcomeError{err: err}
}

// OutcomeUnknownHeld is OutcomeUnknown for an attempt that most likely
// took effect: its request reached the endpoint and no answer came in time
// (a timeout, a connection lost after the request was written), or the
// endpoint said it may have acted, or answered a success the router cannot
// read as one (a 2xx that is not Slack's "ok"). The dispatch core keeps
// its claims until they expire (dedup.claim_ttl), so Alertmanager's
// retries within it do not do it again: a Slack webhook answering late drew
// one ticket 28 times in 87 s, a message per retry (an audit). A proxy's
// 503 without Retry-After is OutcomeUnknown alone: it most likely
// forwarded nothing, and holding its claims kept a ticket from posting
// once the fault cleared within claim_ttl (a review).
func OutcomeUnknownHeld(err error) error {
	if err == nil {
		return nil
	}
	return &unknownOutcomeError{err: err, held: true}
}

// HoldsClaims reports whether err went through OutcomeUnknownHeld.
func HoldsClaims(err error) bool {
	var u *unknownOutcomeError
	return errors.As(err, &u) && u.held
}

// IsOutcomeUnknown reports whether err went through OutcomeUnknown or
// OutcomeUnknownHeld.
func IsOutcomeUnknown(err error) bool {
	var u *unknownOutcomeError
	return errors.As(err, &u)
}

// laterError marks a failure to retry later, not within the webhook
// (Later).
type laterError struct{ err error }

func (e *laterError) Error() string { return e.err.Error() }
func (e *laterError) Unwrap() error { return e.err }

// Later wraps err, the failure of an attempt that sent nothing and should
// not be tried again within this webhook — a Slack post whose turn on a
// rate-limited channel is far off: waiting would hold the webhook's slot
// for nothing. Retry returns it at once; it stays retryable, so the
// webhook is answered 5xx and Alertmanager's retry sends it later. A nil
// err stays nil.
func Later(err error) error {
	if err == nil {
		return nil
	}
	return &laterError{err: err}
}

// IsLater reports whether err went through Later.
func IsLater(err error) bool {
	var l *laterError
	return errors.As(err, &l)
}

// Retry calls attempt until it succeeds, fails permanently
// (alert.Permanent), with an unknown outcome (OutcomeUnknown) or for later
// (Later), the
// policy's attempts run out, or the next wait would end past ctx's
// deadline. Between attempts it waits Backoff, or the error's
// RetryAfter when that is longer. ctx is checked before every attempt. Retry
// returns nil or the last attempt's error, which stays retryable unless the
// attempt said otherwise, so the caller (and Alertmanager) can try again
// later; a Retry-After longer than the time left is not waited for.
func Retry(ctx context.Context, policy RetryPolicy, attempt func(ctx context.Context) error) error {
	p := policy.normalized()
	var last error
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			if last != nil {
				return last
			}
			return err
		}
		if n > 1 {
			alert.Retried(ctx)
		}
		last = attempt(ctx)
		if last == nil || !alert.Retryable(last) || IsOutcomeUnknown(last) || IsLater(last) || n >= p.MaxAttempts {
			return last
		}
		wait := p.Backoff(n)
		if ra, ok := RetryAfterOf(last); ok && ra > wait {
			wait = ra
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return last
		}
		if err := p.Wait(ctx, wait); err != nil {
			return last
		}
	}
}
