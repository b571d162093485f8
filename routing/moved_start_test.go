package routing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
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

// movedStartEnv is a pipeline paging to PagerDuty and Slack with flap
// damping on, which keeps the start of each alert's firing.
func movedStartEnv(t *testing.T) (*env, *routing.Pipeline) {
	e := newEnv(t)
	e.routes = pageToBothRoutes
	p := e.pipeline()
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	p.RetriggerInterval = 5 * time.Minute
	return e, p
}

// checkMovedStart fires a page, then the same alert with its start moved by
// shift and no resolve between, then its resolve with the moved start.
func checkMovedStart(t *testing.T, shift time.Duration) {
	t.Helper()
	e, p := movedStartEnv(t)
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

// A page resolved by hand from Slack (its resolve lost: an Alertmanager
// restarted without its data, the alert cleared while silenced) whose
// alert fired again with a later start was taken for the same firing: the
// re-fire paged nobody, and reminders skip a hand-resolved PagerDuty — an
// episode never paged (an audit of Alertmanager operations). After a hand
// resolve a later start is a new episode: a PagerDuty trigger, and Slack
// told PagerDuty was paged again. A start moved earlier (an HA pair's
// copies merged), or a later one from before the hand resolve (a copy of
// the firing that was resolved), stays the same firing.
func TestAHandResolvedPagesAlertFiringWithALaterStartPagesAgain(t *testing.T) {
	for _, tc := range []struct {
		name string
		// shift moves the start; resolvedAt is when the page was resolved
		// by hand, after the first start.
		shift, resolvedAt time.Duration
		pages             bool
	}{
		{"later start", 10 * time.Minute, 5 * time.Minute, true},
		{"earlier start", -10 * time.Minute, 5 * time.Minute, false},
		// A copy of the firing that was resolved (an HA Prometheus pair's,
		// held by a restarted Alertmanager): it started before the hand
		// resolve, and the alert never stopped firing (a review).
		{"later start before the hand resolve", 10 * time.Minute, 15 * time.Minute, false},
	} {
		// The same after Redis began a new run since the first firing
		// (Pipeline.StoreLife): the hand mark decides, not the run.
		for _, run := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/run began %v", tc.name, run), func(t *testing.T) {
				e, p := handResolvableEnv(t)
				p.RetriggerInterval = 5 * time.Minute
				if run {
					p.StoreLife = func() time.Time { return webhooktest.Start.Add(2 * time.Minute) }
				}
				base := tAlert("TTFTHigh", "firing", "page")
				mustProcess(t, p, base)
				sent := e.pd.notifications()
				if len(sent) != 1 || !sent[0].Opening {
					t.Fatalf("PagerDuty got %d notifications, want the opening", len(sent))
				}
				key := dedup.HandResolvedAtKey(e.dedup.KeyPrefix, sent[0].Incident, "pagerduty/"+p.Receivers["pagerduty"][0].Name)
				if err := e.store.Set(context.Background(), []store.Entry{{Key: key, Value: dedup.HandResolved("jdoe (U123) via Slack", webhooktest.Start.Add(tc.resolvedAt)), TTL: 24 * time.Hour}}); err != nil {
					t.Fatal(err)
				}
				e.clock.Advance(20 * time.Minute)
				again := webhooktest.MkAlert("firing", base.Labels, base.Annotations, `vllm:time_to_first_token_seconds_bucket > 2`, webhooktest.Start.Add(tc.shift))
				mustProcess(t, p, again)
				mustProcess(t, p, again) // the next repeat
				pd, sl := e.pd.notifications(), e.slack.notifications()
				if !tc.pages {
					if len(pd) != 1 || len(sl) != 1 {
						t.Fatalf("the same firing: PagerDuty %d, Slack %d notifications; want the opening's alone", len(pd), len(sl))
					}
					return
				}
				if len(pd) != 2 || !pd[1].Opening || len(sl) != 2 || !sl[1].Opening || !sl[1].Repaged {
					t.Fatalf("a later start after a hand resolve: PagerDuty %d notifications (the second a trigger: %v), Slack %d (told PagerDuty was paged again: %v); want the new episode opened once at each, Slack saying so",
						len(pd), len(pd) > 1 && pd[1].Opening, len(sl), len(sl) > 1 && sl[1].Repaged)
				}
			})
		}
	}
}

// An alert sent first without a startsAt (its identity the fingerprint
// alone), then with one, paged twice: the flap history's start of the
// first firing, the zero time, was read as no earlier firing at all (an
// audit; Alertmanager always sets startsAt, other senders may not). It is
// the same firing, as a start moved later is; the other order was already.
func TestAFiringWithoutAStartThenWithOneIsTheSameFiring(t *testing.T) {
	e, p := movedStartEnv(t)
	send := func(status, startsAt string) {
		t.Helper()
		x := tAlert("TTFTHigh", status, "page")
		x.StartsAt = startsAt
		if status == "resolved" {
			x.EndsAt = e.clock.Now().Format(time.RFC3339Nano)
		}
		b, err := json.Marshal(webhooktest.Msg(status, x))
		if err != nil {
			t.Fatal(err)
		}
		m, err := webhook.Decode(b, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Process(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	send("firing", "0001-01-01T00:00:00Z")
	e.clock.Advance(20 * time.Minute)
	start := e.clock.Now().Add(-30 * time.Minute).Format(time.RFC3339)
	send("firing", start)
	send("firing", start)
	if pd, sl := e.pd.events(), e.slack.notifications(); len(pd) != 1 || len(sl) != 1 {
		t.Fatalf("the start given later: PagerDuty %v, Slack %d notifications; want the opening's trigger and parent alone", pd, len(sl))
	}
	e.clock.Advance(time.Minute)
	send("resolved", start)
	if got := e.pd.events(); len(got) != 2 || got[1] != "resolve "+e.pd.notifications()[0].Incident {
		t.Fatalf("the resolve with the start: PagerDuty %v; want the incident resolved", got)
	}
}
