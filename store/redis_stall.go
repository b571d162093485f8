package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sony/gobreaker/v2"
)

// A stalled Redis — paused, partitioned without a reset, blocked on a long
// command — takes connections and answers nothing: every command waits out
// read_timeout (and its retry) before it fails. A webhook makes several
// round trips, so each one waited 10–15 s before failing open (a review:
// 12 s a webhook at the README's timeouts), every page that late, while a
// Redis that is down answers its refusal at once. stallBreaker is a
// circuit breaker (gobreaker) on the commands of a single node, of
// Sentinel's master, or of one node of a Cluster (each its own, so one
// stalled node fails at once the commands of its own slots only) that
// trips on that timeout alone: once a command or pipeline
// times out with its caller's time left, the commands after it fail at
// once, as Redis unavailable (ErrUnavailable: fail open or closed decides
// what follows), without being sent. Every stallRetry one command is let
// through to try again — it may wait out the timeout, the others still
// fail at once meanwhile — and the first that gets an answer closes the
// breaker. A refused connection, an error reply or the caller's own
// deadline never trips it.
type stallBreaker struct {
	cb *gobreaker.CircuitBreaker[struct{}]
}

// stallRetry is how long a tripped stallBreaker fails commands at once
// before it lets one through to try again: after Redis answers again, up
// to this long more of failing open (or closed).
const stallRetry = 250 * time.Millisecond

// errStalled marks the commands a tripped stallBreaker failed without
// sending them (unavailable reads it as Redis unavailable).
var errStalled = fmt.Errorf("not sent: Redis timed out on an earlier command and is tried again once per %s until it answers (stalled: paused, partitioned or blocked)", stallRetry)

// Outcomes of a command for the breaker: a timeout with the caller's time
// left counts against Redis; the caller's own deadline counts for nothing.
var (
	errTimedOut   = errors.New("redis timed out")
	errCallerGone = errors.New("caller's deadline or cancellation")
)

// newStallBreaker returns the breaker, counting each trip on tripped and
// logging trips and recoveries.
func newStallBreaker(logger *slog.Logger, tripped func()) *stallBreaker {
	return &stallBreaker{cb: gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        "redis",
		MaxRequests: 1,
		Timeout:     stallRetry,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 1 },
		IsExcluded:  func(err error) bool { return errors.Is(err, errCallerGone) },
		OnStateChange: func(_ string, from, to gobreaker.State) {
			switch {
			case from == gobreaker.StateClosed && to == gobreaker.StateOpen:
				tripped()
				logger.Warn("redis timed out: its commands fail at once as unavailable (fail open or closed) until one gets an answer, tried once per "+stallRetry.String(), "component", "store")
			case to == gobreaker.StateClosed:
				logger.Info("redis answers again: commands are sent again", "component", "store")
			}
		},
	})}
}

// inBreaker marks the context of a command the breaker let through: the
// commands go-redis sends inside it (a new connection's HELLO, AUTH,
// SELECT, CLIENT SETINFO) are part of it, not requests of their own — one
// of them refused as a second request while the first is let through
// (half-open) failed that first at once, and that failure, no timeout,
// closed the breaker with Redis still stalled.
type inBreaker struct{}

// run runs do (one command or pipeline, with ctx) through the breaker: its
// error, or errStalled without running it while the breaker is tripped.
func (h *stallBreaker) run(ctx context.Context, do func(context.Context) error) error {
	if ctx.Value(inBreaker{}) != nil {
		return do(ctx)
	}
	inner := context.WithValue(ctx, inBreaker{}, true)
	var err error
	_, berr := h.cb.Execute(func() (struct{}, error) {
		err = do(inner)
		switch {
		case err == nil || !timedOut(err):
			return struct{}{}, nil // answered, or failed at once: not stalled
		case callerGone(ctx):
			return struct{}{}, errCallerGone
		}
		return struct{}{}, errTimedOut
	})
	if errors.Is(berr, gobreaker.ErrOpenState) || errors.Is(berr, gobreaker.ErrTooManyRequests) {
		return fmt.Errorf("redis: %w", errStalled)
	}
	return err
}

// DialHook implements redis.Hook.
func (h *stallBreaker) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (h *stallBreaker) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := h.run(ctx, func(ctx context.Context) error { return next(ctx, cmd) })
		if errors.Is(err, errStalled) {
			cmd.SetErr(err)
		}
		return err
	}
}

// ProcessPipelineHook implements redis.Hook.
func (h *stallBreaker) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := h.run(ctx, func(ctx context.Context) error { return next(ctx, cmds) })
		if errors.Is(err, errStalled) {
			for _, c := range cmds {
				c.SetErr(err)
			}
		}
		return err
	}
}

// callerGone reports whether ctx, a command's, has ended or reached its
// deadline: go-redis reads until the caller's deadline when it comes before
// read_timeout (ContextTimeoutEnabled), and that timeout can be seen a
// moment before the context says it is done.
func callerGone(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d.Add(-time.Millisecond))
}
