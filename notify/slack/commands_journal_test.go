package slack_test

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// A silence the slash command made is journaled as a button's is, for the
// console: who, until when, which silences.
func TestTheSilenceCommandIsJournaled(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	labels := map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1"}
	delivered := []journal.Delivery{{Receiver: "triage", Integration: "slack/0", Outcome: journal.OutcomeSent}}
	j := journalOf(t, e.store, journal.Entry{Fingerprint: "aaa", Status: "firing", Incident: "inc/firing", Labels: labels,
		Decision: alert.Decision{Action: alert.ActionPage}, Receivers: []string{"triage"}, Deliveries: delivered})
	rec := &journalRecorder{}
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: stubSilencer{}, Journal: j, Recorder: rec, Now: func() time.Time { return clock }})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	e.commandAnswer(t, tr, "silence inc/firing 2h", "c1", "U0ALICE")
	got := rec.all()
	if len(got) != 1 || got[0].Kind != journal.KindTriage || got[0].Incident != "inc/firing" || got[0].Triage == nil {
		t.Fatalf("journaled %+v", got)
	}
	if tr := *got[0].Triage; tr.Action != journal.TriageSilence || !tr.Command || tr.UserID != "U0ALICE" || tr.Silence != "s-1" || !tr.Until.Equal(clock.Add(2*time.Hour)) {
		t.Fatalf("triage = %+v", tr)
	}
}
