package slack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// The auditor's case: one incident holds team A's ticket, routed to
// receiver triage, and team B's page — the same labels plus team="b" —,
// routed to team B's channel (whose authorized.silence team A's users are
// not on). The Silence button of team A's message made a silence on team
// A's labels, which matched team B's alert too: Alertmanager stopped
// notifying team B's page, its resolve included. The silence spares it
// (team=""), and the thread shows that matcher.
func TestASilenceButtonSparesAnotherTeamsAlertWithExtraLabels(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionTicket, nil)
	teamA := map[string]string{"alertname": "KVCacheUsageHigh", "service": "search", "sector": "llm-prompt-cache-storage", "instance": "s-1"}
	teamB := map[string]string{"alertname": "KVCacheUsageHigh", "service": "search", "sector": "llm-prompt-cache-storage", "instance": "s-1", "team": "b"}
	all := []map[string]string{teamA, teamB}
	am.fire(t, all...)
	incident := "llm-prompt-cache-storage/search/COCC"
	entry := func(fp string, labels map[string]string, action alert.Action, receivers ...string) journal.Entry {
		return journal.Entry{Fingerprint: fp, Status: "firing", Incident: incident, Labels: labels, Decision: alert.Decision{Action: action}, Receivers: receivers}
	}
	j := journalOf(t, e.store, entry("fa", teamA, alert.ActionTicket, "triage"), entry("fb", teamB, alert.ActionPage, "pagerduty", "slack-teamb"))
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	drawn, _ := json.Marshal(map[string]any{"r": "triage", "g": "slack/0", "i": incident, "l": teamA})
	e.click(t, tr, e.parent, slacktest.Click{User: "U0ALICE", UserName: "alice", ActionID: "alertrouter:silence:1h", ActionTS: "1700002000.000001", Value: string(drawn)}, signingSecret, e.now(), nil)
	am.awaitMuted(t, all, teamA)
	list, err := am.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("silences %+v (%v), want one (answers %+v)", list, err, e.h.srv.Responses())
	}
	want := `{alertname="KVCacheUsageHigh", instance="s-1", sector="llm-prompt-cache-storage", service="search", team=""}`
	if got := amsilence.Text(list[0].Matchers); got != want {
		t.Errorf("silence matches %s, want %s", got, want)
	}
	if thread := e.h.srv.Thread(e.parent.TS); len(thread) != 1 || !strings.Contains(thread[0].Text, `team=""`) {
		t.Errorf("thread %+v, want the reply to show team=\"\"", thread)
	}
}

// The journal does not know every alert a silence would match: another
// incident's alert with an extra label (a group_by that adds cluster, say),
// or one it never journaled. The router asks Alertmanager which alerts the
// silence matches before creating it, and spares those that are not the
// incident's (here cluster=""); the slash command too.
func TestASilenceSparesTheAlertsAlertmanagerHoldsBesidesTheIncidents(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	mine := map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1"}
	elsewhere := map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1", "cluster": "eu-2"}
	all := []map[string]string{mine, elsewhere}
	am.fire(t, all...)
	j := journalOf(t, e.store, journal.Entry{Fingerprint: "aaa", Status: "firing", Receivers: []string{"triage"}, Incident: "inc/1", Labels: mine, Decision: alert.Decision{Action: alert.ActionPage}})
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	a := e.commandAnswer(t, tr, "silence inc/1 1h", "o1", "U123")
	if a.ResponseType != "in_channel" || !strings.Contains(a.Text, `cluster=""`) {
		t.Fatalf("silence command answered %+v, want a silence with cluster=\"\"", a)
	}
	am.awaitMuted(t, all, mine)
}

