package main

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/store"
)

// A replica whose host clock is minutes off stamps the state its replicas
// share with Redis' time (an audit: a replica 5–10 minutes ahead paged
// again for a lagging HA peer's copy sent after the resolve, reading the
// resolve, stamped by another replica, as older than the 5 minutes it asks
// Alertmanager within); within a second it keeps its own; a store with no
// clock (the memory store) is the host's.
func TestTheStoreClockFollowsRedisWhenTheHostIsOff(t *testing.T) {
	srv := redistest.Start(t)
	cfg := store.DefaultRedisConfig()
	cfg.Addrs = []string{srv.Addr()}
	st, err := store.NewRedis(cfg, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for _, tc := range []struct {
		name    string
		host    time.Duration // this host's clock minus the real time
		follows bool
	}{
		{"10 minutes ahead", 10 * time.Minute, true},
		{"6 minutes behind", -6 * time.Minute, true},
		{"200 ms ahead", 200 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			c := newStoreClock(reg)
			c.local = func() time.Time { return time.Now().Add(tc.host) }
			c.check(t.Context(), st, slog.New(slog.DiscardHandler))
			off := c.Now().Sub(time.Now())
			if tc.follows && (off < -clockTolerance || off > clockTolerance) {
				t.Fatalf("host %v off: the clock reads %v from Redis' (this host's real time); want Redis' time", tc.host, off)
			}
			if !tc.follows && (off-tc.host > 50*time.Millisecond || tc.host-off > 50*time.Millisecond) {
				t.Fatalf("host %v off: the clock reads %v off; want the host's own within tolerance", tc.host, off)
			}
			if g := testutil.ToFloat64(c.gauge); g > -tc.host.Seconds()+0.5 || g < -tc.host.Seconds()-0.5 {
				t.Errorf("alertrouter_clock_offset_seconds = %v, want about %v", g, -tc.host.Seconds())
			}
		})
	}
	c := newStoreClock(nil)
	c.offset.Store(int64(time.Hour))
	c.check(t.Context(), store.NewMemory(), slog.New(slog.DiscardHandler))
	if off := c.Now().Sub(time.Now()); off > time.Second || off < -time.Second {
		t.Fatalf("on the memory store the clock reads %v off, want the host's", off)
	}
}

// The pipeline a replica builds stamps with the store clock the readiness
// probe sets: a host 10 minutes ahead stamps Redis' time once probed.
func TestThePipelineStampsWithTheStoreClock(t *testing.T) {
	srv := redistest.Start(t)
	cfg, err := config.Parse([]byte("store: {redis: {addrs: ["+srv.Addr()+"]}}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := newDeps(prometheus.NewRegistry(), slog.New(slog.DiscardHandler), io.Discard)
	d.clock.local = func() time.Time { return time.Now().Add(10 * time.Minute) }
	st, err := d.openState(cfg.Store, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.close)
	b, err := d.build(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.ready(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	if b.pipeline.Now == nil {
		t.Fatal("the pipeline has no clock of the router's: it stamps with the host's")
	}
	if off := b.pipeline.Now().Sub(time.Now()); off > clockTolerance || off < -clockTolerance {
		t.Fatalf("the pipeline of a host 10 minutes ahead stamps %v from Redis' time once probed; want Redis' time", off)
	}
}
