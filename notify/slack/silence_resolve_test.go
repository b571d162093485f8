package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// The audit's case: a Silence from Slack hid the incident's resolve —
// Alertmanager does not notify muted alerts — and nothing said so: after
// the trouble cleared, PagerDuty stayed open and the parent kept "1 firing
// · Silenced for 1h". The silence's line on the parent and its thread
// reply say no resolve comes, and what to do: Resolve (when paged) or
// Unsilence while the alerts still fire.
func TestASilenceSaysItHidesTheResolve(t *testing.T) {
	for _, tc := range []struct {
		name     string
		action   alert.Action
		line     []string // in the parent's silence line
		thread   []string // in the thread's reply
		notThere string   // in neither
	}{
		{"a page", alert.ActionPage,
			[]string{"Alertmanager sends no resolve while silenced", "Resolve here once the trouble clears, or Unsilence"},
			[]string{"Alertmanager sends no resolve of silenced alerts, not even after the silence ends", "PagerDuty and this message stay open", "Resolve the incident here (Resolve)", "Unsilence while its alerts still fire"},
			""},
		{"a ticket (no Resolve button)", alert.ActionTicket,
			[]string{"Alertmanager sends no resolve while silenced", "unless you Unsilence first"},
			[]string{"Alertmanager sends no resolve of silenced alerts, not even after the silence ends", "this message stays firing", "Unsilence while its alerts still fire"},
			"Resolve here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			am := startAlertmanager(t)
			e := newTriageEnv(t, tc.action, nil)
			tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Metrics: slack.NewTriageMetrics(e.reg)})
			if err := tr.Add("triage", "slack/0", e.notifier(t, nil), e.pager(t), nil); err != nil {
				t.Fatal(err)
			}
			e.click(t, tr, e.parent, slacktest.Click{User: "U0BOB", UserName: "bob", ActionID: "alertrouter:silence:1h", ActionTS: "1700002500.000001"}, signingSecret, e.now(), nil)
			if got := e.actionCount(slack.ActionSilence, slack.OutcomeDone); got != 1 {
				t.Fatalf("silence done %v times, want 1 (answers %+v)", got, e.h.srv.Responses())
			}
			lines := logLines(t, e.current(t))
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "Silenced for 1h by <@U0BOB>") {
				t.Fatalf("parent lines %q, want the silence's", lines)
			}
			thread := e.h.srv.Thread(e.parent.TS)
			if len(thread) != 1 || !strings.Contains(thread[0].Text, "silenced the incident's alerts in Alertmanager for 1h") {
				t.Fatalf("thread %+v, want the silence's reply", thread)
			}
			for _, w := range tc.line {
				if !strings.Contains(lines[0], w) {
					t.Errorf("the parent's line %q does not say %q", lines[0], w)
				}
			}
			for _, w := range tc.thread {
				if !strings.Contains(thread[0].Text, w) {
					t.Errorf("the thread's reply %q does not say %q", thread[0].Text, w)
				}
			}
			if tc.notThere != "" && (strings.Contains(lines[0], tc.notThere) || strings.Contains(thread[0].Text, tc.notThere)) {
				t.Errorf("line %q or reply %q offers %q, a button the message does not have", lines[0], thread[0].Text, tc.notThere)
			}
		})
	}
}

// A silence made from the message is still in force when the incident's
// resolve arrives (a resolve Alertmanager built before the silence, sent
// at its retry): the parent drawn resolved offers no Unsilence, so the
// resolve's reply says the silence mutes the alerts' next firing until it
// ends (an audit: it said nothing). Unsilenced before, or expired in
// Alertmanager by hand (a review), it says nothing.
func TestAResolveSaysASilenceFromTheMessageStillMutes(t *testing.T) {
	for _, ended := range []string{"", "unsilenced", "expired in Alertmanager"} {
		unsilence := ended != ""
		am := startAlertmanager(t)
		e := newTriageEnv(t, alert.ActionPage, nil)
		n := e.notifier(t, nil)
		tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am.Client, Metrics: slack.NewTriageMetrics(e.reg)})
		if err := tr.Add("triage", "slack/0", n, e.pager(t), nil); err != nil {
			t.Fatal(err)
		}
		e.click(t, tr, e.parent, slacktest.Click{User: "U0BOB", UserName: "bob", ActionID: "alertrouter:silence:1h", ActionTS: "1700002600.000001"}, signingSecret, e.now(), nil)
		switch ended {
		case "unsilenced":
			e.click(t, tr, e.current(t), slacktest.Click{User: "U0BOB", UserName: "bob", ActionID: "alertrouter:unsilence", ActionTS: "1700002600.000002"}, signingSecret, e.now(), nil)
		case "expired in Alertmanager":
			list, err := am.Client.List(context.Background())
			if err != nil || len(list) != 1 {
				t.Fatalf("silences %+v (%v), want the message's", list, err)
			}
			if err := am.Client.Expire(context.Background(), list[0].ID); err != nil {
				t.Fatal(err)
			}
		}
		if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionPage)); err != nil {
			t.Fatal(err)
		}
		thread := e.h.srv.Thread(e.parent.TS)
		reply := sectionTexts(t, thread[len(thread)-1])
		if said := strings.Contains(reply, "Still silenced: the silence <@U0BOB> made from this message"); said == unsilence {
			t.Errorf("%q: the resolve's reply %q, want the silence named only while it is in force", ended, reply)
		}
	}
}