// When Alertmanager cannot say which alerts a silence would match, nothing
// is created: a silence that may mute someone else's page is worse than
// none. The user is told so.
func TestASilenceIsNotMadeWhenAlertmanagerCannotListItsAlerts(t *testing.T) {
	am := startAlertmanager(t)
	target := proxyTo(t, am.url)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/api/v2/alerts" {
			http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
			return
		}
		target.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	c, err := amsilence.New(amsilence.Config{URL: front.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: c, Metrics: slack.NewTriageMetrics(e.reg)})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700002100.000001"}, signingSecret, e.now(), nil)
	if list, err := am.List(context.Background()); err != nil || len(list) != 0 {
		t.Fatalf("silences %+v (%v), want none", list, err)
	}
	r := e.h.srv.Responses()
	if len(r) != 1 || !strings.Contains(r[0].Text, "Nothing was silenced") || !strings.Contains(r[0].Text, "could not ask Alertmanager") || !strings.Contains(r[0].Text, "503") {
		t.Fatalf("answers %+v, want that Alertmanager could not list the alerts and nothing was made", r)
	}
	if got := e.actionCount(slack.ActionSilence, slack.OutcomeFailed); got != 1 {
		t.Errorf("silence failed %v times, want 1", got)
	}
	if b := strings.Join(buttons(t, e.current(t)), " "); !strings.Contains(b, "alertrouter:silence:1h") {
		t.Errorf("buttons %q, want Silence still offered", b)
	}
}

// A label value with a backtick: the thread's reply wrote the matchers in
// a code span, which the value's backtick ended early (the rest read as
// mrkdwn). The reply shows a look-alike (ˋ); the silence matches the real
// value.
func TestASilenceReplyShowsABacktickInAValueWithoutBreakingItsCodeSpan(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	odd := map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "q\"1`|*"}
	other := map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "q2"}
	am.fire(t, odd, other)
	j := journalOf(t, e.store, journal.Entry{Fingerprint: "aaa", Status: "firing", Receivers: []string{"triage"}, Incident: "llm-inference-gpu/chat/TTFT", Labels: odd, Decision: alert.Decision{Action: alert.ActionPage}})
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	drawn, _ := json.Marshal(map[string]any{"r": "triage", "g": "slack/0", "i": "llm-inference-gpu/chat/TTFT", "p": true, "l": odd})
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700002200.000001", Value: string(drawn)}, signingSecret, e.now(), nil)
	am.awaitMuted(t, []map[string]string{odd, other}, odd)
	thread := e.h.srv.Thread(e.parent.TS)
	if len(thread) != 1 {
		t.Fatalf("thread %+v, want one reply", thread)
	}
	text := thread[0].Text
	if !strings.Contains(text, "instance=\"q\\\"1ˋ|*\"") {
		t.Errorf("reply %q, want the value shown with ˋ for its backtick", text)
	}
	// Every code span of the reply is closed where it should be: the
	// backticks pair up around the silence id and the matchers only.
	if n := strings.Count(text, "`"); n != 4 {
		t.Errorf("reply %q has %d backticks, want 4 (two code spans)", text, n)
	}
}

// Without the journal the silence is made of the labels the message was
// drawn with (the common labels of its alerts): the alerts Alertmanager
// holds with them are the message's, and stay muted — asking Alertmanager
// spares none of them.
func TestASilenceWithoutTheJournalStillMutesTheMessagesAlerts(t *testing.T) {
	am := startAlertmanager(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	gpu1 := map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1"}
	gpu2 := map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-2", "zone": "z"}
	other := map[string]string{"alertname": "ITLHigh", "job": "vllm", "instance": "gpu-1"}
	all := []map[string]string{gpu1, gpu2, other}
	am.fire(t, all...)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700002500.000001"}, signingSecret, e.now(), nil)
	am.awaitMuted(t, all, gpu1, gpu2)
	if list, _ := am.List(context.Background()); len(list) != 1 || amsilence.Text(list[0].Matchers) != `{alertname="TTFTHigh", job="vllm"}` {
		t.Fatalf("silences %+v, want the message's labels", list)
	}
}
