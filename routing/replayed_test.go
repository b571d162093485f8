package routing_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// A dead letter's opening sent again to Slack (a replay) posts a parent the
// store did not know: Alertmanager's retry of its alerts, or the
// incident's next alert, posted a second parent and the replayed one said
// firing for good (audit REPLAY). Adopted, the replayed parent is the
// incident's: what follows replies under it. An incident opened meanwhile
// keeps its own parent.
func TestAReplayedOpeningIsTheIncidentsParent(t *testing.T) {
	a := tAlert("TTFTHigh", "firing", "ticket", "instance", "a")
	e, p, slack, parents, replayed := replayedOpening(t, a)
	if err := p.AdoptReplayedOpening(t.Context(), replayed, nil); err != nil {
		t.Fatal(err)
	}
	mustProcess(t, p, a) // Alertmanager's retry of the same alert
	mustProcess(t, p, a, tAlert("TTFTHigh", "firing", "ticket", "instance", "b"))
	if parents.Load() != 1 {
		t.Errorf("%d parents, want the replayed one only", parents.Load())
	}
	for i, n := range e.slack.notifications()[1:] {
		if n.Opening || n.Ref != "P1" {
			t.Errorf("notification %d after the replay: opening %v, ref %q; want a reply under P1", i, n.Opening, n.Ref)
		}
	}

	// Opened meanwhile by another notification: its parent stays.
	c := tAlert("TTFTHigh", "firing", "ticket", "instance", "c", "service", "search")
	mustProcess(t, p, c)
	other := p.Evaluate(payload(t, c))
	late := &alert.Notification{Receiver: "slack", Integration: "slack/0", Incident: other[0].Incident, Kind: alert.KindFiring,
		Action: alert.ActionTicket, Opening: true, Results: other}
	if err := slack.Notify(t.Context(), late); err != nil {
		t.Fatal(err)
	}
	if err := p.AdoptReplayedOpening(t.Context(), late, nil); err != nil {
		t.Fatal(err)
	}
	mustProcess(t, p, c, tAlert("TTFTHigh", "firing", "ticket", "instance", "d", "service", "search"))
	sent := e.slack.notifications()
	if last := sent[len(sent)-1]; last.Opening || last.Ref != "P2" {
		t.Errorf("an update of the incident opened before the replay: opening %v, ref %q; want a reply under its own parent P2", last.Opening, last.Ref)
	}
}

// A replayed opening's alert that resolved since is no member of the
// incident it adopts: the incident closes when the others resolve, its
// parent redrawn resolved, instead of saying firing for good and taking in
// the next episode (a review).
func TestAReplayedOpeningLeavesOutAlertsResolvedSince(t *testing.T) {
	y1, y2 := tAlert("TTFTHigh", "firing", "ticket", "instance", "y1"), tAlert("TTFTHigh", "firing", "ticket", "instance", "y2")
	e, p, _, _, replayed := replayedOpening(t, y1, y2)
	results := replayed.Results
	if err := p.AdoptReplayedOpening(t.Context(), replayed, []string{results[0].Alert.Fingerprint}); err != nil {
		t.Fatal(err)
	}
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "ticket", "instance", "y2"))
	sent := e.slack.notifications()
	if last := sent[len(sent)-1]; !last.IncidentResolved || last.Ref != "P1" {
		t.Errorf("y2's resolve: closing %v, ref %q; want the incident closed under P1 (y1 resolved before the replay)", last.IncidentResolved, last.Ref)
	}
}

