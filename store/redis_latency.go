package store

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/common/model"
)

// SlowAnswer tells a Redis that answers, only slower than
// store.redis.read_timeout (a distant one: another zone or region, a
// congested link), from one that answers nothing. err is what a command of
// a client built from cfg failed with; when it is a read's timeout (not a
// dial's), SlowAnswer sends one PING through a client of cfg whose read
// timeout is what is left of ctx, without retries, and returns how long
// its answer took. ok is false when err was no read timeout or that PING
// failed too (Redis stalled, down or refusing). An audit: a Redis 100 ms
// away with a 50 ms read_timeout was probed "i/o timeout" and logged as
// "answered nothing" — stalled — while it answered every command.
func SlowAnswer(ctx context.Context, cfg RedisConfig, err error) (time.Duration, bool) {
	var de *dialError
	if err == nil || !timedOut(err) || errors.As(err, &de) {
		return 0, false
	}
	deadline, has := ctx.Deadline()
	if !has {
		return 0, false
	}
	cfg.ReadTimeout = model.Duration(time.Until(deadline))
	cfg.MaxRetries = -1
	r, nerr := NewRedis(cfg, nil, nil)
	if nerr != nil {
		return 0, false
	}
	defer r.Close()
	// The first PING dials: its answer takes the connection's setup too.
	// A second one, on that connection, is the round trip alone.
	if pingAll(ctx, r.client) != nil {
		return 0, false
	}
	start := time.Now()
	if pingAll(ctx, r.client) != nil {
		return 0, false
	}
	return time.Since(start), true
}

// PingTime sends PING through the pooled connections twice and returns
// how long the second took: the round trip to Redis (to its slowest master
// on a Cluster) without a connection's setup.
func (r *Redis) PingTime(ctx context.Context) (time.Duration, error) {
	if err := r.Ping(ctx); err != nil {
		return 0, err
	}
	start := time.Now()
	if err := r.Ping(ctx); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
