package journal_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/policies"
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
	rep := journal.Simulate(entries, candidate.Evaluate)

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
	rep := journal.Simulate(entries, p.Evaluate)
	if rep.Changed != 0 || rep.Alerts != len(msg.Items) {
		t.Fatalf("same config: %d of %d changed: %+v", rep.Changed, rep.Alerts, rep.Changes)
	}
}
