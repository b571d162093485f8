package slack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// An incident whose first alert (the one its message was drawn with)
// resolved after a second joined: the Silence button muted the second and,
// as the journal held no firing alert with the message's labels, the first
// too — a silence {alertname="DiskFull", instance="db-1", …} that held the
// page of DiskFull firing again (audit B, s9b). The journal shows the first
// resolved: it is not silenced, and pages again when it fires again.
func TestASilenceDoesNotMuteTheMessagesAlertThatResolved(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	incident := "storage/chg2/DISK"
	x1 := map[string]string{"alertname": "DiskFull", "instance": "db-1", "service": "chg2", "severity": "critical"}
	x2 := map[string]string{"alertname": "HighLatency", "instance": "api-1", "service": "chg2", "severity": "critical"}
	am.fire(t, x2) // X1 resolved: Alertmanager holds X2 alone
	j := journalOf(t, e.store, pageEntry(incident, "x1", "firing", x1), pageEntry(incident, "x2", "firing", x2), pageEntry(incident, "x1", "resolved", x1))
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	drawn, _ := json.Marshal(map[string]any{"r": "triage", "g": "slack/0", "i": incident, "p": true, "l": x1})
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700003000.000001", Value: string(drawn)}, signingSecret, e.now(), nil)

	list, err := am.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("%d silences %+v, want 1: HighLatency's (answers %+v)", len(list), list, e.h.srv.Responses())
	}
	for _, s := range list {
		if amsilence.Matches(s.Matchers, x1) {
			t.Fatalf("silence %s (%s) mutes DiskFull, which resolved: it would not page when it fires again", s.ID, amsilence.Text(s.Matchers))
		}
	}
	thread := e.h.srv.Thread(e.parent.TS)
	if len(thread) != 1 || !strings.Contains(thread[0].Text, "have resolved since") || strings.Contains(thread[0].Text, "holds 1 of the 2") {
		t.Fatalf("thread = %+v, want the resolved alerts said not silenced, and no warning of alerts Alertmanager lacks", thread)
	}

	// DiskFull fires again: it is not muted, HighLatency is.
	am.fire(t, x1)
	am.awaitMuted(t, []map[string]string{x1, x2}, x2)
}

// The message's alert fired again after its resolve (its newest decision in
// the journal is a firing): it is one of the incident's firing alerts, and
// silenced.
func TestASilenceMutesTheMessagesAlertFiringAgainAfterItsResolve(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	incident := "storage/chg3/DISK"
	x1 := map[string]string{"alertname": "DiskFull", "instance": "db-1", "service": "chg3", "severity": "critical"}
	x2 := map[string]string{"alertname": "HighLatency", "instance": "api-1", "service": "chg3", "severity": "critical"}
	all := []map[string]string{x1, x2}
	am.fire(t, all...)
	j := journalOf(t, e.store, pageEntry(incident, "x1", "firing", x1), pageEntry(incident, "x2", "firing", x2), pageEntry(incident, "x1", "resolved", x1), pageEntry(incident, "x1", "firing", x1))
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	drawn, _ := json.Marshal(map[string]any{"r": "triage", "g": "slack/0", "i": incident, "p": true, "l": x1})
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700003100.000001", Value: string(drawn)}, signingSecret, e.now(), nil)
	am.awaitMuted(t, all, x1, x2)
	if thread := e.h.srv.Thread(e.parent.TS); len(thread) != 1 || strings.Contains(thread[0].Text, "have resolved since") {
		t.Fatalf("thread = %+v, want the silence recorded without saying the message's alerts resolved", thread)
	}
}

// pageEntry is a journal entry of a paged alert of incident sent to the
// triage receiver.
func pageEntry(incident, fp, status string, labels map[string]string) journal.Entry {
	return journal.Entry{Fingerprint: fp, Status: status, Receivers: []string{"triage"}, Incident: incident, Labels: labels,
		Decision: alert.Decision{Action: alert.ActionPage}}
}
