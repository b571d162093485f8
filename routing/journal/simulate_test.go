package journal_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// strictPages is the default policy with every page threshold raised out of
// reach: burn-rate page tiers need a 1000× burn, capacity pages above
// 99.9 %, and a critical severity label only tickets.
func strictPages() policies.Config {
	pc := config.LoadDefault().Policies
	for i := range pc.BurnRate.Tiers {
		if pc.BurnRate.Tiers[i].Action == alert.ActionPage {
			pc.BurnRate.Tiers[i].Factor = 1000
		}
	}
	pc.Capacity.Critical = 0.999
	for _, th := range []*policies.Thresholds{&pc.Regression.Sensitivities.High, &pc.Regression.Sensitivities.Medium, &pc.Regression.Sensitivities.Low} {
		th.Critical = 1000
	}
	for k, v := range pc.Severity {
		if v == alert.ActionPage {
			pc.Severity[k] = alert.ActionTicket
		}
	}
	for k, v := range pc.Sloth {
		if v == alert.ActionPage {
			pc.Sloth[k] = alert.ActionTicket
		}
	}
	for i := range pc.Pyrra.Windows {
		if pc.Pyrra.Windows[i].Action == alert.ActionPage {
			pc.Pyrra.Windows[i].Action = alert.ActionTicket
		}
	}
	return pc
}

