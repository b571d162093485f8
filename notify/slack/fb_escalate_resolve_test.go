package slack_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// escalateDuringResolve clicks Escalate on e's parent through tr and, while
// PagerDuty holds the trigger (the stand-in programmed to delay it), has
// the dispatch core resolve the incident through n; it returns once the
// click's background work is done.
func (e *triageEnv) escalateDuringResolve(t *testing.T, tr *slack.Triage, n *slack.Notifier, actionTS string) {
	t.Helper()
	before := e.pd.Requests()
	body, err := e.h.srv.Interaction(e.parent, slacktest.Click{User: "U0CAROL", UserName: "carol", ActionID: "alertrouter:escalate", ActionTS: actionTS})
	if err != nil {
		t.Fatal(err)
	}
	req, err := slacktest.NewRequest("http://router/slack/interactions", slacktest.Sign(signingSecret, e.now(), body), body)
	if err != nil {
		t.Fatal(err)
	}
	tr.ServeHTTP(httptest.NewRecorder(), req) // answered at once; the click works in the background
	deadline := time.Now().Add(10 * time.Second)
	for e.pd.Requests() == before {
		if time.Now().After(deadline) {
			t.Fatal("the Escalate click sent PagerDuty no trigger")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The trigger is held by PagerDuty: the incident resolves meanwhile.
	if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	tr.Wait()
}

// escalationReply is the thread reply recording the escalation.
func (e *triageEnv) escalationReply(t *testing.T) string {
	t.Helper()
	for _, m := range e.h.srv.Thread(e.parent.TS) {
		if strings.Contains(m.Text, "escalated the ticket to a page") {
			return m.Text
		}
	}
	t.Fatalf("no thread reply records the escalation: %+v", e.h.srv.Thread(e.parent.TS))
	return ""
}

// An Escalate click whose PagerDuty trigger was in flight when the
// incident resolved (audit B, s6): the resolve's notification read the
// message before the escalation was recorded and sent PagerDuty no
// resolve, the click then recorded the escalation — on-call paged for a
// cleared incident, nothing ever resolving the page, the thread saying
// "PagerDuty was triggered". The click resolves the page it triggered,
// through the same PagerDuty, and the thread says so; a retry of the
// resolve's notification sends no second resolve. Once the incident fires
// again, a new escalation is not resolved for the earlier resolve: its
// page is resolved when the alerts resolve again.
func TestAnEscalationTriggeredWhileTheIncidentResolvesIsResolvedInPagerDuty(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	n := e.notifier(t, nil)
	tr := e.triage(t, n, nil, e.pager(t), slack.NewTriageMetrics(e.reg))
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")

	e.pd.Fail(pdtest.Fault{Delay: 2 * time.Second}) // accepted, answered late
	e.escalateDuringResolve(t, tr, n, "1700004000.000001")
	events := e.pd.Events()
	if len(events) != 2 || events[0].EventAction != "trigger" || events[1].EventAction != "resolve" || events[1].DedupKey != dedup {
		var got []string
		for _, ev := range events {
			got = append(got, ev.EventAction+" "+ev.DedupKey)
		}
		t.Fatalf("PagerDuty events %q, want the escalation's trigger, then its resolve for %s (answers %+v)", got, dedup, e.h.srv.Responses())
	}
	if reply := e.escalationReply(t); !strings.Contains(reply, "alertrouter sent PagerDuty the page's resolve") || !strings.Contains(reply, dedup) {
		t.Fatalf("the escalation's reply = %q, want it to say the page was resolved", reply)
	}
	if got := counter(t, e.reg, "alertrouter_slack_escalation_resolves_total", "done"); got != 1 {
		t.Fatalf(`alertrouter_slack_escalation_resolves_total{outcome="done"} = %v, want 1`, got)
	}
	if b := buttons(t, e.current(t)); len(b) != 0 {
		t.Fatalf("the resolved parent offers %v", b)
	}

	// Alertmanager's retry of the resolve: no second resolve.
	if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	if got := e.pd.Resolves(dedup); got != 1 {
		t.Fatalf("a second delivery of the resolve sent PagerDuty %d resolves, want 1", got)
	}

	// Firing again, escalated again: that page stays open until the alerts
	// resolve again.
	e.reopen(t, n, alert.ActionTicket)
	e.click(t, tr, e.current(t), slacktest.Click{User: "U0DAVE", UserName: "dave", ActionID: "alertrouter:escalate", ActionTS: "1700004000.000002"}, signingSecret, e.now(), nil)
	if tr, rs := e.pd.Triggers(dedup), e.pd.Resolves(dedup); tr != 2 || rs != 1 {
		t.Fatalf("after the second escalation, %d triggers and %d resolves, want 2 and 1: the new page resolved for the earlier resolve (answers %+v)", tr, rs, e.h.srv.Responses())
	}
	if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	if got := e.pd.Resolves(dedup); got != 2 {
		t.Fatalf("the second escalation's alerts resolved: %d resolves, want 2", got)
	}
}

// The click's resolve of the page it triggered while the incident resolved
// fails: the clicking user and the thread are told to resolve the page in
// PagerDuty by hand, its dedup_key named.
func TestAnEscalationWhoseLateResolveFailsSaysToResolveThePageByHand(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	n := e.notifier(t, nil)
	tr := e.triage(t, n, nil, e.pager(t), slack.NewTriageMetrics(e.reg))
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")

	e.pd.Fail(pdtest.Fault{Delay: 2 * time.Second}, pdtest.Fault{Status: 400})
	e.escalateDuringResolve(t, tr, n, "1700004100.000001")
	if tr, rs := e.pd.Triggers(dedup), e.pd.Resolves(dedup); tr != 1 || rs != 0 {
		t.Fatalf("%d triggers and %d resolves taken, want 1 and 0 (the resolve refused)", tr, rs)
	}
	want := "resolve the page in PagerDuty by hand (dedup_key `" + dedup + "`)"
	if reply := e.escalationReply(t); !strings.Contains(reply, want) {
		t.Fatalf("the escalation's reply = %q, want %q", reply, want)
	}
	answered := false
	for _, r := range e.h.srv.Responses() {
		answered = answered || strings.Contains(r.Text, want)
	}
	if !answered {
		t.Fatalf("answers = %+v, want the user told %q", e.h.srv.Responses(), want)
	}
	if got := counter(t, e.reg, "alertrouter_slack_escalation_resolves_total", "refused"); got != 1 {
		t.Fatalf(`alertrouter_slack_escalation_resolves_total{outcome="refused"} = %v, want 1`, got)
	}
}
