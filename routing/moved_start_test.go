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
	checkMovedStart(t, -10*time.Minute)
}

// The start moved later: a Prometheus of an HA pair restarted mid-firing
// (its copy starts anew) and an Alertmanager restarted or a peer holding
// that copy first — the alert never resolved. Paged again (a trigger and
// a "[PAGE] 1 firing" reply in 20 of 20 incidents of the HA audit); the
// same firing now.
func TestAStartMovedLaterWithoutAResolveIsTheSameFiring(t *testing.T) {
	checkMovedStart(t, 10*time.Minute)
}

// checkMovedStart fires a page, then the same alert with its start moved by
// shift and no resolve between, then its resolve with the moved start.
func checkMovedStart(t *testing.T, shift time.Duration) {
	t.Helper()
	e := newEnv(t)
	e.routes = pageToBothRoutes
	p := e.pipeline()
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	p.RetriggerInterval = 5 * time.Minute
	base := tAlert("TTFTHigh", "firing", "page")
	mustProcess(t, p, base)
	e.clock.Advance(20 * time.Minute)
	earlier := webhooktest.MkAlert("firing", base.Labels, base.Annotations, `vllm:time_to_first_token_seconds_bucket > 2`, webhooktest.Start.Add(shift))
	mustProcess(t, p, earlier)
	mustProcess(t, p, earlier) // the next repeat
	if pd, sl := e.pd.events(), e.slack.notifications(); len(pd) != 1 || len(sl) != 1 {
		t.Fatalf("the start moved: PagerDuty %v, Slack %d notifications; want the opening's trigger and parent alone", pd, len(sl))
	}
	e.clock.Advance(time.Minute)
	resolved := webhooktest.MkAlert("resolved", earlier.Labels, earlier.Annotations, `vllm:time_to_first_token_seconds_bucket > 2`, webhooktest.Start.Add(shift))
	resolved.EndsAt = e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, resolved)
	if got := e.pd.events(); !slices.Contains(got, "resolve "+e.pd.notifications()[0].Incident) {
		t.Fatalf("the resolve with the moved start: PagerDuty %v; want the incident resolved", got)
	}
}
