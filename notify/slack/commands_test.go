package slack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

func TestSlashCommand(t *testing.T) {
	am := silences(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	j := journalOf(t, e.store,
		journal.Entry{Fingerprint: "aaa", Status: "firing", Receivers: []string{"triage"}, Incident: "inc/1", Labels: map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1"},
			Decision:   alert.Decision{Action: alert.ActionPage, Policy: "burn-rate", Tier: "fast", Reasons: []string{"burn rate 15.2 over 1h"}},
			Deliveries: []journal.Delivery{{Receiver: "triage", Integration: "pagerduty/0", Outcome: journal.OutcomeSent}}},
		journal.Entry{Fingerprint: "bbb", Status: "firing", Receivers: []string{"triage"}, Incident: "inc/1", Labels: map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-2"}, Decision: alert.Decision{Action: alert.ActionPage}},
		journal.Entry{Fingerprint: "ccc", Status: "firing", Receivers: []string{"triage"}, Incident: "inc/2", Labels: map[string]string{"alertname": "Old", "job": "x"}, Decision: alert.Decision{Action: alert.ActionTicket}},
		journal.Entry{Fingerprint: "ccc", Status: "resolved", Receivers: []string{"triage"}, Incident: "inc/2", Labels: map[string]string{"alertname": "Old", "job": "x"}, Decision: alert.Decision{Action: alert.ActionTicket}},
	)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	run := func(text, trigger, secret string) int {
		t.Helper()
		body := e.h.srv.Command(slacktest.SlashCommand{Command: "/alertrouter", Text: text, User: "U123", UserName: "jdoe", Channel: e.parent.Channel, TriggerID: trigger})
		return e.send(t, tr, slacktest.Sign(secret, e.now(), body), body, nil)
	}
	answer := func(trigger string) slacktest.Response {
		t.Helper()
		for _, r := range e.h.srv.Responses() {
			if r.ID == trigger {
				return r
			}
		}
		t.Fatalf("no answer to %s: %+v", trigger, e.h.srv.Responses())
		return slacktest.Response{}
	}

	if code := run("incidents", "t0", "wrong-secret"); code != http.StatusUnauthorized {
		t.Fatalf("unsigned command answered %d", code)
	}
	run("explain aaa", "t1", signingSecret)
	if a := answer("t1"); a.ResponseType != "ephemeral" || !strings.Contains(a.Text, "burn-rate") || !strings.Contains(a.Text, "pagerduty/0: sent") {
		t.Fatalf("explain: %+v", a)
	}
	run("incidents", "t2", signingSecret)
	if a := answer("t2"); !strings.Contains(a.Text, "`inc/1` · page · 2 firing · TTFTHigh") || strings.Contains(a.Text, "inc/2") {
		t.Fatalf("incidents: %+v", a)
	}
	run("silence inc/1 2h", "t3", signingSecret)
	run("silence inc/1 2h", "t3", signingSecret) // Slack's retry of the same invocation
	list, err := am.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("silences = %+v, %v (answers %+v)", list, err, e.h.srv.Responses())
	}
	// The labels the firing alerts share, and exactly their instances: no
	// other instance of the rule is muted.
	if got := amsilence.Text(list[0].Matchers); got != `{alertname="TTFTHigh", instance=~"gpu-1|gpu-2", job="vllm"}` {
		t.Fatalf("matchers = %s, want the labels the incident's firing alerts share and their instances", got)
	}
	if a := answer("t3"); a.ResponseType != "in_channel" || !strings.Contains(a.Text, list[0].ID) {
		t.Fatalf("silence answer: %+v", a)
	}
	run("silence inc/2 2h", "t4", signingSecret)
	if a := answer("t4"); !strings.Contains(a.Text, "No firing alert") {
		t.Fatalf("silence of a resolved incident: %+v", a)
	}
	run("silence inc/1 forever", "t5", signingSecret)
	if a := answer("t5"); !strings.Contains(a.Text, "no duration") {
		t.Fatalf("bad duration: %+v", a)
	}
	run("reboot", "t6", signingSecret)
	if a := answer("t6"); !strings.Contains(a.Text, "Usage:") {
		t.Fatalf("unknown subcommand: %+v", a)
	}
	run("silence inc/1 30s", "t7", signingSecret)
	if a := answer("t7"); !strings.Contains(a.Text, "no duration between 1m") {
		t.Fatalf("a 30s silence: %+v, want it refused as the answer says", a)
	}
	run("Incidents", "t8", signingSecret) // phones capitalise the first word
	if a := answer("t8"); !strings.Contains(a.Text, "`inc/1`") || !strings.Contains(a.Text, "(last 1d)") {
		t.Fatalf("capitalised subcommand: %+v", a)
	}
	// Slack's certificate check of the command URL: unsigned, asks nothing.
	if code := e.send(t, tr, http.Header{}, []byte("ssl_check=1&token=xyz"), nil); code != http.StatusOK {
		t.Fatalf("ssl_check answered %d, want 200", code)
	}
	if code := e.send(t, tr, http.Header{}, []byte("ssl_check=1&command=%2Falertrouter&text=incidents"), nil); code != http.StatusUnauthorized {
		t.Fatalf("an unsigned command posing as ssl_check answered %d, want 401", code)
	}
}

// journalOf writes entries, as decisions made now, into a journal on st.
func journalOf(t *testing.T, st store.Store, entries ...journal.Entry) store.Journal {
	t.Helper()
	j := store.OpenJournal(st, "journal", store.DefaultJournalRetention)
	recs := make([]store.JournalRecord, 0, len(entries))
	for _, en := range entries {
		en.Kind, en.Time = journal.KindDecision, time.Now()
		en.Alertname = en.Labels["alertname"]
		b, _ := json.Marshal(en)
		recs = append(recs, store.JournalRecord{Kind: string(journal.KindDecision), Data: b})
	}
	if _, err := j.AppendJournal(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	return j
}
