package routing_test

import (
	"context"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
)

// An alert that resolves, fires again and resolves within one of
// Alertmanager's group_interval reaches the router as one resolve carrying
// the later instance's startsAt: Alertmanager sends an alert's last
// instance only. No marker is keyed by that start, so the resolve went to
// PagerDuty only ("in case") and Slack's parent said "1 firing" for good;
// and its page mark went as if the page had reached nobody, so flap
// damping let every re-fire page (an audit with a real Alertmanager: 3
// pages in 8 minutes, damping on or off). The resolve is now the notified
// firing's, found through the flap history's exact start.
func TestAResolveCarryingALaterInstancesStartResolvesTheNotifiedFiring(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testLaterInstanceResolve(t, newEnv(t)) })
	t.Run("redis", func(t *testing.T) {
		testLaterInstanceResolve(t, redisEnv(t, []string{redistest.Start(t).Addr()}, false))
	})
}

func testLaterInstanceResolve(t *testing.T, e *env) {
	// Pages go to PagerDuty and to Slack, as the README's route tree does.
	e.routes = pageToBothRoutes
	p := e.pipeline()
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	t0 := e.clock.Now()
	// The store's epoch is older than the alerts, as a running replica
	// marks it at start (otherwise the resolve would be sent where routed
	// as one whose marker the store may have lost).
	if err := dedup.MarkEpoch(context.Background(), e.store, e.dedup.KeyPrefix, t0.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	mk := func(status string, start, end time.Time) {
		t.Helper()
		a := tAlert("TTFTHigh", status, "page")
		a.StartsAt = start.Format(time.RFC3339Nano)
		if status == "resolved" {
			a.EndsAt = end.Format(time.RFC3339Nano)
		}
		mustProcess(t, p, a)
	}
	s1 := t0.Add(-90 * time.Second).Add(123 * time.Millisecond) // Prometheus' starts carry milliseconds
	mk("firing", s1, time.Time{})
	// Alertmanager's next flush: the first instance resolved, a second fired
	// and resolved, all within its group_interval.
	e.clock.Advance(2 * time.Minute)
	s2 := t0.Add(30 * time.Second).Add(456 * time.Millisecond)
	mk("resolved", s2, s2.Add(20*time.Second))

	resolved := func(s *sink) int {
		n := 0
		for _, x := range s.notifications() {
			if x.Kind == alert.KindResolved && x.IncidentResolved {
				n++
			}
		}
		return n
	}
	if n := resolved(e.slack); n != 1 {
		t.Errorf("Slack got %d incident resolves, want 1: its parent stays firing (events %v)", n, e.slack.events())
	}
	if n := resolved(e.pd); n != 1 {
		t.Errorf("PagerDuty got %d incident resolves, want 1 (events %v)", n, e.pd.events())
	}
	// It fires again within cool_down: it paged once, so this is damped.
	e.clock.Advance(time.Minute)
	mk("firing", e.clock.Now().Add(-5*time.Second), time.Time{})
	triggers := 0
	for _, x := range e.pd.notifications() {
		if x.Opening {
			triggers++
		}
	}
	if triggers != 1 {
		t.Errorf("%d PagerDuty triggers, want 1: the re-fire within cool_down of a delivered page is damped (events %v)", triggers, e.pd.events())
	}
}
