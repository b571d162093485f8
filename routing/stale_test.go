package routing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/amtest"
	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
)

// postToAM posts one alert with labels to Alertmanager, firing until
// endsAt.
func postToAM(t *testing.T, url string, labels map[string]string, startsAt, endsAt time.Time) {
	t.Helper()
	b, _ := json.Marshal([]map[string]any{{"labels": labels, "startsAt": startsAt, "endsAt": endsAt}})
	resp, err := http.Post(url+"/api/v2/alerts", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("post alert to Alertmanager: %s", resp.Status)
	}
}

// askingAlertmanager starts a real Alertmanager and a pipeline with flap
// damping that asks it whether a firing after its resolve still fires.
func askingAlertmanager(t *testing.T) (*amtest.Alertmanager, *env, *routing.Pipeline) {
	t.Helper()
	am := amtest.Start(t, "route: {receiver: none}\nreceivers: [{name: none}]\n")
	client, err := amsilence.New(amsilence.Config{URL: am.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	p := e.pipeline()
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	p.FiringAlerts = client.Fingerprints
	return am, e, p
}

// In an Alertmanager HA pair, a peer that flushed the group while the
// alert still fired waits its peer_timeout and sends that firing after the
// other peer sent the resolve: the same startsAt, after a notified
// resolve. Sent, it paged again for a trouble that had cleared (an audit:
// on 3 of 3 resolves, a new PagerDuty incident and a new Slack parent,
// resolved 15s later). The router asks Alertmanager (alertmanager.url),
// which no longer holds the alert: deduplicated. Alertmanager firing again
// an alert it had resolved itself (Prometheus' resends lapsed and resumed)
// still holds it: that firing pages, as it does when Alertmanager cannot
// be asked.
func TestAStaleFiringFromALaggingAlertmanagerPeerDoesNotPageAgain(t *testing.T) {
	am, e, p := askingAlertmanager(t)

	a := tAlert("TTFTHigh", "firing", "page")
	start := e.clock.Now().Add(-5 * time.Minute)
	a.StartsAt = start.Format(time.RFC3339Nano)
	postToAM(t, am.URL, a.Labels, start, time.Now().Add(time.Hour))
	mustProcess(t, p, a)
	pdFirings := func() int {
		n := 0
		for _, x := range e.pd.notifications() {
			if x.Kind == alert.KindFiring {
				n++
			}
		}
		return n
	}
	if pdFirings() != 1 {
		t.Fatalf("the firing paged %d times, want 1", pdFirings())
	}

	// Prometheus resolves it: Alertmanager holds it no more; one peer sends
	// the resolve, the other its stale firing.
	postToAM(t, am.URL, a.Labels, start, time.Now().Add(-time.Second))
	e.clock.Advance(time.Minute)
	resolved := a
	resolved.Status, resolved.EndsAt = "resolved", e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, resolved)
	e.clock.Advance(10 * time.Second)
	sum := mustProcess(t, p, a)
	if pdFirings() != 1 || sum.Deduplicated == 0 {
		t.Errorf("the lagging peer's firing paged (%d pages, summary %+v), want it deduplicated", pdFirings(), sum)
	}
	if got := metric(t, e.reg, "alertrouter_flap_downgrades_total", ""); got != 0 {
		t.Errorf("the stale firing counted as a flap downgrade (%v)", got)
	}

	// Alertmanager fires it again (Prometheus resumed its resends): a page.
	postToAM(t, am.URL, a.Labels, start, time.Now().Add(time.Hour))
	e.clock.Advance(10 * time.Second)
	mustProcess(t, p, a)
	if pdFirings() != 2 {
		t.Errorf("a firing Alertmanager holds again paged %d times in all, want 2", pdFirings())
	}
}

// An alert pushed to both peers of an HA pair without a start (amtool alert
// add without --start, a script) gets each peer's own clock: the lagging
// peer's copy of the resolved firing carried a start 24ms later than the
// one notified, found no marker, and paged again — a second PagerDuty
// incident for a trouble that had cleared (audit AM35, Alertmanager 0.35).
// A firing that started before the notified resolve is the same trouble:
// Alertmanager is asked, and one it no longer holds is not sent (its
// resolve then finds nothing to resolve); one it still holds is.
func TestALaggingPeersCopyUnderItsOwnStartDoesNotPageAgain(t *testing.T) {
	am, e, p := askingAlertmanager(t)
	pdEvents := func(kind alert.Kind) int { return pdCount(e, kind) }
	a, start := firedAndResolved(t, am, e, p)
	if pdEvents(alert.KindFiring) != 1 || pdEvents(alert.KindResolved) != 1 {
		t.Fatalf("PagerDuty got %d firings and %d resolves, want 1 and 1", pdEvents(alert.KindFiring), pdEvents(alert.KindResolved))
	}

	// The lagging peer: its own start, 24ms later, and its resolve after.
	lagging := a
	lagging.StartsAt = start.Add(24 * time.Millisecond).Format(time.RFC3339Nano)
	e.clock.Advance(5 * time.Second)
	if sum := mustProcess(t, p, lagging); pdEvents(alert.KindFiring) != 1 || sum.Deduplicated == 0 {
		t.Errorf("the lagging peer's copy under its own start paged (%d pages, summary %+v), want it deduplicated", pdEvents(alert.KindFiring), sum)
	}
	laggingResolved := lagging
	laggingResolved.Status, laggingResolved.EndsAt = "resolved", e.clock.Now().Format(time.RFC3339Nano)
	e.clock.Advance(15 * time.Second)
	mustProcess(t, p, laggingResolved)
	// Its resolve is one no marker knows: PagerDuty is sent it where
	// routed (lostResolves: a resolve of a closed incident changes
	// nothing there), and nothing is triggered.
	if ns := e.pd.notifications(); pdEvents(alert.KindFiring) != 1 || ns[len(ns)-1].Kind != alert.KindResolved {
		t.Errorf("after the lagging peer's resolve PagerDuty got %d firings (want 1), the last event %s (want a resolve)", pdEvents(alert.KindFiring), ns[len(ns)-1].Kind)
	}

	// A copy under another start that Alertmanager still holds (it fires
	// again there): sent.
	again := a
	again.StartsAt = start.Add(50 * time.Millisecond).Format(time.RFC3339Nano)
	postToAM(t, am.URL, a.Labels, start.Add(50*time.Millisecond), time.Now().Add(time.Hour))
	e.clock.Advance(5 * time.Second)
	mustProcess(t, p, again)
	if pdEvents(alert.KindFiring) != 2 {
		t.Errorf("a firing Alertmanager holds again paged %d times in all, want 2", pdEvents(alert.KindFiring))
	}
}

// When Alertmanager cannot answer, a firing after its resolve is sent, as
// before the question was asked: better a second page than none.
func TestAFiringAfterItsResolveIsSentWhenAlertmanagerCannotBeAsked(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.FiringAlerts = func(context.Context, string) (map[string]bool, error) {
		return nil, errors.New("alertmanager: connection refused")
	}
	a := tAlert("TTFTHigh", "firing", "page")
	mustProcess(t, p, a)
	resolved := a
	resolved.Status = "resolved"
	mustProcess(t, p, resolved)
	before := len(e.pd.notifications())
	mustProcess(t, p, a)
	if got := e.pd.notifications()[before:]; len(got) != 1 || got[0].Kind != alert.KindFiring {
		t.Errorf("PagerDuty got %d notifications for the firing after its resolve, want its page", len(got))
	}
}

// A firing after its resolve is asked about only within staleWindow of
// the resolve: a lagging peer's copy comes within seconds. Later it is
// sent whatever Alertmanager says — should alertmanager.url name another
// Alertmanager than the sender's (one router behind two clusters), its
// firings would otherwise be dropped at every repeat.
func TestAFiringLongAfterItsResolveIsSentWithoutAsking(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	asked := 0
	p.FiringAlerts = func(context.Context, string) (map[string]bool, error) {
		asked++
		return map[string]bool{}, nil // another cluster's Alertmanager: holds none of these
	}
	a := tAlert("TTFTHigh", "firing", "page")
	mustProcess(t, p, a)
	resolved := a
	resolved.Status = "resolved"
	mustProcess(t, p, resolved)
	e.clock.Advance(10 * time.Minute)
	before := len(e.pd.notifications())
	mustProcess(t, p, a)
	if got := e.pd.notifications()[before:]; len(got) != 1 || got[0].Kind != alert.KindFiring || asked != 0 {
		t.Errorf("a firing 10m after its resolve: %d notifications, Alertmanager asked %d times; want its page, unasked", len(got), asked)
	}
}

// The journal's deliveries say which notification closed an incident and
// which paged PagerDuty again after a resolve by hand: the console tells an
// incident's current episode by them (review R13a: alerts' starts did not —
// an alert released from a silence fires with an old start).
func TestDeliveriesSayWhenAnIncidentClosed(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	rec := &recorder{}
	p.Recorder = rec
	a := tAlert("LedgerDown", "firing", "page")
	mustProcess(t, p, a)
	closed := func() (n int) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, r := range rec.results {
			for _, d := range r.Deliveries {
				if d.Closed {
					n++
				}
			}
		}
		return n
	}
	if n := closed(); n != 0 {
		t.Fatalf("the firing's deliveries say closed %d times", n)
	}
	resolved := a
	resolved.Status, resolved.EndsAt = "resolved", e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, resolved)
	if n := closed(); n == 0 {
		t.Fatalf("the resolve that closed the incident: no delivery says closed (%v)", rec.outcomes())
	}
}

