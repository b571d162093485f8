package journal_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// routeWith routes a result again through p's route tree, as cmd/router's
// simulate does.
func routeWith(p *routing.Pipeline) func(r *alert.Result, now time.Time) {
	return func(r *alert.Result, now time.Time) {
		r.Receivers, r.MutedBy, r.MutedReceivers = nil, "", nil
		if r.Decision.Action == alert.ActionNone {
			return
		}
		r.Receivers, r.MutedBy, r.MutedReceivers = routing.Deliver(p.Routes.MatchRoutes(r.Label), now)
		if !r.Alert.Firing() {
			r.MutedBy, r.MutedReceivers = "", nil
		}
	}
}

// evaluateAt decides each webhook at the time it was received.
func evaluateAt(p *routing.Pipeline) journal.Evaluator {
	return func(msg *alert.Message) []*alert.Result {
		at := msg.ReceivedAt
		p.Now = func() time.Time { return at }
		return p.Evaluate(msg)
	}
}

// The audit's journal of a link flapping under the default flap section
// (threshold 4, window 1h, cool_down 10m): it paged, resolved, fired again
// a minute later (damped: re-fire within cool_down) and kept flapping
// (damped: 5 and 7 transitions in 1h). Under the very config in force the
// simulator reported "ticket→page" for each damped firing (phantom pages);
// replaying the fingerprint's transitions under the candidate's flap
// section reports nothing. A looser flap section (threshold 10, cool_down
// 1m) is reported as what the router then did: every damped firing pages,
// with a "flap" change — the journal's webhooks arrived minutes after the
// firings started, so none is a re-fire younger than a 1m cool-down
// (flap.Config.Refired: one older is a trouble that goes on), and none
// makes more than 10 transitions.
func TestSimulateReplaysFlapDamping(t *testing.T) {
	entries := readJSONL(t, "flap-linkflap.jsonl")
	p := readmePipeline(t, config.LoadDefault().Policies)
	def := flap.DefaultConfig()
	rep := journal.Simulate(entries, evaluateAt(p), journal.Options{Flap: &def, Route: routeWith(p)})
	if rep.Changed != 0 {
		t.Fatalf("same flap section: %d changed %v: %+v", rep.Changed, rep.Counts, rep.Changes)
	}
	loose := flap.Config{Threshold: 10, Window: def.Window, CoolDown: flap.DefaultConfig().CoolDown / 10}
	rep = journal.Simulate(entries, evaluateAt(p), journal.Options{Flap: &loose, Route: routeWith(p)})
	if rep.ByStatus["firing"]["flap"] != 3 || rep.ByStatus["firing"]["ticket→page"] != 3 {
		t.Fatalf("looser flap section: by status %v, want three firings ticket→page with a flap change", rep.ByStatus)
	}
	var before []string
	for _, c := range rep.Changes {
		if c.Status == "firing" {
			if c.After.Flapping != "" {
				t.Fatalf("change %+v: damped after", c)
			}
			before = append(before, c.Before.Flapping)
		}
	}
	if got := strings.Join(before, " | "); !strings.Contains(got, "fired again 1m0s after its page resolved") || !strings.Contains(got, "5 transitions in 1h") || !strings.Contains(got, "7 transitions in 1h") {
		t.Fatalf("the firings damped before: %s; want the re-fire, the 5- and the 7-transition firings", got)
	}
}

// A page the live burn rates raised (tier "live") is decided from the
// alert's labels alone by the simulator, which does not query Prometheus:
// it showed "page→ticket" under the very config. With a prometheus section
// in the candidate the journaled live decision is carried, and said so;
// without one the change is real, and explained.
func TestSimulateCarriesLiveDecisions(t *testing.T) {
	p := readmePipeline(t, config.LoadDefault().Policies)
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	rs, msg := decidedAt(p, t0, sloAlert("t1", "ticket", "firing", t0))
	if rs[0].Decision.Action != alert.ActionTicket {
		t.Fatalf("label decision %s, want ticket", rs[0].Decision.Action)
	}
	e := journal.FromResult(msg, rs[0])
	e.Decision.Action, e.Decision.Tier = alert.ActionPage, "live"
	e.Decision.Reasons = append(e.Decision.Reasons, "burn rates live from Prometheus (the alert carried none), tier page-fast")
	e.Receivers = []string{"pagerduty", "slack-triage"}
	entries := []journal.Entry{e}

	rep := journal.Simulate(entries, evaluateAt(p), journal.Options{Live: true, Route: routeWith(p)})
	if rep.Changed != 0 {
		t.Fatalf("candidate with prometheus: %d changed %v: %+v", rep.Changed, rep.Counts, rep.Changes)
	}
	rep = journal.Simulate(entries, evaluateAt(p), journal.Options{Route: routeWith(p)})
	if rep.Counts["page→ticket"] != 1 || !strings.Contains(strings.Join(rep.Changes[0].Reasons, "\n"), "no prometheus section") {
		t.Fatalf("candidate without prometheus: counts %v, changes %+v; want page→ticket saying why", rep.Counts, rep.Changes)
	}
}

