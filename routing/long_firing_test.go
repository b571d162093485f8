package routing_test

import (
	"slices"
	"testing"
	"time"
)

// An alert firing longer than dedup.notified_ttl with no reminder sent —
// dedup.repeat_interval 0 ("never remind"), or Alertmanager repeating less
// often than the marker lives — paged again as new once its marker expired
// (the repeats skipped never renewed it): a page a week for an alert that
// never stopped. A skipped firing renews its marker past half its life.
func TestAnAlertFiringLongerThanNotifiedTTLIsNotPagedAgain(t *testing.T) {
	e := newEnv(t)
	e.dedup.RepeatInterval = 0
	e.dedup.NotifiedTTL = 7 * 24 * time.Hour
	p := e.pipeline()
	a := tAlert("TTFTHigh", "firing", "page")
	mustProcess(t, p, a)
	for day := 1; day <= 20; day++ {
		e.clock.Advance(24 * time.Hour)
		mustProcess(t, p, a) // Alertmanager's repeat
	}
	if got := e.pd.events(); len(got) != 1 {
		t.Fatalf("PagerDuty after 20 days of one alert firing, repeated daily: %v; want the one trigger", got)
	}
}

// The markers renewed, the incident's state was not: once it expired, the
// resolve of one of its alerts, alone in its webhook (the other in another
// Alertmanager group), found no member left, closed the incident and
// resolved PagerDuty while the other alert fired on — its repeats
// deduplicated against a marker renewed for ever: never paged again. The
// incident's state is renewed with the markers.
func TestALongFiringIncidentOutlivesALoneResolveOfOneOfItsAlerts(t *testing.T) {
	e := newEnv(t) // the memory store's TTLs follow the test's clock
	e.dedup.RepeatInterval = 0
	e.dedup.NotifiedTTL = 7 * 24 * time.Hour
	p := e.pipeline()
	a1 := tAlert("TTFTHigh", "firing", "page", "instance", "gpu-1")
	a2 := tAlert("TTFTLatencyHigh", "firing", "page", "instance", "gpu-2")
	mustProcess(t, p, a1, a2)
	incident := e.pd.notifications()[0].Incident
	for day := 1; day <= 20; day++ {
		e.clock.Advance(24 * time.Hour)
		mustProcess(t, p, a1) // two Alertmanager groups, repeating
		mustProcess(t, p, a2)
	}
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page", "instance", "gpu-1"))
	if got := e.pd.events(); slices.Contains(got, "resolve "+incident) {
		t.Fatalf("the lone resolve of gpu-1 after 20 days resolved the incident while gpu-2 fires: %v", got)
	}
	mustProcess(t, p, tAlert("TTFTLatencyHigh", "resolved", "page", "instance", "gpu-2"))
	if got := e.pd.events(); !slices.Contains(got, "resolve "+incident) {
		t.Fatalf("the incident's last alert resolved, PagerDuty was not: %v", got)
	}
}
