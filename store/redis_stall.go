package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sony/gobreaker/v2"
)

// A stalled Redis — paused, partitioned without a reset, blocked — takes
// connections and answers nothing: every command waits out read_timeout
// (and its retry) before it fails. A webhook makes several round trips, so
// each one waited 10–15 s before failing open (a review: 12 s a webhook at
// the README's timeouts), every page that late, while a Redis that is down
// answers its refusal at once. stallBreaker is a circuit breaker
// (gobreaker) on the commands of a single node, of Sentinel's master, or
// of one node of a Cluster (each its own, so one stalled node fails at
// once the commands of its own slots only) that trips on those timeouts
// alone, once Redis has answered nothing for stallTrip (two commands'
// whole waits) after the first timeout, so a stall the build before rode
// out (a slow command, a pause of a few seconds, a Sentinel failover) is
// waited out as before — failing open sooner sent duplicates where waiting
// sent none (reviews: 29 duplicate triggers in a 3 s pause tripping at the
// first timeout, 79 in a 5 s one tripping one command's wait after it).
// Tripped, every command fails at once, as
// Redis unavailable (ErrUnavailable: fail open or closed decides what
// follows), without being sent, and a background PING every stallRetry —
// no webhook's command — tries again; the first answered closes the
// breaker. A refused connection, an error reply or the caller's own
// deadline never trips it.
type stallBreaker struct {
	cb *gobreaker.CircuitBreaker[struct{}]
	// trip is stallTrip for this client.
	trip time.Duration
	// since is when a timeout was first seen with no answer after it
	// (unix ns; 0: none).
	since atomic.Int64
	// ping sends the background PING (set once the client is built).
	ping func(context.Context) error
}

// stallRetry is how often a tripped stallBreaker tries Redis again: after
// Redis answers again, up to this long more of failing open (or closed).
const stallRetry = 250 * time.Millisecond

// errStalled marks the commands a tripped stallBreaker failed without
// sending them (unavailable reads it as Redis unavailable).
var errStalled = fmt.Errorf("not sent: Redis has answered nothing for two commands' waits (2 × read_timeout × (max_retries + 1)) and is tried again every %s until it answers (stalled: paused, partitioned or blocked — or answering later than read_timeout, a distant Redis: `router check-config --probe` tells which)", stallRetry)

// Outcomes of a command for the breaker: a timeout with the caller's time
// left counts against Redis once the stall has lasted stallTrip; the first
// ones, and the caller's own deadline, count for nothing.
var (
	errTimedOut   = errors.New("redis timed out")
	errNotYet     = errors.New("redis timed out, not for long yet")
	errCallerGone = errors.New("caller's deadline or cancellation")
)

// stallTrip is how long Redis must answer nothing, after the first
// timeout, before the breaker trips: two commands' whole waits, a read
// timeout for each attempt, as go-redis reads the options (0: a 3 s
// timeout, 3 retries; -1: no retry). A webhook whose read timed out goes
// on to its claims, which the build before the breaker sent about that
// long into the stall: a stall shorter than that, once over, took them, and
// they kept a replica's webhooks from sending what another one sent — a
// review: tripping one command's wait after the first timeout sent 79 and
// 86 duplicate triggers in 5 s pauses, where waiting sent none.
func stallTrip(readTimeout time.Duration, maxRetries int) time.Duration {
	if readTimeout == 0 {
		readTimeout = 3 * time.Second
	}
	switch maxRetries {
	case 0:
		maxRetries = 3
	case -1:
		maxRetries = 0
	}
	return 2 * readTimeout * time.Duration(maxRetries+1)
}

