package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// pdJournal is one page journaled as the config in force sent it: to the
// pagerduty receiver's PagerDuty and to Slack, then its resolve.
func pdJournal(t *testing.T) string {
	t.Helper()
	t0 := time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC)
	labels := map[string]string{"alertname": "DiskFull", "severity": "critical", "instance": "db1"}
	var lines []string
	for i, status := range []string{"firing", "resolved"} {
		at := t0.Add(time.Duration(i) * 10 * time.Minute)
		e := journal.Entry{Kind: journal.KindDecision, Time: at, ReceivedAt: at, GroupKey: "g", Fingerprint: "00000000000000d1",
			Alertname: "DiskFull", Status: status, Labels: labels, StartsAt: t0,
			Decision:  alert.Decision{Action: alert.ActionPage, Policy: "severity", Tier: "critical"},
			Receivers: []string{"pagerduty", "slack-triage"},
			Deliveries: []journal.Delivery{{Receiver: "pagerduty", Integration: "pagerduty/0", Outcome: journal.OutcomeSent},
				{Receiver: "slack-triage", Integration: "slack/0", Outcome: journal.OutcomeSent}}}
		if status == "resolved" {
			e.EndsAt = at
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	return writeFile(t, "journal.jsonl", strings.Join(lines, "\n")+"\n")
}

const simRoutes = `route:
  receiver: slack-triage
  routes:
    - matchers: ['decision="page"']
      receiver: pagerduty
      continue: true
    - matchers: ['decision=~"page|ticket"']
      receiver: slack-triage
`

const simSlack = `  - name: slack-triage
    slack_configs:
      - token: xoxb-bench-token
        channel: "#alerts-triage"
`

// A candidate that replaces the pagerduty receiver's PagerDuty by Slack
// (same receiver name) or stops its resolves reached "nothing changes":
// the simulator compared receiver names only. The report now says what
// each alert reaches, and how many pages would no longer reach PagerDuty.
func TestSimulateShowsIntegrationsAndSendResolved(t *testing.T) {
	export := pdJournal(t)
	for _, tc := range []struct {
		name, receiver string
		lost           int
		firing, resolv int
	}{
		{"same", "  - name: pagerduty\n    pagerduty_configs:\n      - routing_key: 0123456789abcdef0123456789abcdef\n", 0, 0, 0},
		{"pd-to-slack", "  - name: pagerduty\n    slack_configs:\n      - token: xoxb-bench-token\n        channel: \"#pages\"\n", 1, 1, 1},
		{"send-resolved-false", "  - name: pagerduty\n    pagerduty_configs:\n      - routing_key: 0123456789abcdef0123456789abcdef\n        send_resolved: false\n", 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			candidate := writeFile(t, "new.yml", simRoutes+"receivers:\n"+tc.receiver+simSlack)
			code, out, errs := runMain(t, "simulate", "--config", candidate, "--from", export, "--format", "json")
			var rep journal.Report
			if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
				t.Fatalf("exit %d, %q, %q", code, out, errs)
			}
			if rep.PagesLostToPagerDuty != tc.lost || rep.ByStatus["firing"]["integrations"] != tc.firing || rep.ByStatus["resolved"]["integrations"] != tc.resolv {
				t.Fatalf("lost to PagerDuty %d, integrations by status %v; want %d lost, %d firing and %d resolved integrations changes",
					rep.PagesLostToPagerDuty, rep.ByStatus, tc.lost, tc.firing, tc.resolv)
			}
			code, out, _ = runMain(t, "simulate", "--config", candidate, "--from", export)
			if want := "**Pages that would no longer reach PagerDuty: " + string(rune('0'+tc.lost)) + "**"; code != 0 || !strings.Contains(out, want) {
				t.Fatalf("markdown lacks %q:\n%s", want, out)
			}
		})
	}
}

// A candidate serve and check-config would refuse (a secret file that does
// not exist) was simulated as if it could run: simulate now refuses it
// with check-config's message.
func TestSimulateRefusesACandidateCheckConfigRefuses(t *testing.T) {
	export := pdJournal(t)
	candidate := writeFile(t, "new.yml", simRoutes+"receivers:\n  - name: pagerduty\n    pagerduty_configs:\n      - routing_key_file: /nonexistent/key\n"+simSlack)
	_, _, checkErr := runMain(t, "--config.file="+candidate, "check-config")
	code, out, errs := runMain(t, "simulate", "--config", candidate, "--from", export)
	if code != 1 || out != "" || !strings.Contains(errs, "receivers[0].pagerduty_configs[0].routing_key_file") || !strings.Contains(errs, "/nonexistent/key") {
		t.Fatalf("simulate of a candidate check-config refuses: exit %d, stdout %q, stderr %q; check-config said %q", code, out, errs, checkErr)
	}
}

// A candidate check-config warns of (a PagerDuty key of 31 characters, which
// PagerDuty refuses with 400) was simulated in silence, its headline "Pages
// that would no longer reach PagerDuty: 0": simulate prints check-config's
// warnings on stderr, the report unchanged.
func TestSimulatePrintsTheCandidatesWarnings(t *testing.T) {
	export := pdJournal(t)
	candidate := writeFile(t, "new.yml", simRoutes+"receivers:\n  - name: pagerduty\n    pagerduty_configs:\n      - routing_key: 0123456789abcdef0123456789abcde\n"+simSlack)
	code, out, errs := runMain(t, "simulate", "--config", candidate, "--from", export)
	if code != 0 || !strings.Contains(out, "Pages that would no longer reach PagerDuty") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if !strings.Contains(errs, "router simulate: candidate config warning:") || !strings.Contains(errs, "routing_key is 31 characters long") {
		t.Fatalf("stderr %q; want check-config's warning of the 31-character routing key", errs)
	}
	_, _, errs = runMain(t, "simulate", "--config", writeFile(t, "same.yml", simRoutes+"receivers:\n  - name: pagerduty\n    pagerduty_configs:\n      - routing_key: 0123456789abcdef0123456789abcdef\n"+simSlack), "--from", export)
	if strings.Contains(errs, "warning") {
		t.Fatalf("a candidate check-config does not warn of: stderr %q", errs)
	}
}
