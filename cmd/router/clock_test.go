package main

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// A replica whose host clock is minutes off stamps the state its replicas
// share with Redis' time (an audit: a replica 5–10 minutes ahead paged
// again for a lagging HA peer's copy sent after the resolve, reading the
// resolve, stamped by another replica, as older than the 5 minutes it asks
// Alertmanager within); within a second it keeps its own; a store with no
// clock (the memory store) is the host's.
func TestTheStoreClockFollowsRedisWhenTheHostIsOff(t *testing.T) {
	st := redisOfItsOwn(t)
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
			off := time.Until(c.Now())
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
	c.anchor.Store(&clockAnchor{redis: time.Now().Add(time.Hour), mono: time.Now()})
	c.check(t.Context(), store.NewMemory(), slog.New(slog.DiscardHandler))
	if off := time.Until(c.Now()); off > time.Second || off < -time.Second {
		t.Fatalf("on the memory store the clock reads %v off, want the host's", off)
	}
}

// A host whose clock steps between two probes (NTP, a VM resumed) stamped
// the old offset on its new clock until the next probe, 10 s: a resolve
// written then read as 10 minutes old, and a lagging HA peer's copy paged
// again (a review). Redis' time is carried on by the monotonic clock: the
// step shows at once.
func TestTheStoreClockHoldsAcrossAHostClockStep(t *testing.T) {
	st := redisOfItsOwn(t)
	for _, tc := range []struct {
		name     string
		from, to time.Duration // the host's clock minus the real time, before and after the step
	}{
		{"right, stepped 10 minutes ahead", 0, 10 * time.Minute},
		{"10 minutes ahead, stepped right", 10 * time.Minute, 0},
		{"10 minutes behind, stepped 10 minutes ahead", -10 * time.Minute, 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newStoreClock(nil)
			skew := tc.from
			c.local = func() time.Time { return time.Now().Add(skew) }
			c.check(t.Context(), st, slog.New(slog.DiscardHandler))
			skew = tc.to // no probe since
			if off := time.Until(c.Now()); off < -clockTolerance || off > clockTolerance {
				t.Fatalf("after the step the clock reads %v from Redis' time; want Redis' time at once", off)
			}
		})
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
	b := generation(t, d, cfg)
	if err := d.ready(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	if b.pipeline.Now == nil {
		t.Fatal("the pipeline has no clock of the router's: it stamps with the host's")
	}
	if off := time.Until(b.pipeline.Now()); off > clockTolerance || off < -clockTolerance {
		t.Fatalf("the pipeline of a host 10 minutes ahead stamps %v from Redis' time once probed; want Redis' time", off)
	}
}

// Decisions stay on the host's clock, as Alertmanager's and `router
// explain`'s: a Redis whose clock is hours off moved time intervals with
// the shared stamps, and a page was muted (a review). The store clock
// reads an hour the route is muted; the host's, one it is not.
func TestTimeIntervalsStayOnTheHostsClock(t *testing.T) {
	now := time.Now().UTC()
	h := (now.Hour() + 6) % 24
	yml := fmt.Sprintf(`route:
  receiver: log
  routes:
    - receiver: front
      matchers: ['alertname="X"']
      mute_time_intervals: [hour]
time_intervals:
  - name: hour
    time_intervals: [{times: [{start_time: "%02d:00", end_time: "%02d:59"}]}]
receivers: [{name: log, log_configs: [{}]}, {name: front, log_configs: [{}]}]
`, h, h)
	cfg, err := config.Parse([]byte(yml), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := newDeps(prometheus.NewRegistry(), slog.New(slog.DiscardHandler), io.Discard)
	b := generation(t, d, cfg)
	target := time.Date(now.Year(), now.Month(), now.Day(), h, 30, 0, 0, time.UTC)
	d.clock.anchor.Store(&clockAnchor{redis: target, mono: time.Now()}) // Redis' clock reads h:30
	msg, err := webhook.Decode([]byte(`{"version":"4","status":"firing","receiver":"r","alerts":[{"status":"firing","labels":{"alertname":"X"}}]}`), now)
	if err != nil {
		t.Fatal(err)
	}
	r := b.pipeline.Evaluate(msg)[0]
	if len(r.Receivers) != 1 || r.Receivers[0] != "front" || r.MutedBy != "" {
		t.Fatalf("receivers %v, muted by %q with the store clock at %02d:30 and the host's at %s; want front, unmuted (the host's hour)", r.Receivers, r.MutedBy, h, now.Format("15:04"))
	}
}

// redisOfItsOwn is a store on a redis-server of its own.
func redisOfItsOwn(t *testing.T) *store.Redis {
	t.Helper()
	cfg := store.DefaultRedisConfig()
	cfg.Addrs = []string{redistest.Start(t).Addr()}
	st, err := store.NewRedis(cfg, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}