// newStallBreaker returns the breaker of a client, tripping after trip
// (stallTrip) of silence, counting each trip on tripped and logging trips
// and recoveries; set its ping before the client's first command.
func newStallBreaker(logger *slog.Logger, trip time.Duration, tripped func()) *stallBreaker {
	h := &stallBreaker{trip: trip}
	h.cb = gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        "redis",
		MaxRequests: 1,
		Timeout:     stallRetry,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 1 },
		IsExcluded:  func(err error) bool { return errors.Is(err, errCallerGone) || errors.Is(err, errNotYet) },
		OnStateChange: func(_ string, from, to gobreaker.State) {
			switch {
			case from == gobreaker.StateClosed && to == gobreaker.StateOpen:
				tripped()
				logger.Warn("redis has answered nothing within read_timeout for "+trip.String()+" (stalled, or slower than read_timeout: `router check-config --probe` tells which): its commands fail at once as unavailable (fail open or closed), not sent, until a PING every "+stallRetry.String()+" gets an answer", "component", "store")
				go h.probe()
			case to == gobreaker.StateClosed:
				logger.Info("redis answers again: commands are sent again", "component", "store")
			}
		},
	})
	return h
}

// addStallBreaker hooks a stall breaker (newStallBreaker) onto c, its
// PING sent through c.
func addStallBreaker(c redis.UniversalClient, logger *slog.Logger, trip time.Duration, tripped func()) {
	b := newStallBreaker(logger, trip, tripped)
	b.ping = func(ctx context.Context) error { return c.Ping(ctx).Err() }
	c.AddHook(b)
}

// probe PINGs Redis every stallRetry, through the breaker, until it
// closes or the client is closed.
func (h *stallBreaker) probe() {
	ctx := context.WithValue(context.Background(), probing{}, true)
	for {
		time.Sleep(stallRetry)
		if h.cb.State() == gobreaker.StateClosed {
			return
		}
		if err := h.ping(ctx); errors.Is(err, redis.ErrClosed) {
			return
		}
	}
}

// probing marks the context of the breaker's own PING: the one command
// let through while it is tripped.
type probing struct{}

// inBreaker marks the context of a command the breaker let through: the
// commands go-redis sends inside it (a new connection's HELLO, AUTH,
// SELECT, CLIENT SETINFO) are part of it, not requests of their own — one
// of them refused as a second request while the first was let through
// (half-open) failed that first at once, and that failure, no timeout,
// closed the breaker with Redis still stalled.
type inBreaker struct{}

// run runs do (one command or pipeline, with ctx) through the breaker: its
// error, or errStalled without running it while the breaker is tripped.
func (h *stallBreaker) run(ctx context.Context, do func(context.Context) error) error {
	if ctx.Value(inBreaker{}) != nil {
		return do(ctx)
	}
	if ctx.Value(probing{}) == nil && h.cb.State() != gobreaker.StateClosed {
		return fmt.Errorf("redis: %w", errStalled)
	}
	inner := context.WithValue(ctx, inBreaker{}, true)
	var err error
	_, berr := h.cb.Execute(func() (struct{}, error) {
		err = do(inner)
		return struct{}{}, h.judge(ctx, err)
	})
	if errors.Is(berr, gobreaker.ErrOpenState) || errors.Is(berr, gobreaker.ErrTooManyRequests) {
		return fmt.Errorf("redis: %w", errStalled)
	}
	return err
}

// judge is what err, a command's with ctx, says of Redis to the breaker.
func (h *stallBreaker) judge(ctx context.Context, err error) error {
	switch {
	case err == nil || !timedOut(err) && !errors.Is(err, redis.ErrPoolTimeout) && !errors.Is(err, redis.ErrClosed):
		// Answered, or failed at once: not stalled. (A pool timeout is
		// the stall too: every connection waits on Redis.)
		h.since.Store(0)
		return nil
	case callerGone(ctx) || errors.Is(err, redis.ErrClosed):
		// The caller's own deadline, or the client closed (a reload
		// replaced it: its PING read as an answer closed the breaker, and
		// logged Redis back, with Redis still stalled).
		return errCallerGone
	}
	now := time.Now().UnixNano()
	if h.since.CompareAndSwap(0, now) || now-h.since.Load() < int64(h.trip) {
		return errNotYet
	}
	return errTimedOut
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
