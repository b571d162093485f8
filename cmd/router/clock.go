package main

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/internal/logthrottle"
	"github.com/alertrouter/alertrouter/store"
)

// clockTolerance is the offset from Redis' clock below which a replica
// keeps its own: NTP keeps hosts within milliseconds, and a round trip
// measures no better.
const clockTolerance = time.Second

// timeReader is a store that reads its own clock (store.Redis).
type timeReader interface {
	Time(ctx context.Context) (time.Time, error)
}

// storeClock is the clock the router stamps the state its replicas share
// with — dedup markers and their resolve times, flap histories, hand
// resolves and their "resolving" grace, silences' times: this host's
// clock, or Redis' when the two differ by clockTolerance or more. Each
// replica compares stamps another wrote with its own now: a replica 5
// minutes ahead read a resolve notified a moment ago as 5 minutes old, did
// not ask Alertmanager whether a lagging HA peer's copy of the alert still
// fired, and paged again after the resolve (an audit, with replicas at
// +330 s and +600 s); one behind read a "resolving" mark as fresh for 5
// minutes past its grace. On one reference, their stamps agree whatever
// their hosts' clocks say. Redis' time is carried between probes by this
// process's monotonic clock, which a step of the host's clock does not
// move: a host stepped between two probes stamps Redis' time at once, not
// the old offset on its new clock for up to a probe interval (a review).
// Decisions (time intervals) stay on the host's clock, as Alertmanager's
// do (Pipeline.DecideNow), and so do Slack's request signatures; the
// offset is logged and exported (alertrouter_clock_offset_seconds) so
// that the clock at fault gets fixed.
type storeClock struct {
	anchor atomic.Pointer[clockAnchor] // nil until a probe read Redis' clock
	local  func() time.Time
	gauge  prometheus.Gauge
	logs   logthrottle.Throttle
}

// clockAnchor is Redis' time as a probe read it, and this process's
// monotonic reading then.
type clockAnchor struct {
	redis, mono time.Time
}

func newStoreClock(reg prometheus.Registerer) *storeClock {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "alertrouter_clock_offset_seconds",
		Help: "Redis' clock minus this host's, as the store probe last measured it (round trip halved). At 1 s or more either way the router stamps its shared state with Redis' time, so replicas agree; fix the clock at fault (the host's NTP, or Redis').",
	})
	if reg != nil {
		reg.MustRegister(g)
	}
	return &storeClock{local: time.Now, gauge: g, logs: logthrottle.Throttle{Every: time.Hour}}
}

// Now is the host's time, or Redis' (as last read, carried on by the
// monotonic clock) when the host's is clockTolerance or more away from it.
func (c *storeClock) Now() time.Time {
	now := c.local()
	a := c.anchor.Load()
	if a == nil {
		return now
	}
	ref := a.redis.Add(time.Since(a.mono))
	if d := now.Round(0).Sub(ref); d > -clockTolerance && d < clockTolerance {
		return now
	}
	return ref
}

// check reads st's clock (a store that has none, the embedded memory
// store, leaves the host's). A reading whose round trip took over half
// clockTolerance is not trusted: the anchor stays.
func (c *storeClock) check(ctx context.Context, st store.Store, logger *slog.Logger) {
	r, ok := st.(timeReader)
	if !ok {
		c.anchor.Store(nil)
		c.gauge.Set(0)
		return
	}
	m0 := time.Now()
	remote, err := r.Time(ctx)
	rtt := time.Since(m0)
	if err != nil || rtt > clockTolerance/2 {
		return
	}
	mid := m0.Add(rtt / 2)
	c.anchor.Store(&clockAnchor{redis: remote, mono: mid})
	off := remote.Sub(c.local().Add(-time.Since(mid)).Round(0))
	c.gauge.Set(off.Seconds())
	if off > -clockTolerance && off < clockTolerance {
		return
	}
	c.logs.Log(ctx, logger, slog.LevelWarn, "offset",
		"this host's clock and Redis' differ by a second or more: the router stamps its shared state (dedup markers, flap histories, hand resolves, silences) with Redis' time so that replicas agree, and keeps time intervals on this host's; fix the clock at fault (this host's NTP, or Redis') — Slack's click signatures are checked on this host's clock, refused beyond 5 minutes",
		"redis_minus_host", off.Round(time.Millisecond).String())
}
