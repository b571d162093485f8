package slack_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// /alertrouter incidents lists the incidents that were notified — not the
// alerts decided none, suppressed or muted, which were sent nowhere — and
// reads the whole day: an incident older than thousands of newer decisions
// is still listed (it stopped at the newest 5,000 entries while saying
// "last 1d"). When the reading bound is hit, the answer says so.
func TestIncidentsListsNotifiedIncidentsOfTheWholeDay(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	entries := []journal.Entry{
		{Fingerprint: "real", Status: "firing", Incident: "llm/chat/TTFT", Labels: map[string]string{"alertname": "TTFTHigh", "job": "vllm"},
			Decision: alert.Decision{Action: alert.ActionPage}, Deliveries: []journal.Delivery{{Receiver: "triage", Integration: "pagerduty/0", Outcome: journal.OutcomeSent}}},
		{Fingerprint: "inhibited", Status: "firing", Incident: "llm/chat/ITL", Labels: map[string]string{"alertname": "ITLHigh", "job": "vllm"},
			Decision: alert.Decision{Action: alert.ActionTicket}, Suppressed: true, SuppressedBy: "TTFTHigh"},
		{Fingerprint: "muted", Status: "firing", Incident: "batch/etl/LAG", Labels: map[string]string{"alertname": "LagHigh", "job": "etl"},
			Decision: alert.Decision{Action: alert.ActionTicket}, Muted: true, MutedBy: "weekends"},
	}
	for i := 0; i < 5001; i++ {
		entries = append(entries, journal.Entry{Fingerprint: fmt.Sprintf("noise-%d", i), Status: "firing", Incident: fmt.Sprintf("noise/n%d/INFO", i/100),
			Labels: map[string]string{"alertname": "NoiseInfo", "instance": fmt.Sprintf("n%d", i)}, Decision: alert.Decision{Action: alert.ActionNone}})
	}
	j := journalOf(t, e.store, entries...)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}

	a := e.commandAnswer(t, tr, "incidents", "i1", "U123")
	if want := "*Firing incidents of this channel* (last 1d) — `/alertrouter incidents all` lists every channel's:\n• `llm/chat/TTFT` · page · 1 firing · TTFTHigh"; a.Text != want {
		t.Fatalf("incidents answered\n%s\nwant\n%s", a.Text, want)
	}

	// Past the bound, the answer says how much it read: the incident older
	// than the newest 1000 decisions is not in it.
	slack.SetMaxJournalRead(t, 1000)
	a = e.commandAnswer(t, tr, "incidents", "i2", "U123")
	if !strings.Contains(a.Text, "newest 1000 decisions only") || strings.Contains(a.Text, "noise/") || strings.Contains(a.Text, "llm/chat/TTFT") {
		t.Fatalf("incidents past the bound answered %q", a.Text)
	}
	// A filtered look-up is bound by the decisions it reads, not by those
	// it matches: explain read the whole window (seconds of CPU per
	// 100,000 decisions, from one user), and found an alert past the bound.
	if a = e.commandAnswer(t, tr, "explain real all", "i3", "U123"); !strings.Contains(a.Text, "No decision about fingerprint `real`") {
		t.Fatalf("explain of an alert older than the newest 1000 decisions answered %q; want it past the bound", a.Text)
	}
	// One command reads the journal at a time (twenty at once took both
	// cores from the webhooks): another waits a little, then is told.
	slack.HoldCommandSlot(t, tr)
	if a = e.commandAnswer(t, tr, "incidents", "i4", "U123"); !strings.Contains(a.Text, "Busy: another `/alertrouter` command is reading the decision journal") {
		t.Fatalf("a command while another reads the journal answered %q; want busy", a.Text)
	}
	if a = e.commandAnswer(t, tr, "help", "i5", "U123"); strings.Contains(a.Text, "Busy") {
		t.Fatalf("help, which reads no journal, answered %q", a.Text)
	}
}
