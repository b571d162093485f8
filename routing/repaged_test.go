package routing_test

import (
	"context"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// An incident resolved by hand in PagerDuty while its alerts fire is
// triggered there again when a new alert joins it; the incident's Slack
// notification of the same webhook — sent beside PagerDuty's, whose parent
// still says the incident was resolved there — is flagged Repaged, and
// only that one.
func TestASlackUpdateSaysPagerDutyWasPagedAgain(t *testing.T) {
	e, p := handResolvableEnv(t)
	mustProcess(t, p, tAlert("First", "firing", "page"))
	incident := e.pd.notifications()[0].Incident
	key := dedup.HandResolvedKey(e.dedup.KeyPrefix, incident)
	if err := e.store.Set(context.Background(), []store.Entry{{Key: key, Value: "bob (U0BOB) via Slack", TTL: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	mustProcess(t, p, tAlert("Second", "firing", "page", "instance", "gpu-node-200:8000"))
	mustProcess(t, p, tAlert("Third", "firing", "page", "instance", "gpu-node-300:8000"))

	pd := e.pd.notifications()
	if len(pd) != 3 || !pd[1].Opening {
		t.Fatalf("pagerduty got %d notifications, want the opening, the joining alert as a new trigger, then a silent update", len(pd))
	}
	sl := e.slack.notifications()
	if len(sl) != 3 {
		t.Fatalf("slack got %d notifications, want the opening and two updates", len(sl))
	}
	for i, want := range []bool{false, true, false} {
		if sl[i].Repaged != want {
			t.Errorf("slack notification %d (%s, opening %v): Repaged %v, want %v", i, sl[i].Results[0].Alert.Labels["alertname"], sl[i].Opening, sl[i].Repaged, want)
		}
	}
	for i, n := range pd {
		if n.Repaged {
			t.Errorf("pagerduty notification %d is flagged Repaged: only the incident's other notifications are", i)
		}
	}
	if sl[1].Kind != alert.KindFiring || sl[1].Opening || sl[1].Incident != incident {
		t.Errorf("the flagged notification: kind %s, opening %v, incident %q; want an update of %q", sl[1].Kind, sl[1].Opening, sl[1].Incident, incident)
	}
}

// handResolvableEnv is a replica paging to PagerDuty (whose open
// incidents take no updates: silentSink) and Slack, tracking firings as
// the router runs (flap damping on): where a Resolve clicked in Slack
// makes the next alert page again.
func handResolvableEnv(t *testing.T) (*env, *routing.Pipeline) {
	e := newEnv(t)
	e.routes = pageToBothRoutes
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	return e, p
}
