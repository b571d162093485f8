package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// /alertrouter silence of an incident with no firing alert (a typo, an id
// that does not exist, an incident whose alerts resolved) silences nothing
// whoever asks: it says so before checking who may, rather than telling
// the user they are not allowed and sending them to the router's
// operators. An incident that fires is still refused to a user its
// targets do not allow, so the answers tell them nothing about which
// incidents exist that they could not find out anyway.
func TestTheSilenceCommandSaysAnIncidentHasNoFiringAlertBeforeCheckingWhoMay(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	labels := map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1"}
	delivered := []journal.Delivery{{Receiver: "triage", Integration: "slack/0", Outcome: journal.OutcomeSent}}
	j := journalOf(t, e.store,
		journal.Entry{Fingerprint: "aaa", Status: "firing", Incident: "inc/firing", Labels: labels, Decision: alert.Decision{Action: alert.ActionPage}, Receivers: []string{"triage"}, Deliveries: delivered},
		journal.Entry{Fingerprint: "bbb", Status: "resolved", Incident: "inc/resolved", Labels: map[string]string{"alertname": "Old", "job": "x"}, Decision: alert.Decision{Action: alert.ActionPage}, Receivers: []string{"triage"}, Deliveries: delivered},
	)
	metrics := slack.NewTriageMetrics(e.reg)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Journal: j, Metrics: metrics})
	if err := tr.Add("triage", "slack/0", e.notifier(t, func(c *slack.Config) {
		c.Authorized = map[string][]string{slack.ActionSilence: {"U0BOB"}}
	}), nil, nil); err != nil {
		t.Fatal(err)
	}
	for i, incident := range []string{"nonexistent/incident", "0", "inc/resolved"} {
		a := e.commandAnswer(t, tr, "silence "+incident+" 1h", "f"+string(rune('0'+i)), "U0ALICE")
		if !strings.HasPrefix(a.Text, "No firing alert of incident `"+incident+"`") || strings.Contains(a.Text, "not allowed") {
			t.Errorf("silence %s by a user on no list answered %q, want that it has no firing alert", incident, a.Text)
		}
	}
	if a := e.commandAnswer(t, tr, "silence inc/firing 1h", "f9", "U0ALICE"); !strings.Contains(a.Text, "not allowed") {
		t.Errorf("silence of a firing incident by a user on no list answered %q, want a refusal", a.Text)
	}
	if list, _ := am.List(context.Background()); len(list) != 0 {
		t.Fatalf("silences %+v, want none", list)
	}
	if got := e.actionCount(slack.ActionSilence, slack.OutcomeRefused); got != 1 {
		t.Errorf("refused %v times, want 1", got)
	}
}
