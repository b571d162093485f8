package slack_test

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// An Acknowledge PagerDuty took while Slack refused the parent's redraw
// and the thread's record (rate limited, down): the user who clicked was
// answered nothing, the parent kept its button, and a second click was
// told "see the thread" of an empty one. The user is told it was done,
// and that the channel does not show it.
func TestAnActionSlackCouldNotRecordIsSaidToTheUser(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Metrics: slack.NewTriageMetrics(e.reg)})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), e.pager(t), nil); err != nil {
		t.Fatal(err)
	}
	threadBefore := len(e.h.srv.Messages())
	var faults []slacktest.Fault
	for range 10 { // every attempt of the parent's edit and of the thread's post
		faults = append(faults, slacktest.Fault{Status: 500})
	}
	e.h.srv.Fail(faults...)
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700001000.000009"}, signingSecret, e.now(), nil)
	if got := e.pd.Count("acknowledge", pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")); got != 1 {
		t.Fatalf("PagerDuty got %d acknowledges, want 1", got)
	}
	if n := len(e.h.srv.Messages()); n != threadBefore {
		t.Fatalf("Slack took %d new messages while failing, want none", n-threadBefore)
	}
	r := e.h.srv.Responses()
	if len(r) != 1 || !strings.Contains(r[0].Text, "Done, but Slack did not take") || !strings.Contains(r[0].Text, "acknowledged") ||
		!strings.Contains(r[0].Text, "could not be redrawn") {
		t.Fatalf("answers %+v: want one saying the acknowledgement was done and the channel does not show it", r)
	}
}
