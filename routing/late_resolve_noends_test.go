package routing_test

import (
	"context"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
)

// A late resolve of an earlier instance (never notified here) sent
// without endsAt, while a later instance fires and paged. lostResolves
// keeps it from resolving the live page (firedSince, resolvedAt = its
// start); earlierFirings has no such bound and points it at the live
// firing's marker: PagerDuty's incident is resolved while the alert fires.
func TestALateResolveWithoutEndsAtKeepsTheLivePage(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	t0 := e.clock.Now()
	if err := dedup.MarkEpoch(context.Background(), e.store, e.dedup.KeyPrefix, t0.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	mk := stampedAlert
	s1 := t0.Add(-40 * time.Minute)
	mustProcess(t, p, mk("firing", s1, time.Time{}))
	e.clock.Advance(time.Minute)
	mustProcess(t, p, mk("resolved", s1, t0.Add(-30*time.Minute)))
	e.clock.Advance(time.Minute)
	s2 := t0.Add(-5*time.Minute + 321*time.Millisecond)
	mustProcess(t, p, mk("firing", s2, time.Time{})) // the live instance pages
	e.clock.Advance(time.Minute)
	// A late report of an instance before s1 (never seen here), with no endsAt.
	mustProcess(t, p, mk("resolved", t0.Add(-90*time.Minute), time.Time{}))
	n := 0
	for _, x := range e.pd.notifications() {
		if x.Kind == alert.KindResolved {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("PagerDuty got %d resolves, want 1 (s1's): the live instance s2 still fires (events %v)", n, e.pd.events())
	}
}

// A resolve whose endsAt is before its own startsAt (Alertmanager refuses
// such alerts; another sender's defect) resolves its page: decode drops the
// end (flagged endsAt_invalid), so the resolve goes by its fingerprint and
// start. Before, the incident's Leave kept the member as one that started
// after the resolve ended: answered 200, PagerDuty never resolved, the
// incident open for good.
func TestAResolveEndingBeforeItsStartResolvesThePage(t *testing.T) {
	t.Run("memory", func(t *testing.T) { resolveEndingBeforeStart(t, newEnv(t)) })
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		resolveEndingBeforeStart(t, redisEnv(t, []string{srv.Addr()}, false))
	})
}

func resolveEndingBeforeStart(t *testing.T, e *env) {
	e.routes = pageToBothRoutes
	p := dampingPipeline(e)
	start := e.clock.Now().Add(-5 * time.Minute)
	a := tAlert("TTFTHigh", "firing", "page")
	a.StartsAt = start.Format(time.RFC3339Nano)
	mustProcess(t, p, a)
	e.clock.Advance(time.Minute)
	a.Status, a.EndsAt = "resolved", "2001-01-01T00:00:00Z"
	sum := mustProcess(t, p, a)
	var resolves int
	for _, n := range e.pd.notifications() {
		if n.Kind == alert.KindResolved && n.IncidentResolved { // PagerDuty's resolve event
			resolves++
		}
	}
	if resolves != 1 {
		t.Errorf("PagerDuty got %d resolves, want 1 (summary %+v)", resolves, sum)
	}
}

// stampedAlert is TTFTHigh's page alert with status, start and end (the
// zero time: no endsAt).
func stampedAlert(status string, start, end time.Time) webhooktest.Alert {
	a := tAlert("TTFTHigh", status, "page")
	a.StartsAt = start.Format(time.RFC3339Nano)
	a.EndsAt = webhooktest.ZeroTime
	if !end.IsZero() {
		a.EndsAt = end.Format(time.RFC3339Nano)
	}
	return a
}