// A replayed firing marks its alerts notified at its integration:
// Alertmanager's next repeat of them sends nothing (it posted one more
// thread reply under the replayed parent; at PagerDuty, a trigger again);
// an alert resolved since is not marked, and a new alert of the incident
// still goes out, under the replayed parent.
func TestAReplayedFiringMarksItsAlertsNotified(t *testing.T) {
	a, gone := tAlert("TTFTHigh", "firing", "ticket", "instance", "a"), tAlert("TTFTHigh", "firing", "ticket", "instance", "gone")
	e, p, _, parents, replayed := replayedOpening(t, a, gone)
	resolvedSince := []string{replayed.Results[1].Alert.Fingerprint}
	if err := p.AdoptReplayedOpening(t.Context(), replayed, resolvedSince); err != nil {
		t.Fatal(err)
	}
	if err := p.MarkReplayedFirings(t.Context(), replayed, resolvedSince, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	before := len(e.slack.notifications())
	if sum := mustProcess(t, p, a); len(e.slack.notifications()) != before {
		t.Errorf("Alertmanager's repeat of the replayed alert sent %d Slack notifications (summary %+v); want none", len(e.slack.notifications())-before, sum)
	}
	mustProcess(t, p, a, tAlert("TTFTHigh", "firing", "ticket", "instance", "b"))
	sent := e.slack.notifications()
	if len(sent) != before+1 || sent[len(sent)-1].Opening || sent[len(sent)-1].Ref != "P1" || parents.Load() != 1 {
		t.Errorf("a new alert after the replay: %d Slack notifications more, %d parents; want one reply under P1", len(sent)-before, parents.Load())
	}
	// The alert resolved since was not marked: its firing is no repeat.
	if sum := mustProcess(t, p, gone); sum.Deduplicated != 0 {
		t.Errorf("the alert resolved since the dead letter: %+v; want it not deduplicated (no marker written for it)", sum)
	}

	// A page replayed to PagerDuty: its repeat triggers nothing more.
	c := tAlert("TTFTHigh", "firing", "page", "instance", "c", "service", "search")
	results := p.Evaluate(payload(t, c))
	page := &alert.Notification{Receiver: "pagerduty", Integration: "pagerduty/0", Incident: results[0].Incident, Kind: alert.KindFiring,
		Action: alert.ActionPage, Opening: true, Results: results}
	if err := e.pd.Notify(t.Context(), page); err != nil {
		t.Fatal(err)
	}
	if err := p.MarkReplayedFirings(t.Context(), page, nil, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	before = len(e.pd.notifications())
	if sum := mustProcess(t, p, c); len(e.pd.notifications()) != before {
		t.Errorf("Alertmanager's repeat of the replayed page sent %d PagerDuty notifications (summary %+v); want none", len(e.pd.notifications())-before, sum)
	}
}

// A replayed firing's marker replaces an older one it supersedes, as the
// settle does for a delivered firing: the ticket marker of an alert whose
// page (its escalation) was dead-lettered and replayed — kept, the next
// repeat sent the escalation again (a review) — and the resolve marker of
// an alert that fired again with the same start. A marker written after
// the replay's send is kept.
func TestAReplayedFiringReplacesTheMarkersItSupersedes(t *testing.T) {
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	p := e.pipeline()
	c := tAlert("TTFTHigh", "firing", "page", "instance", "c")
	results := p.Evaluate(payload(t, c))
	r := results[0]
	key := store.Key("test:", "n", r.Alert.Fingerprint, "pagerduty/pagerduty/0:"+strconv.FormatInt(r.Alert.IdentityStart().UnixMilli(), 10))
	page := &alert.Notification{Receiver: "pagerduty", Integration: "pagerduty/0", Incident: r.Incident, Kind: alert.KindFiring,
		Action: alert.ActionPage, Opening: true, Results: results}
	replay := func(old dedup.Marker, sentAt time.Time) {
		t.Helper()
		if err := e.store.Set(t.Context(), []store.Entry{{Key: key, Value: old.String(), TTL: time.Hour}}); err != nil {
			t.Fatal(err)
		}
		if err := e.pd.Notify(t.Context(), page); err != nil {
			t.Fatal(err)
		}
		if err := p.MarkReplayedFirings(t.Context(), page, nil, sentAt); err != nil {
			t.Fatal(err)
		}
	}
	repeatSends := func() int {
		t.Helper()
		before := len(e.pd.notifications())
		mustProcess(t, p, c)
		return len(e.pd.notifications()) - before
	}
	now := e.clock.Now()
	earlier := now.Add(-time.Minute)
	replay(dedup.Marker{Tier: "ticket:severity:warning", At: earlier, Incident: r.Incident}, now)
	if n := repeatSends(); n != 0 {
		t.Errorf("the repeat of a replayed escalation (a ticket marker before it) sent %d PagerDuty notifications; want none", n)
	}
	replay(dedup.Marker{Resolved: true, At: earlier, Incident: r.Incident}, now)
	if n := repeatSends(); n != 0 {
		t.Errorf("the repeat of a replayed re-fire (a resolve marker before it) sent %d PagerDuty notifications; want none", n)
	}
	// A resolve written after the replay's send stays: the firing that
	// follows is a re-fire, sent.
	replay(dedup.Marker{Resolved: true, At: now.Add(time.Second), Incident: r.Incident}, now)
	if n := repeatSends(); n != 1 {
		t.Errorf("a firing after a resolve marked since the replay sent %d PagerDuty notifications; want it sent (1)", n)
	}
}

// replayedOpening is a pipeline on a real Redis whose Slack draws parents
// (P1, P2, …), and the opening of alerts' incident sent as a replay sends
// it (P1), not yet adopted.
func replayedOpening(t *testing.T, alerts ...webhooktest.Alert) (*env, *routing.Pipeline, parentSink, *atomic.Int32, *alert.Notification) {
	t.Helper()
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	p := e.pipeline()
	parents := &atomic.Int32{}
	slack := parentSink{e.slack, parents}
	p.Receivers["slack"][0].Notifier = slack
	results := p.Evaluate(payload(t, alerts...))
	replayed := &alert.Notification{Receiver: "slack", Integration: "slack/0", Incident: results[0].Incident, Kind: alert.KindFiring,
		Action: alert.ActionTicket, Opening: true, Results: results}
	if err := slack.Notify(t.Context(), replayed); err != nil { // the replay's send
		t.Fatal(err)
	}
	return e, p, slack, parents, replayed
}
