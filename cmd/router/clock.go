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
// clock, moved to Redis' when the two differ by clockTolerance or more.
// Each replica compares stamps another wrote with its own now: a replica
// 5 minutes ahead read a resolve notified a moment ago as 5 minutes old,
// did not ask Alertmanager whether a lagging HA peer's copy of the alert
// still fired, and paged again after the resolve (an audit, with replicas
// at +330 s and +600 s); one behind read a "resolving" mark as fresh for
// 5 minutes past its grace. On one reference, their stamps agree whatever
// their hosts' clocks say. Slack's request signatures are still checked on
// this host's clock (Slack's own), and the offset is logged and exported
// (alertrouter_clock_offset_seconds) so that the host's NTP gets fixed.
type storeClock struct {
	offset atomic.Int64 // Redis minus this host, in ns; 0 within clockTolerance
	local  func() time.Time
	gauge  prometheus.Gauge
	logs   logthrottle.Throttle
}

func newStoreClock(reg prometheus.Registerer) *storeClock {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "alertrouter_clock_offset_seconds",
		Help: "Redis' clock minus this host's, as the store probe last measured it (round trip halved). At 1 s or more either way the router stamps its shared state with Redis' time, so replicas agree; fix the host's NTP.",
	})
	if reg != nil {
		reg.MustRegister(g)
	}
	return &storeClock{local: time.Now, gauge: g, logs: logthrottle.Throttle{Every: time.Hour}}
}

// Now is the host's time moved by the offset last measured.
func (c *storeClock) Now() time.Time {
	return c.local().Add(time.Duration(c.offset.Load()))
}

// check measures st's clock against the host's (a store that has none, the
// embedded memory store, is the host's own). A reading whose round trip
// took over half clockTolerance is not trusted: the offset stays.
func (c *storeClock) check(ctx context.Context, st store.Store, logger *slog.Logger) {
	r, ok := st.(timeReader)
	if !ok {
		c.offset.Store(0)
		c.gauge.Set(0)
		return
	}
	t0 := c.local()
	remote, err := r.Time(ctx)
	t1 := c.local()
	if err != nil || t1.Sub(t0) > clockTolerance/2 {
		return
	}
	off := remote.Sub(t0.Add(t1.Sub(t0) / 2))
	c.gauge.Set(off.Seconds())
	if off > -clockTolerance && off < clockTolerance {
		c.offset.Store(0)
		return
	}
	c.offset.Store(int64(off))
	c.logs.Log(ctx, logger, slog.LevelWarn, "offset",
		"this host's clock differs from Redis' by a second or more: the router stamps its shared state (dedup markers, flap histories, hand resolves, silences) with Redis' time so that replicas agree; fix this host's NTP — Slack's click signatures are still checked on its clock, refused beyond 5 minutes",
		"redis_minus_host", off.Round(time.Millisecond).String())
}
