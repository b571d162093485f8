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

// The 30-team audit: team-11's routes mute its alerts (mute_time_intervals),
// so its NodeDiskFull, in team-02's incident, is journaled with no
// receiver. The Silence button of team-02's message counted an entry
// naming no receiver as team-02's own: the silence muted team-11's alert,
// made by a team-02 user, without team-11's authorized.silence. An alert
// routed to no receiver is not the button's: it is spared (team=""), as
// another team's is, and the thread says one alert was left out.
func TestASilenceButtonSparesAnIncidentsAlertRoutedNowhere(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	incident := "NodeDiskFull/NodeDiskFull/prod-eu1/node-exporter"
	team02 := map[string]string{"alertname": "NodeDiskFull", "cluster": "prod-eu1", "service": "node-exporter", "instance": "n-1"}
	team11 := map[string]string{"alertname": "NodeDiskFull", "cluster": "prod-eu1", "service": "node-exporter", "instance": "n-1", "team": "team-11"}
	all := []map[string]string{team02, team11}
	am.fire(t, all...)
	j := journalOf(t, e.store,
		journal.Entry{Fingerprint: "f02", Status: "firing", Incident: incident, Labels: team02, Decision: alert.Decision{Action: alert.ActionPage}, Receivers: []string{"triage", "team-02-pd"}},
		journal.Entry{Fingerprint: "f11", Status: "firing", Incident: incident, Labels: team11, Decision: alert.Decision{Action: alert.ActionPage}, Muted: true, MutedBy: "always"})
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	drawn, _ := json.Marshal(map[string]any{"r": "triage", "g": "slack/0", "i": incident, "l": team02})
	e.click(t, tr, e.parent, slacktest.Click{User: "U0TEAM02A", UserName: "ann", ActionID: "alertrouter:silence:1h", ActionTS: "1700004000.000001", Value: string(drawn)}, signingSecret, e.now(), nil)
	am.awaitMuted(t, all, team02)
	list, err := am.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("silences %+v (%v), want one (answers %+v)", list, err, e.h.srv.Responses())
	}
	if got := amsilence.Text(list[0].Matchers); !strings.Contains(got, `team=""`) {
		t.Errorf("silence matches %s, want team-11's alert spared with team=\"\"", got)
	}
	thread := e.h.srv.Thread(e.parent.TS)
	if len(thread) != 1 || !strings.Contains(thread[0].Text, "1 firing alert of the incident was not silenced") {
		t.Errorf("thread %+v, want the reply to say 1 alert was left out", thread)
	}
}
