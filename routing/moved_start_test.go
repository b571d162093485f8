package routing_test

import (
	"slices"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/policies/flap"
)

// Alertmanager merges an alert's copies to the earliest start (an HA
// Prometheus pair whose copies started apart) and sends the moved start at
// its next repeat: the router took it for a new firing — a Slack thread
// reply repeating the alert and, past retrigger_interval, a PagerDuty
// trigger again. The flap history says that alert has been firing since a
// later start with no resolve since: the repeat is that firing's, sent
// nowhere; its resolve, with the earlier start, still resolves.
func TestAStartMovedEarlierIsTheSameFiring(t *testing.T) {
	e := newEnv(t)
	e.routes = pageToBothRoutes
	p := e.pipeline()
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	p.RetriggerInterval = 5 * time.Minute
	base := tAlert("TTFTHigh", "firing", "page")
	mustProcess(t, p, base)
	e.clock.Advance(10 * time.Minute)
	earlier := webhooktest.MkAlert("firing", base.Labels, base.Annotations, `vllm:time_to_first_token_seconds_bucket > 2`, webhooktest.Start.Add(-10*time.Minute))
	mustProcess(t, p, earlier)
	mustProcess(t, p, earlier) // the next repeat
	if pd, sl := e.pd.events(), e.slack.notifications(); len(pd) != 1 || len(sl) != 1 {
		t.Fatalf("the start moved earlier: PagerDuty %v, Slack %d notifications; want the opening's trigger and parent alone", pd, len(sl))
	}
	e.clock.Advance(time.Minute)
	resolved := webhooktest.MkAlert("resolved", earlier.Labels, earlier.Annotations, `vllm:time_to_first_token_seconds_bucket > 2`, webhooktest.Start.Add(-10*time.Minute))
	resolved.EndsAt = e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, resolved)
	if got := e.pd.events(); !slices.Contains(got, "resolve "+e.pd.notifications()[0].Incident) {
		t.Fatalf("the resolve with the earlier start: PagerDuty %v; want the incident resolved", got)
	}
}
