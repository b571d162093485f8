package slack_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// A ticket's alert of one Alertmanager group, joined by a page of another
// group (README's route groups by alertname, the router's incident by
// sector, service and KPI): the page's webhook does not carry the ticket's
// alert, so the parent redrawn as the page cannot list it — its note says
// how many of the incident's alerts still firing it leaves out, read from
// the incident's members in the store (a review: the ticket's alert
// vanished from Slack, the header "1 firing", nothing saying so).
func TestARedrawnParentCountsTheAlertsItDoesNotList(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	n := e.notifier(t, nil)
	e.triage(t, n, nil, nil, slack.NewTriageMetrics(e.reg))
	ctx := context.Background()
	first := opening("aaa")
	first.Integration = "slack/0"
	if err := n.Notify(ctx, first); err != nil {
		t.Fatal(err)
	}
	// The dispatch core's Joins: aaa with the ticket, bbb in another
	// group's webhook, ccc with the page below.
	key := store.IncidentKey("", first.Incident, first.Receiver+"/slack/0")
	for i, op := range []store.IncidentOp{
		{Step: store.StepJoin, Members: []store.Member{{Fingerprint: "aaa", StartsAt: "1000"}}},
		{Step: store.StepOpened},
		{Step: store.StepJoin, Members: []store.Member{{Fingerprint: "bbb", StartsAt: "1000"}}},
		{Step: store.StepJoin, Members: []store.Member{{Fingerprint: "ccc", StartsAt: "1000"}}},
	} {
		op.Key, op.Token, op.Lease, op.TTL = key, "t", time.Minute, time.Hour
		if _, err := e.store.Incidents(ctx, []store.IncidentOp{op}); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	drawn := func(webhook ...string) []byte {
		t.Helper()
		page := under(first.Ref, note(alert.KindFiring, alert.ActionPage, "firing", "ccc"))
		page.Integration = "slack/0"
		page.Webhook = slices.Clone(page.Results)
		for _, fp := range webhook {
			r := note(alert.KindFiring, alert.ActionTicket, "firing", fp).Results[0]
			r.Incident, r.Receivers = page.Incident, []string{page.Receiver}
			page.Webhook = append(page.Webhook, r)
		}
		if err := n.Notify(ctx, page); err != nil {
			t.Fatal(err)
		}
		ps := e.h.srv.Parents()
		return ps[len(ps)-1].Blocks
	}
	if b := drawn(); !bytes.Contains(b, []byte("*2 earlier alerts of the incident still firing are not listed*")) {
		t.Fatalf("the page's webhook carried neither aaa nor bbb: the redrawn parent does not say 2 are not listed: %s", b)
	}
	first.Ref = "" // a fresh ticket parent for the second drawing
	if err := n.Notify(ctx, first); err != nil {
		t.Fatal(err)
	}
	if b := drawn("aaa"); !bytes.Contains(b, []byte("*1 earlier alert of the incident still firing is not listed*")) || !bytes.Contains(b, []byte("`aaa`")) {
		t.Fatalf("the page's webhook carried aaa: the redrawn parent should list it and say 1 (bbb) is not listed: %s", b)
	}
}
