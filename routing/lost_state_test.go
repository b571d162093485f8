package routing_test

import (
	"slices"
	"testing"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/store"
)

// The incident's state lost while its alerts' markers survive — a Redis
// evicting keys when full keeps the markers (every repeat reads them) and
// evicts the incident hashes; a restore from an older snapshot: the
// resolve of one alert found no member left, closed the incident and
// resolved PagerDuty while the other alert, in the same webhook, still
// fired — its repeats deduplicated, nobody paged. A webhook carrying a
// firing alert of the incident never closes it; the incident closes when
// its last alert resolves.
func TestALostIncidentStateNeverResolvesAnIncidentWhoseAlertStillFires(t *testing.T) {
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	p := e.pipeline()
	i0 := tAlert("TTFTHigh", "firing", "page", "instance", "gpu-0")
	i1 := tAlert("TTFTHigh", "firing", "page", "instance", "gpu-1")
	mustProcess(t, p, i0, i1)
	if got := e.pd.events(); len(got) != 1 {
		t.Fatalf("opening: PagerDuty got %v, want one trigger", got)
	}
	incident := e.pd.notifications()[0].Incident
	state := store.IncidentKey("test:", incident, "pagerduty/pagerduty/0")
	for _, k := range []string{state, state + ":m"} {
		if n, err := redistest.Do(srv.Addr(), "DEL", k); err != nil || n != "1" {
			t.Fatalf("DEL %s = %s, %v: the test's idea of the incident's keys is wrong", k, n, err)
		}
	}
	r0 := tAlert("TTFTHigh", "resolved", "page", "instance", "gpu-0")
	mustProcess(t, p, r0, i1)
	if got := e.pd.events(); slices.Contains(got, "resolve "+incident) {
		t.Fatalf("a webhook with gpu-1 still firing resolved the incident at PagerDuty: %v", got)
	}
	r1 := tAlert("TTFTHigh", "resolved", "page", "instance", "gpu-1")
	mustProcess(t, p, r0, r1)
	if got := e.pd.events(); !slices.Contains(got, "resolve "+incident) {
		t.Fatalf("the incident's last alert resolved and PagerDuty was not resolved: %v", got)
	}
}