func TestSimulateRaisedPageThresholdsTurnPagesIntoTickets(t *testing.T) {
	// The journal of the corpus under today's config, written as a replica
	// would, Alertmanager's repeat included (the same alerts twice).
	msg := decodeFile(t, "hundred.json")
	current := pipeline(t, config.LoadDefault().Policies)
	var entries []journal.Entry
	pages := 0
	for range 2 {
		for _, r := range current.Evaluate(msg) {
			entries = append(entries, journal.FromResult(msg, r))
			if r.Decision.Action == alert.ActionPage && len(entries) <= len(msg.Items) {
				pages++
			}
		}
	}
	if pages == 0 {
		t.Fatal("corpus has no page: the test would prove nothing")
	}
	t.Logf("corpus: %d alerts, %d pages", len(msg.Items), pages)
	candidate := pipeline(t, strictPages())
	rep := journal.Simulate(entries, candidate.Evaluate, journal.Options{})

	if rep.Alerts != len(msg.Items) {
		t.Fatalf("decided %d alerts again, want %d (repeats count once)", rep.Alerts, len(msg.Items))
	}
	if got := rep.Counts["page→ticket"]; got != pages {
		t.Fatalf("page→ticket = %d, want every page of the corpus: %d (counts %v)", got, pages, rep.Counts)
	}
	if got := rep.Counts["ticket→page"]; got != 0 {
		t.Fatalf("ticket→page = %d, want 0", got)
	}
	perSector := 0
	for _, c := range rep.BySector {
		perSector += c["page→ticket"]
	}
	perPolicy := 0
	for _, c := range rep.ByPolicy {
		perPolicy += c["page→ticket"]
	}
	if perSector != pages || perPolicy != pages {
		t.Fatalf("per-sector total %d, per-policy total %d, want %d each", perSector, perPolicy, pages)
	}
	for _, c := range rep.Changes {
		if c.Before.Action == alert.ActionPage && (c.After.Action != alert.ActionTicket || len(c.Reasons) == 0) {
			t.Fatalf("change %+v: a page did not become an explained ticket", c)
		}
	}

	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| page→ticket |", "## By sector", "## By policy (before)", "## Changed alerts"} {
		if !strings.Contains(md.String(), want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	b, err := json.Marshal(rep)
	if err != nil || !bytes.Contains(b, []byte(`"page→ticket"`)) {
		t.Fatalf("json report %s, %v", b, err)
	}
}

func TestSimulateSameConfigChangesNothing(t *testing.T) {
	msg := decodeFile(t, "mixed.json")
	p := pipeline(t, config.LoadDefault().Policies)
	var entries []journal.Entry
	for _, r := range p.Evaluate(msg) {
		entries = append(entries, journal.FromResult(msg, r))
	}
	rep := journal.Simulate(entries, p.Evaluate, journal.Options{})
	if rep.Changed != 0 || rep.Alerts != len(msg.Items) {
		t.Fatalf("same config: %d of %d changed: %+v", rep.Changed, rep.Alerts, rep.Changes)
	}
}

// readmePipeline decides with pc through the README's route tree (page to
// PagerDuty and Slack, ticket to Slack), the config of the audit's repro.
func readmePipeline(t *testing.T, pc policies.Config) *routing.Pipeline {
	t.Helper()
	cfg, err := config.Load(filepath.Join("testdata", "readme-routes.yml"))
	if err != nil {
		t.Fatal(err)
	}
	p := pipeline(t, pc)
	p.Routes = cfg.Route
	return p
}

func readJSONL(t *testing.T, file string) []journal.Entry {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var entries []journal.Entry
	for line := range strings.SplitSeq(strings.TrimSpace(string(body)), "\n") {
		var e journal.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	return entries
}

// A suppressed ticket journaled without its page — by the replica of an HA
// pair whose copy of the page was deduplicated, or by one replica
// re-journaling the unchanged suppression an hour later — is still
// suppressed under the config in force: the page of an earlier webhook
// suppresses it, as the pipeline's cross-payload suppression did.
func TestSimulateUnchangedConfigKeepsSuppressionAcrossWebhooks(t *testing.T) {
	for _, file := range []string{"ha-suppressed.jsonl", "hourly-suppressed.jsonl"} {
		t.Run(file, func(t *testing.T) {
			entries := readJSONL(t, file)
			rep := journal.Simulate(entries, readmePipeline(t, config.LoadDefault().Policies).Evaluate, journal.Options{})
			if rep.Alerts != 2 || rep.Changed != 0 {
				t.Fatalf("unchanged config: %d alerts, %d changed %v, want 2 alerts, 0 changed", rep.Alerts, rep.Changed, rep.Counts)
			}
			// A candidate that turns the page into a ticket does lift the
			// suppression: a real change is still reported.
			rep = journal.Simulate(entries, readmePipeline(t, strictPages()).Evaluate, journal.Options{})
			if rep.Counts["unsuppressed"] != 1 || rep.Counts["page→ticket"] != 1 {
				t.Fatalf("strict candidate: counts %v, want page→ticket 1 and unsuppressed 1", rep.Counts)
			}
		})
	}
}

// A ticket suppressed by a page that paged before the entries read is
// assumed still suppressed, and the report says so.
func TestSimulateSuppressorOutsideTheEntriesIsAssumed(t *testing.T) {
	entries := readJSONL(t, "ha-suppressed.jsonl")[2:] // replica b's ticket alone
	rep := journal.Simulate(entries, readmePipeline(t, config.LoadDefault().Policies).Evaluate, journal.Options{})
	if rep.Changed != 0 || rep.AssumedSuppressed != 1 {
		t.Fatalf("changed %d %v, assumed %d; want 0 changed, 1 assumed", rep.Changed, rep.Counts, rep.AssumedSuppressed)
	}
	var b bytes.Buffer
	if err := rep.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "assumed still suppressed") {
		t.Fatalf("report does not say a suppression was assumed:\n%s", b.String())
	}
}

// Alerts' text reaches the terminal and the Markdown report inert: no
// escape sequence, no row broken by a newline or a |, no HTML.
func TestReportTextIsInert(t *testing.T) {
	hostile := "Esc\x1b[2J\x1b]0;pwned\x07Probe\n| 2026 | FAKE row <script>alert(1)</script> `x` \u202e\xff"
	if got := journal.TerminalSafe(hostile); strings.ContainsAny(got, "\x1b\x07\n\u202e") || !strings.Contains(got, `\x1b[2J`) || !strings.Contains(got, `\u202e`) || !strings.Contains(got, `\xff`) {
		t.Fatalf("TerminalSafe = %q", got)
	}
	rep := &journal.Report{Alerts: 1, Changed: 1, Counts: map[string]int{"page→ticket": 1},
		BySector: map[string]map[string]int{"x\x1b[31m": {"page→ticket": 1}}, ByPolicy: map[string]map[string]int{"severity": {"page→ticket": 1}},
		Changes: []journal.Change{{Fingerprint: "0123456789abcdef", Alertname: hostile, Sector: "x\x1b[31m", Kinds: []string{"page→ticket"},
			Before: journal.Outcome{Action: alert.ActionPage, Policy: "severity", Receivers: []string{"a|b"}}, After: journal.Outcome{Action: alert.ActionTicket, Policy: "severity"}}}}
	var b bytes.Buffer
	if err := rep.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if strings.ContainsAny(md, "\x1b\x07\u202e<>") || strings.Contains(md, "<script") {
		t.Fatalf("the report carries raw control characters or HTML:\n%q", md)
	}
	for _, line := range strings.Split(strings.TrimSpace(md), "\n") {
		if strings.HasPrefix(line, "| 0001") || strings.HasPrefix(line, "| ") && strings.Contains(line, "Probe") {
			// One row for the change, with its 8 cells: 9 unescaped pipes.
			if n := strings.Count(line, "|") - strings.Count(line, `\|`); n != 9 {
				t.Errorf("the change's row has %d cell separators, want 9: %q", n, line)
			}
		}
	}
	if !strings.Contains(md, "&lt;script&gt;") {
		t.Errorf("the alertname's HTML is not escaped:\n%s", md)
	}
}

// sloAlert is an alert of one Sloth SLO: sev "page" or "ticket".
func sloAlert(fp, sev, status string, starts time.Time) alert.Alert {
	a := alert.Alert{Alert: template.Alert{Status: status, Fingerprint: fp, StartsAt: starts,
		Labels:      template.KV{"alertname": "APIErrorBudgetBurn", "sloth_id": "gw-availability", "sloth_severity": sev, "service": "gateway"},
		Annotations: template.KV{}}}
	if status == "resolved" {
		a.EndsAt = starts.Add(2 * time.Hour)
	}
	return a
}

// decidedAt decides items as one webhook received at at.
func decidedAt(p *routing.Pipeline, at time.Time, items ...alert.Alert) ([]*alert.Result, *alert.Message) {
	msg := &alert.Message{GroupKey: "g", ReceivedAt: at, Items: items}
	p.Now = func() time.Time { return at }
	return p.Evaluate(msg), msg
}

// A page that fired before the period read suppressed a ticket in it and
// resolves in it: under the config in force nothing changes (its resolve
// made it "seen", and the ticket came out unsuppressed).
func TestSimulateASuppressorResolvedInThePeriodIsNoChange(t *testing.T) {
	p := readmePipeline(t, config.LoadDefault().Policies)
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	rs, msg := decidedAt(p, t0.Add(time.Hour), sloAlert("t1", "ticket", "firing", t0))
	rs[0].SuppressedBy = "page APIErrorBudgetBurn (p1) of SLO " + rs[0].Decision.SLO // the pipeline's cross-payload suppression
	entries := []journal.Entry{journal.FromResult(msg, rs[0])}
	rs, msg = decidedAt(p, t0.Add(2*time.Hour), sloAlert("p1", "page", "resolved", t0.Add(-time.Hour)))
	entries = append(entries, journal.FromResult(msg, rs[0]))
	if rep := journal.Simulate(entries, p.Evaluate, journal.Options{}); rep.Changed != 0 {
		t.Fatalf("same config: %d changed %v (assumed %d), want 0", rep.Changed, rep.Counts, rep.AssumedSuppressed)
	}
}

// A muted page (routed to a blackhole) was notified nowhere, so the
// pipeline kept no SLO page and a later ticket of the SLO was sent: the
// simulation must not report that ticket suppressed.
func TestSimulateAMutedPageSuppressesNothing(t *testing.T) {
	cfg, err := config.Load(filepath.Join("testdata", "blackhole-routes.yml"))
	if err != nil {
		t.Fatal(err)
	}
	p := pipeline(t, config.LoadDefault().Policies)
	p.Routes = cfg.Route
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	rs, msg := decidedAt(p, t0, sloAlert("p1", "page", "firing", t0))
	if rs[0].MutedBy == "" {
		t.Fatalf("the page is not muted (receivers %v): the test needs a blackhole", rs[0].Receivers)
	}
	entries := []journal.Entry{journal.FromResult(msg, rs[0])}
	rs, msg = decidedAt(p, t0.Add(time.Hour), sloAlert("t1", "ticket", "firing", t0))
	entries = append(entries, journal.FromResult(msg, rs[0]))
	if rep := journal.Simulate(entries, p.Evaluate, journal.Options{}); rep.Changed != 0 {
		t.Fatalf("same config: %d changed %v: %+v", rep.Changed, rep.Counts, rep.Changes)
	}
}