// A lagging Alertmanager peer's firing that arrives after the alert's
// resolve — the resolve first, for an alert the router never saw fire — was
// kept from PagerDuty (its resolve there was notified: Alertmanager, asked,
// no longer holds the alert) but opened the incident in Slack, whose
// integration sent nothing for the unseen resolve: a card for a trouble
// that had cleared, never closed (Alertmanager sends that resolve once),
// under which the incident's next episodes were hidden as thread replies
// for a week (an audit). A firing Alertmanager no longer holds is stale at
// every integration of the alert.
func TestAFiringArrivingAfterItsOwnResolveOpensNoCard(t *testing.T) {
	am := amtest.Start(t, "route: {receiver: none}\nreceivers: [{name: none}]\n")
	client, err := amsilence.New(amsilence.Config{URL: am.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.routes = pagesToBothRoutes
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd} // PagerDuty hears no updates
	p.Receivers["slack"][0].Notifier = drawingSink{e.slack} // Slack draws incidents
	cfg := flap.DefaultConfig()
	cfg.Threshold, cfg.CoolDown = 63, 0
	p.Flap = &cfg
	p.FiringAlerts = client.Fingerprints

	a := tAlert("TTFTHigh", "firing", "page")
	start := e.clock.Now().Add(-5 * time.Minute)
	a.StartsAt = start.Format(time.RFC3339Nano)
	resolved := a
	resolved.Status, resolved.EndsAt = "resolved", e.clock.Now().Format(time.RFC3339Nano)
	// The store's state began long before: the resolve of a firing no
	// marker knows goes to PagerDuty only (one it holds closes; else nothing).
	if err := dedup.MarkEpoch(t.Context(), e.store, e.dedup.KeyPrefix, e.clock.Now().Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	mustProcess(t, p, resolved)
	if n, m := len(e.slack.notifications()), len(e.pd.notifications()); n != 0 || m != 1 {
		t.Fatalf("Slack got %d, PagerDuty %d notifications of the resolve of an alert neither saw fire, want none and one (PagerDuty may hold it)", n, m)
	}
	e.clock.Advance(10 * time.Second)
	mustProcess(t, p, a) // the lagging peer's copy
	firings := func(s *sink) int {
		n := 0
		for _, x := range s.notifications() {
			if x.Kind == alert.KindFiring {
				n++
			}
		}
		return n
	}
	if n := firings(e.pd); n != 0 {
		t.Errorf("PagerDuty got %d firings of an alert that had resolved, want none", n)
	}
	if n := firings(e.slack); n != 0 {
		t.Errorf("Slack got %d firings of an alert that had resolved (a card never closed), want none", n)
	}

	// Alertmanager fires it again (Prometheus resumed): sent to both.
	postToAM(t, am.URL, a.Labels, start, time.Now().Add(time.Hour))
	e.clock.Advance(10 * time.Second)
	mustProcess(t, p, a)
	if firings(e.pd) != 1 || firings(e.slack) != 1 {
		t.Errorf("a firing Alertmanager holds: PagerDuty %d, Slack %d firings; want one each", firings(e.pd), firings(e.slack))
	}
}

// pdCount counts the PagerDuty notifications of kind.
func pdCount(e *env, kind alert.Kind) int {
	n := 0
	for _, x := range e.pd.notifications() {
		if x.Kind == kind {
			n++
		}
	}
	return n
}

// firedAndResolved pages a LedgerDown that started a minute ago and that
// Alertmanager (am) holds, then has Alertmanager drop it and p take its
// resolve 40 s later; it returns the alert and its start.
func firedAndResolved(t *testing.T, am *amtest.Alertmanager, e *env, p *routing.Pipeline) (webhooktest.Alert, time.Time) {
	t.Helper()
	a := tAlert("LedgerDown", "firing", "page")
	start := e.clock.Now().Add(-time.Minute)
	a.StartsAt = start.Format(time.RFC3339Nano)
	postToAM(t, am.URL, a.Labels, start, time.Now().Add(time.Hour))
	mustProcess(t, p, a)
	postToAM(t, am.URL, a.Labels, start, time.Now().Add(-time.Second))
	e.clock.Advance(40 * time.Second)
	resolved := a
	resolved.Status, resolved.EndsAt = "resolved", e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, resolved)
	return a, start
}
