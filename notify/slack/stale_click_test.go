package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// buttonValue is the value of m's button actionID.
func buttonValue(t *testing.T, m slacktest.Message, actionID string) string {
	t.Helper()
	v, ok := m.ButtonValue(actionID)
	if !ok {
		t.Fatalf("message %s has no button %s", m.TS, actionID)
	}
	return v
}

// The store restarted empty (Redis FLUSHALL) after the incident resolved:
// it no longer says so, but Slack's copy of the message in the click does —
// a resolved parent has no buttons. A stale Escalate click from before (a
// client that had not redrawn) pages nobody and leaves the message as the
// resolve drew it.
func TestAStaleClickOnAResolvedMessageDoesNothingAfterTheStoreWasFlushed(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	value := buttonValue(t, e.parent, "alertrouter:escalate")
	n := e.notifier(t, nil)
	e.triage(t, n, nil, e.pager(t), nil) // the replica that saw the resolve
	resolved := under(e.parent.Channel+" "+e.parent.TS, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa"))
	resolved.IncidentResolved, resolved.Integration = true, "slack/0"
	if err := n.Notify(context.Background(), resolved); err != nil {
		t.Fatal(err)
	}
	after := e.current(t)
	if len(buttons(t, after)) != 0 {
		t.Fatalf("the resolved parent has buttons: %v", buttons(t, after))
	}

	e.store = store.NewMemory() // flushed
	tr := e.triage(t, e.notifier(t, nil), nil, e.pager(t), slack.NewTriageMetrics(e.reg))
	e.click(t, tr, after, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:escalate", ActionTS: "1700000900.000001", Value: value}, signingSecret, e.now(), nil)
	if n := len(e.pd.Events()); n != 0 {
		t.Fatalf("a stale click on a resolved message paged (%d events: %+v)", n, e.pd.Events())
	}
	if r := e.h.srv.Responses(); len(r) != 1 || !strings.Contains(r[0].Text, "has resolved since this message was drawn") || !strings.Contains(r[0].Text, "nothing was done") {
		t.Fatalf("answers = %+v", r)
	}
	if now := e.current(t); now.Updates != after.Updates || string(now.Blocks) != string(after.Blocks) {
		t.Fatalf("the resolved parent was redrawn: %s", now.Blocks)
	}
	if e.actionCount("escalate", "stale") != 1 {
		t.Fatal("the click was not counted stale")
	}
}

// After a flush, a click on a button the message no longer carries (a
// second Acknowledge from a client that had not redrawn) does nothing
// either; the buttons the message carries still act.
func TestAClickOnAButtonTheMessageNoLongerCarriesDoesNothing(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	value := buttonValue(t, e.parent, "alertrouter:ack")
	tr := e.replica(t, nil, nil)
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000910.000001"}, signingSecret, e.now(), nil)
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	if n := e.pd.Count("acknowledge", dedup); n != 1 {
		t.Fatalf("acknowledges = %d, want 1", n)
	}
	acked := e.current(t)

	e.store = store.NewMemory() // flushed
	tr = e.replica(t, nil, slack.NewTriageMetrics(e.reg))
	e.click(t, tr, acked, slacktest.Click{User: "U456", UserName: "asmith", ActionID: "alertrouter:ack", ActionTS: "1700000910.000002", Value: value}, signingSecret, e.now(), nil)
	if n := e.pd.Count("acknowledge", dedup); n != 1 {
		t.Fatalf("acknowledges = %d after a click on a button the message no longer has, want 1", n)
	}
	if r := e.h.srv.Responses(); len(r) != 1 || !strings.Contains(r[0].Text, "since this message was drawn") || !strings.Contains(r[0].Text, "nothing was done") {
		t.Fatalf("answers = %+v", r)
	}
	if e.actionCount("ack", "stale") != 1 {
		t.Fatal("the click was not counted stale")
	}
	e.click(t, tr, acked, slacktest.Click{User: "U456", UserName: "asmith", ActionID: "alertrouter:resolve", ActionTS: "1700000910.000003"}, signingSecret, e.now(), nil)
	if n := e.pd.Resolves(dedup); n != 1 {
		t.Fatalf("resolves = %d, want 1 (answers %+v)", n, e.h.srv.Responses())
	}
}
