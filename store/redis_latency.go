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
// dial's), SlowAnswer sends PING through a client of cfg whose read
// timeout is what is left of ctx, without retries, and returns how long
// its answer took (answered), or how long it waited in vain for one (not
// answered; 0 when err was no read timeout and nothing was asked). An
// audit: a Redis 100 ms away with a 50 ms read_timeout was probed "i/o
// timeout" and logged as "answered nothing" — stalled — while it answered
// every command.
func SlowAnswer(ctx context.Context, cfg RedisConfig, err error) (d time.Duration, answered bool) {
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
	start := time.Now()
	if pingAll(ctx, r.client) != nil {
		return time.Since(start), false
	}
	start = time.Now()
	if pingAll(ctx, r.client) != nil {
		return time.Since(start), false
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
