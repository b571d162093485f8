package slack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/amtest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// liveAlertmanager is a real Alertmanager that alerts are posted to, to see
// which ones its silences mute.
type liveAlertmanager struct {
	url string
	*amsilence.Client
}

func startAlertmanager(t *testing.T) liveAlertmanager {
	t.Helper()
	am := amtest.Start(t, "route: {receiver: none}\nreceivers: [{name: none}]\n")
	c, err := amsilence.New(amsilence.Config{URL: am.URL})
	if err != nil {
		t.Fatal(err)
	}
	return liveAlertmanager{url: am.URL, Client: c}
}

// fire posts firing alerts with these label sets.
func (am liveAlertmanager) fire(t *testing.T, alerts ...map[string]string) {
	t.Helper()
	var body []map[string]any
	for _, l := range alerts {
		body = append(body, map[string]any{"labels": l, "startsAt": time.Now().UTC()})
	}
	b, _ := json.Marshal(body)
	resp, err := http.Post(am.url+"/api/v2/alerts", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("post alerts: %s", resp.Status)
	}
}

// muted returns, per alert (amsilence.Text of its labels), the silences
// muting it now.
func (am liveAlertmanager) muted(t *testing.T) map[string][]string {
	t.Helper()
	resp, err := http.Get(am.url + "/api/v2/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var alerts []struct {
		Labels map[string]string `json:"labels"`
		Status struct {
			SilencedBy []string `json:"silencedBy"`
		} `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&alerts); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, a := range alerts {
		out[amsilence.Text(amsilence.Equal(a.Labels))] = a.Status.SilencedBy
	}
	return out
}

// awaitMuted waits until Alertmanager mutes exactly the alerts of want
// among all: it mutes them in the background, so the others are checked
// once the wanted ones are.
func (am liveAlertmanager) awaitMuted(t *testing.T, all []map[string]string, want ...map[string]string) {
	t.Helper()
	key := func(l map[string]string) string { return amsilence.Text(amsilence.Equal(l)) }
	deadline := time.Now().Add(30 * time.Second)
	for {
		m := am.muted(t)
		done := true
		for _, w := range want {
			done = done && len(m[key(w)]) > 0
		}
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	m := am.muted(t)
	for _, a := range all {
		wanted := false
		for _, w := range want {
			wanted = wanted || key(w) == key(a)
		}
		if got := len(m[key(a)]) > 0; got != wanted {
			t.Errorf("alert %s muted = %v (by %v), want %v", key(a), got, m[key(a)], wanted)
		}
	}
}

// commandAnswer runs /alertrouter text as user through tr and returns its
// answer.
func (e *triageEnv) commandAnswer(t *testing.T, tr *slack.Triage, text, trigger, user string) slacktest.Response {
	t.Helper()
	body := e.h.srv.Command(slacktest.SlashCommand{Command: "/alertrouter", Text: text, User: user, UserName: strings.ToLower(user), Channel: e.parent.Channel, TriggerID: trigger})
	e.send(t, tr, slacktest.Sign(signingSecret, e.now(), body), body, nil)
	for _, r := range e.h.srv.Responses() {
		if r.ID == trigger {
			return r
		}
	}
	t.Fatalf("no answer to %q (%s): %+v", text, trigger, e.h.srv.Responses())
	return slacktest.Response{}
}

// A silence made from Slack mutes the incident's firing alerts and no other
// alert: the auditor's cases, against a real Alertmanager. The Silence
// button's incident has two alertnames, one alert with service and the
// other with job (their common labels were {severity="critical"}: every
// critical alert was muted); the command's has two TTFT alertnames of one
// sector and service ({sector, service, severity} muted ITLHigh, another
// incident). Unsilence expires every silence the button made; an incident
// whose alerts cannot be silenced safely is refused.
func TestASilenceMutesTheIncidentsFiringAlertsAndNoOther(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	vllm := map[string]string{"alertname": "VLLMTimeToFirstTokenHigh", "service": "chat", "severity": "critical", "instance": "a"}
	p99 := map[string]string{"alertname": "TimeToFirstTokenP99High", "job": "chat", "severity": "critical", "instance": "b"}
	otherTeam := map[string]string{"alertname": "PagerTestOtherTeam", "service": "payments", "severity": "critical"}
	vllmElsewhere := map[string]string{"alertname": "VLLMTimeToFirstTokenHigh", "service": "chat", "severity": "critical", "instance": "c"}
	ttft := map[string]string{"alertname": "TTFTHigh", "sector": "llm", "service": "chat", "severity": "warning"}
	ttftP99 := map[string]string{"alertname": "TTFTP99High", "sector": "llm", "service": "chat", "severity": "warning"}
	itl := map[string]string{"alertname": "ITLHigh", "sector": "llm", "service": "chat", "severity": "warning"}
	watchdog := map[string]string{"alertname": "Watchdog"}
	all := []map[string]string{vllm, p99, otherTeam, vllmElsewhere, ttft, ttftP99, itl, watchdog}
	am.fire(t, all...)

	firing := func(fp, incident string, labels map[string]string) journal.Entry {
		return journal.Entry{Fingerprint: fp, Status: "firing", Receivers: []string{"triage"}, Incident: incident, Labels: labels, Decision: alert.Decision{Action: alert.ActionPage}}
	}
	j := journalOf(t, e.store,
		firing("f1", "llm-inference-gpu/chat/TTFT", vllm),
		firing("f2", "llm-inference-gpu/chat/TTFT", p99),
		firing("f3", "payments/payments/PAGER", otherTeam),
		firing("f4", "llm/chat/TTFT", ttft),
		firing("f5", "llm/chat/TTFT", ttftP99),
		firing("f6", "llm/chat/ITL", itl),
		firing("f7", "meta/watchdog/W", watchdog),
	)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}

	// The message was drawn with the first alert's labels, as the router
	// draws an incident opened by it.
	drawn, _ := json.Marshal(map[string]any{"r": "triage", "g": "slack/0", "i": "llm-inference-gpu/chat/TTFT", "p": true, "l": vllm})
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700000800.000001", Value: string(drawn)}, signingSecret, e.now(), nil)
	am.awaitMuted(t, all, vllm, p99)
	byButton, err := am.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(byButton) != 2 {
		t.Fatalf("the button made %d silences, want one per alertname: %+v (answers %+v)", len(byButton), byButton, e.h.srv.Responses())
	}
	thread := e.h.srv.Thread(e.parent.TS)
	if len(thread) != 1 || !strings.Contains(thread[0].Text, byButton[0].ID) || !strings.Contains(thread[0].Text, byButton[1].ID) {
		t.Fatalf("thread = %+v, want both silences named", thread)
	}

	if a := e.commandAnswer(t, tr, "silence llm/chat/TTFT 1h", "s1", "U123"); a.ResponseType != "in_channel" || !strings.Contains(a.Text, `alertname=~"TTFTHigh|TTFTP99High"`) {
		t.Fatalf("silence command answered %+v", a)
	}
	am.awaitMuted(t, all, vllm, p99, ttft, ttftP99)

	// One alert and only its name: no silence (it would mute every
	// Watchdog of every Prometheus).
	if a := e.commandAnswer(t, tr, "silence meta/watchdog/W 1h", "s2", "U123"); !strings.Contains(a.Text, "Nothing was silenced") || !strings.Contains(a.Text, "fewer than 2 matchers") {
		t.Fatalf("silence of a lone alertname answered %+v", a)
	}
	if list, _ := am.List(context.Background()); len(list) != 3 {
		t.Fatalf("%d silences, want 3 (none for the lone alertname)", len(list))
	}

	// Unsilence expires both of the button's silences.
	e.click(t, tr, e.current(t), slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:unsilence", ActionTS: "1700000800.000002"}, signingSecret, e.now(), nil)
	for _, s := range byButton {
		if got, err := am.Get(context.Background(), s.ID); err != nil || got.Status.State != "expired" {
			t.Fatalf("after unsilence, silence %s is %+v (%v), want expired (answers %+v)", s.ID, got.Status, err, e.h.srv.Responses())
		}
	}
	am.awaitMuted(t, all, ttft, ttftP99)
}

// Without the incident's alerts in the journal, the Silence button falls
// back on the labels its message was drawn with only when they name an
// alertname: {sector, service, severity}, the common labels of two
// alertnames, would mute other incidents'.
func TestASilenceClickWithoutTheJournalRefusesLabelsNamingNoAlertname(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	forged := `{"r":"triage","g":"slack/0","i":"llm/chat/TTFT","p":true,"l":{"sector":"llm","service":"chat","severity":"warning"}}`
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700000810.000001", Value: forged}, signingSecret, e.now(), nil)
	if list, _ := am.List(context.Background()); len(list) != 0 {
		t.Fatalf("silences %+v, want none", list)
	}
	if r := e.h.srv.Responses(); len(r) != 1 || !strings.Contains(r[0].Text, "Nothing was silenced") || !strings.Contains(r[0].Text, "no alertname") {
		t.Fatalf("answers = %+v, want the refusal explained", r)
	}
	// The labels of the message (alertname and job) still do.
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700000810.000002"}, signingSecret, e.now(), nil)
	if list, _ := am.List(context.Background()); len(list) != 1 || amsilence.Text(list[0].Matchers) != `{alertname="TTFTHigh", job="vllm"}` {
		t.Fatalf("silences %+v, want the message's labels", list)
	}
}

// /alertrouter silence is authorized as the Silence button of the message
// that notified the incident (the journal's deliveries), not as the first
// target of the Slack app: a user the button refuses is refused by the
// command too. An incident routed to no receiver is no channel's to
// silence: the command refuses it, whoever asks.
func TestTheSilenceCommandIsAuthorizedAsTheIncidentsButton(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	e.h.srv.SetUserGroup("S0ONCALL", "U777")
	labels := map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1"}
	incident := "llm-inference-gpu/chat/TTFT"
	j := journalOf(t, e.store,
		journal.Entry{Fingerprint: "aaa", Status: "firing", Incident: incident, Labels: labels, Decision: alert.Decision{Action: alert.ActionTicket},
			Receivers: []string{"triage"}, Deliveries: []journal.Delivery{{Receiver: "triage", Integration: "slack/0", Outcome: journal.OutcomeSent}}},
		journal.Entry{Fingerprint: "bbb", Status: "firing", Incident: "inc/oncall", Labels: map[string]string{"alertname": "Other", "job": "x"}, Decision: alert.Decision{Action: alert.ActionPage},
			Receivers: []string{"oncall"}, Deliveries: []journal.Delivery{{Receiver: "oncall", Integration: "slack/0", Outcome: journal.OutcomeSent}}},
		journal.Entry{Fingerprint: "ccc", Status: "firing", Incident: "inc/unknown", Labels: map[string]string{"alertname": "Unrouted", "job": "y"}, Decision: alert.Decision{Action: alert.ActionTicket}},
	)
	metrics := slack.NewTriageMetrics(e.reg)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Journal: j, Metrics: metrics})
	// Sorted first, "oncall/slack/0" lists nobody for silence (anyone).
	if err := tr.Add("oncall", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := tr.Add("triage", "slack/0", e.notifier(t, func(c *slack.Config) {
		c.Authorized = map[string][]string{slack.ActionSilence: {"S0ONCALL"}}
	}), nil, nil); err != nil {
		t.Fatal(err)
	}

	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700000820.000001"}, signingSecret, e.now(), nil)
	if r := e.h.srv.Responses(); len(r) != 1 || !strings.Contains(r[0].Text, "not allowed") {
		t.Fatalf("button answers = %+v, want a refusal", r)
	}
	if a := e.commandAnswer(t, tr, "silence "+incident+" 1h", "c1", "U123"); a.ResponseType != "ephemeral" || !strings.Contains(a.Text, "not allowed") {
		t.Fatalf("the command of a user the button refuses answered %+v", a)
	}
	if a := e.commandAnswer(t, tr, "silence inc/unknown 1h", "c2", "U123"); !strings.Contains(a.Text, "no firing alert posted in this channel") {
		t.Fatalf("the command on an incident routed to no receiver answered %+v, want that it is not this channel's", a)
	}
	if list, _ := am.List(context.Background()); len(list) != 0 {
		t.Fatalf("refused users made silences: %+v", list)
	}
	if got := e.actionCount("silence", "refused"); got != 3 {
		t.Fatalf("refused = %v, want 3", got)
	}
	// Allowed where the incident was posted: oncall's lists nobody.
	if a := e.commandAnswer(t, tr, "silence inc/oncall 1h", "c3", "U123"); a.ResponseType != "in_channel" {
		t.Fatalf("the command on oncall's incident answered %+v", a)
	}
	// A member of the group may, on either.
	if a := e.commandAnswer(t, tr, "silence "+incident+" 1h", "c4", "U777"); a.ResponseType != "in_channel" {
		t.Fatalf("the command of an authorized user answered %+v", a)
	}
	if a := e.commandAnswer(t, tr, "silence inc/unknown 1h", "c5", "U777"); a.ResponseType != "ephemeral" || !strings.Contains(a.Text, "no firing alert posted in this channel") {
		t.Fatalf("the command of an authorized user on an incident routed to no receiver answered %+v", a)
	}
	if list, _ := am.List(context.Background()); len(list) != 2 {
		t.Fatalf("silences = %+v, want 2", list)
	}
}

// A slash command judged by several targets (the incident is routed to
// three receivers posting in the command's channel: each must allow the
// user) reads a user group their lists share from Slack once, not once per
// target: usergroups.users.list is rate limited.
func TestTheSilenceCommandReadsASharedUserGroupOnce(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	e.h.srv.SetUserGroup("S0ONCALL", "U777")
	j := journalOf(t, e.store, journal.Entry{Fingerprint: "ccc", Status: "firing", Receivers: []string{"oncall", "triage", "platform"}, Incident: "inc/unknown",
		Labels: map[string]string{"alertname": "Unrouted", "job": "y"}, Decision: alert.Decision{Action: alert.ActionTicket}})
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Journal: j})
	for _, receiver := range []string{"oncall", "triage", "platform"} {
		if err := tr.Add(receiver, "slack/0", e.notifier(t, func(c *slack.Config) {
			c.Authorized = map[string][]string{slack.ActionSilence: {"S0ONCALL"}}
		}), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	before := e.h.srv.Calls("usergroups.users.list")
	if a := e.commandAnswer(t, tr, "silence inc/unknown 1h", "c1", "U777"); a.ResponseType != "in_channel" {
		t.Fatalf("the command of a group member answered %+v", a)
	}
	if got := e.h.srv.Calls("usergroups.users.list") - before; got != 1 {
		t.Errorf("usergroups.users.list called %d times for three targets sharing the group, want 1", got)
	}
}

// An incident whose first alert fires since longer than the journal reaches
// (Alertmanager's repeats of it are not journaled again) and a second that
// joined since: the Silence button muted only the second — the journal's —
// and said it silenced the incident's alerts while the first kept paging.
// The alerts the message was drawn with are silenced too.
func TestASilenceMutesTheMessagesAlertsOlderThanTheJournal(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	old := map[string]string{"alertname": "VLLMTimeToFirstTokenHigh", "service": "chat", "severity": "critical", "instance": "i-1"}
	joined := map[string]string{"alertname": "VLLMTimeToFirstTokenHigh", "service": "chat", "severity": "critical", "instance": "i-2"}
	other := map[string]string{"alertname": "VLLMTimeToFirstTokenHigh", "service": "chat", "severity": "critical", "instance": "i-9"}
	all := []map[string]string{old, joined, other}
	am.fire(t, all...)
	j := journalOf(t, e.store, journal.Entry{Fingerprint: "f2", Status: "firing", Receivers: []string{"triage"}, Incident: "llm-inference-gpu/chat/TTFT", Labels: joined,
		Decision: alert.Decision{Action: alert.ActionPage}})
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	drawn, _ := json.Marshal(map[string]any{"r": "triage", "g": "slack/0", "i": "llm-inference-gpu/chat/TTFT", "p": true, "l": old})
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700000900.000001", Value: string(drawn)}, signingSecret, e.now(), nil)
	am.awaitMuted(t, all, old, joined)
}

// One router incident may hold alerts that routes send to two receivers
// (two teams' channels, each with its own authorized list): the Silence
// button of team A's message muted team B's alert too, which team A's
// message never showed and team B never allowed. It mutes the alerts
// routed to its own receiver.
func TestASilenceButtonMutesOnlyItsReceiversAlerts(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	a1 := map[string]string{"alertname": "VLLMTimeToFirstTokenHigh", "service": "chat", "severity": "critical", "team": "a", "instance": "a-1"}
	b1 := map[string]string{"alertname": "VLLMTimeToFirstTokenHigh", "service": "chat", "severity": "critical", "team": "b", "instance": "b-1"}
	all := []map[string]string{a1, b1}
	am.fire(t, all...)
	entry := func(fp string, labels map[string]string, receiver string) journal.Entry {
		return journal.Entry{Fingerprint: fp, Status: "firing", Incident: "llm-inference-gpu/chat/TTFT", Labels: labels,
			Decision: alert.Decision{Action: alert.ActionPage}, Receivers: []string{receiver}}
	}
	j := journalOf(t, e.store, entry("fa", a1, "triage"), entry("fb", b1, "team-b"))
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	drawn, _ := json.Marshal(map[string]any{"r": "triage", "g": "slack/0", "i": "llm-inference-gpu/chat/TTFT", "p": true, "l": a1})
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700000950.000001", Value: string(drawn)}, signingSecret, e.now(), nil)
	am.awaitMuted(t, all, a1)
}