// Rows say which occurrence changed (status, start) and the counts tell
// firings from resolves.
func TestSimulateRowsCarryStatusAndStart(t *testing.T) {
	p := readmePipeline(t, config.LoadDefault().Policies)
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	var entries []journal.Entry
	for i, status := range []string{"firing", "resolved"} {
		rs, msg := decidedAt(p, t0.Add(time.Duration(i)*time.Hour), sloAlert("p1", "page", status, t0))
		entries = append(entries, journal.FromResult(msg, rs[0]))
	}
	rep := journal.Simulate(entries, evaluateAt(readmePipeline(t, strictPages())), journal.Options{})
	if rep.ByStatus["firing"]["page→ticket"] != 1 || rep.ByStatus["resolved"]["page→ticket"] != 1 {
		t.Fatalf("by status %v, want one firing and one resolved page→ticket", rep.ByStatus)
	}
	b, err := json.Marshal(rep.Changes)
	if err != nil || !bytes.Contains(b, []byte(`"status":"resolved"`)) || !bytes.Contains(b, []byte(`"starts_at":"2026-12-05T01:00:00Z"`)) {
		t.Fatalf("changes %s, %v: want status and starts_at", b, err)
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	// One alert, fired and resolved: two transitions of one alert, not
	// "2 alerts".
	for _, want := range []string{"2 firings and resolves of 1 alert decided again, 2 changed.", "| change | total | firing | resolved |", "| page→ticket | 2 | 1 | 1 |", "| status | starts at |", "| resolved | 2026-12-05T01:00:00Z |"} {
		if !strings.Contains(md.String(), want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// Entries without received_at and group_key (hand-made, foreign exports)
// were decided as one webhook at 0001-01-01: a page that had resolved
// before a ticket of its SLO fired suppressed it "in the same payload".
// Each is now decided alone, at its time.
func TestSimulateEntriesWithoutWebhookIdentity(t *testing.T) {
	p := readmePipeline(t, config.LoadDefault().Policies)
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	var entries []journal.Entry
	for i, a := range []alert.Alert{sloAlert("p1", "page", "firing", t0), sloAlert("p1", "page", "resolved", t0), sloAlert("t1", "ticket", "firing", t0.Add(3*time.Hour))} {
		rs, msg := decidedAt(p, t0.Add(time.Duration(i)*3*time.Hour), a)
		e := journal.FromResult(msg, rs[0])
		e.GroupKey, e.ReceivedAt = "", time.Time{}
		entries = append(entries, e)
	}
	if entries[2].Suppressed {
		t.Fatal("the ticket was suppressed when journaled: the test needs it sent")
	}
	rep := journal.Simulate(entries, evaluateAt(p), journal.Options{})
	if rep.Changed != 0 {
		t.Fatalf("same config: %d changed %v: %+v", rep.Changed, rep.Counts, rep.Changes)
	}
}

// The resolve of a ticket its SLO's page suppressed goes where the ticket
// was routed (the pipeline sends it): under the config in force, the
// simulator predicted it reached nothing and reported an `integrations`
// change (a review found it under every candidate).
func TestSimulateSameConfigSendsASuppressedTicketsResolve(t *testing.T) {
	p := readmePipeline(t, config.LoadDefault().Policies)
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	sent := func(receiver, integration string) journal.Delivery {
		return journal.Delivery{Receiver: receiver, Integration: integration, Outcome: journal.OutcomeSent}
	}
	var entries []journal.Entry
	rs, msg := decidedAt(p, t0, sloAlert("p1", "page", "firing", t0), sloAlert("t1", "ticket", "firing", t0))
	page, ticket := journal.FromResult(msg, rs[0]), journal.FromResult(msg, rs[1])
	page.Deliveries = []journal.Delivery{sent("pagerduty", "pagerduty/0"), sent("slack-triage", "slack/0")}
	if !ticket.Suppressed {
		t.Fatalf("the ticket was not suppressed by its page: %+v", ticket)
	}
	entries = append(entries, page, ticket)
	rs, msg = decidedAt(p, t0.Add(time.Hour), sloAlert("t1", "ticket", "resolved", t0))
	resolve := journal.FromResult(msg, rs[0])
	resolve.Deliveries = []journal.Delivery{sent("slack-triage", "slack/0")}
	entries = append(entries, resolve)
	opts := journal.Options{Integrations: map[string][]journal.Integration{
		"pagerduty":    {{Type: "pagerduty", SendResolved: true}},
		"slack-triage": {{Type: "slack", SendResolved: true}},
	}}
	if rep := journal.Simulate(entries, evaluateAt(p), opts); rep.Changed != 0 {
		t.Fatalf("the config in force: %d changed %v %+v, want none", rep.Changed, rep.Counts, rep.Changes)
	}
}

// Alertmanager retries a webhook one integration of failed (PagerDuty
// answered 429 or 5xx): the retry delivers PagerDuty again and Slack's copy
// is deduplicated, so the page's latest entry journals PagerDuty alone. The
// simulator compared the candidate against that entry only and reported
// the configuration in force as a change (`integrations`: Slack added) after
// every partial failure; it compares against what the episode's entries
// delivered together.
func TestSimulateSameConfigAfterAPartialFailureRetried(t *testing.T) {
	p := readmePipeline(t, config.LoadDefault().Policies)
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	delivery := func(receiver, integration, outcome string) journal.Delivery {
		return journal.Delivery{Receiver: receiver, Integration: integration, Outcome: outcome}
	}
	rs, msg := decidedAt(p, t0, sloAlert("p1", "page", "firing", t0))
	first := journal.FromResult(msg, rs[0])
	first.Deliveries = []journal.Delivery{delivery("pagerduty", "pagerduty/0", journal.OutcomeDeadLetter), delivery("slack-triage", "slack/0", journal.OutcomeSent)}
	rs, msg = decidedAt(p, t0.Add(10*time.Second), sloAlert("p1", "page", "firing", t0))
	retry := journal.FromResult(msg, rs[0])
	retry.Deliveries = []journal.Delivery{delivery("pagerduty", "pagerduty/0", journal.OutcomeSent)}
	opts := journal.Options{Integrations: map[string][]journal.Integration{
		"pagerduty":    {{Type: "pagerduty", SendResolved: true}},
		"slack-triage": {{Type: "slack", SendResolved: true}},
	}}
	if rep := journal.Simulate([]journal.Entry{first, retry}, evaluateAt(p), opts); rep.Changed != 0 {
		t.Fatalf("the config in force: %d changed %v %+v, want none", rep.Changed, rep.Counts, rep.Changes)
	}
	// A candidate without Slack is still a change.
	opts.Integrations["slack-triage"] = nil
	if rep := journal.Simulate([]journal.Entry{first, retry}, evaluateAt(p), opts); rep.Counts["integrations"] != 1 {
		t.Fatalf("a candidate without Slack's integration: %v %+v, want an integrations change", rep.Counts, rep.Changes)
	}
}

// A firing paged, then decided none within the same episode (its burn rates
// fell), then resolved where its page went: under the config in force
// nothing changes. The page's deliveries were merged into the none's entry
// (an "integrations" change), and the resolve was compared against where
// the latest decision alone routed it (another) — a review counted 14
// phantom changes in 546 entries, 1,164 in 14,581.
func TestSimulateSameConfigWhenAFiringIsDecidedAgain(t *testing.T) {
	p := readmePipeline(t, config.LoadDefault().Policies)
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	sent := func(receiver, integration string) journal.Delivery {
		return journal.Delivery{Receiver: receiver, Integration: integration, Outcome: journal.OutcomeSent}
	}
	burn := func(status, long, short string) alert.Alert {
		a := alert.Alert{Alert: template.Alert{Status: status, Fingerprint: "b1", StartsAt: t0,
			Labels:      template.KV{"alertname": "GatewayBurn", "service": "gateway"},
			Annotations: template.KV{"burn_rate_1h": long, "burn_rate_5m": short}}}
		if status == "resolved" {
			a.EndsAt = t0.Add(2 * time.Hour)
		}
		return a
	}
	rs, msg := decidedAt(p, t0, burn("firing", "20", "16"))
	page := journal.FromResult(msg, rs[0])
	page.Deliveries = []journal.Delivery{sent("pagerduty", "pagerduty/0"), sent("slack-triage", "slack/0")}
	rs, msg = decidedAt(p, t0.Add(time.Minute), burn("firing", "0.5", "0.5"))
	calm := journal.FromResult(msg, rs[0])
	rs, msg = decidedAt(p, t0.Add(time.Hour), burn("resolved", "0.5", "0.5"))
	resolve := journal.FromResult(msg, rs[0])
	resolve.Deliveries = []journal.Delivery{sent("pagerduty", "pagerduty/0"), sent("slack-triage", "slack/0")}
	if page.Decision.Action != alert.ActionPage || calm.Decision.Action != alert.ActionNone {
		t.Fatalf("decisions %s then %s, want page then none", page.Decision.Action, calm.Decision.Action)
	}
	opts := journal.Options{Integrations: map[string][]journal.Integration{
		"pagerduty":    {{Type: "pagerduty", SendResolved: true}},
		"slack-triage": {{Type: "slack", SendResolved: true}},
	}}
	if rep := journal.Simulate([]journal.Entry{page, calm, resolve}, evaluateAt(p), opts); rep.Changed != 0 {
		t.Fatalf("the config in force: %d changed %v %+v, want none", rep.Changed, rep.Counts, rep.Changes)
	}
}
