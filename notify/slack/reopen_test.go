package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// reopen has the dispatch core open e's incident again under its parent:
// a new firing of action.
func (e *triageEnv) reopen(t *testing.T, n *slack.Notifier, action alert.Action) {
	t.Helper()
	no := under(e.parent.Channel+" "+e.parent.TS, note(alert.KindFiring, action, "firing", "aaa"))
	no.Opening, no.Integration = true, "slack/0"
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
}

// noAlreadyDone fails when an answer since the first before of them says
// "Already done".
func (e *triageEnv) noAlreadyDone(t *testing.T, before int) {
	t.Helper()
	for _, r := range e.h.srv.Responses()[before:] {
		if strings.Contains(r.Text, "Already done") {
			t.Fatalf("a button of the new firing answered %q", r.Text)
		}
	}
}

// An incident that fires again under its parent message (an opening) is
// drawn with the buttons of a fresh message; they answered "Already done"
// — the earlier firing's acknowledgement, resolve and escalation were kept
// a week on the message —, so the new firing's page could be neither
// acknowledged, resolved nor escalated from Slack. Now they act, and an
// escalation of the new firing is resolved with its alerts again.
func TestAnIncidentFiringAgainUnderItsParentOffersButtonsThatAct(t *testing.T) {
	dk := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	t.Run("acknowledged, resolved, firing again", func(t *testing.T) {
		e := newTriageEnv(t, alert.ActionPage, nil)
		n := e.notifier(t, nil)
		tr := e.triage(t, n, e.pager(t), nil, slack.NewTriageMetrics(e.reg))
		e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700001400.000001"}, signingSecret, e.now(), nil)
		if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionPage)); err != nil {
			t.Fatal(err)
		}
		e.reopen(t, n, alert.ActionPage)
		before := len(e.h.srv.Responses())
		e.click(t, tr, e.current(t), slacktest.Click{User: "U456", UserName: "oncall", ActionID: "alertrouter:ack", ActionTS: "1700001400.000002"}, signingSecret, e.now(), nil)
		e.noAlreadyDone(t, before)
		if got := e.pd.Count("acknowledge", dk); got != 2 {
			t.Fatalf("PagerDuty got %d acknowledges, want 2: the new firing's page acknowledged too (answers %+v)", got, e.h.srv.Responses()[before:])
		}
	})
	t.Run("resolved by hand, opened again before its alerts resolved", func(t *testing.T) {
		e := newTriageEnv(t, alert.ActionPage, nil)
		n := e.notifier(t, nil)
		tr := e.triage(t, n, e.pager(t), nil, slack.NewTriageMetrics(e.reg))
		e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700001200.000001"}, signingSecret, e.now(), nil)
		e.click(t, tr, e.current(t), slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:resolve", ActionTS: "1700001200.000002"}, signingSecret, e.now(), nil)
		e.reopen(t, n, alert.ActionPage)
		e.pagedAgain(t)
		if got := strings.Join(buttons(t, e.current(t)), " "); !strings.Contains(got, "alertrouter:ack") || !strings.Contains(got, "alertrouter:resolve") {
			t.Fatalf("buttons after the opening: %s", got)
		}
		before := len(e.h.srv.Responses())
		e.click(t, tr, e.current(t), slacktest.Click{User: "U456", UserName: "oncall", ActionID: "alertrouter:ack", ActionTS: "1700001200.000003"}, signingSecret, e.now(), nil)
		e.click(t, tr, e.current(t), slacktest.Click{User: "U456", UserName: "oncall", ActionID: "alertrouter:resolve", ActionTS: "1700001200.000004"}, signingSecret, e.now(), nil)
		e.noAlreadyDone(t, before)
		if a, r := e.pd.Count("acknowledge", dk), e.pd.Resolves(dk); a != 2 || r != 2 {
			t.Fatalf("PagerDuty got %d acknowledges and %d resolves, want 2 and 2 (answers %+v)", a, r, e.h.srv.Responses()[before:])
		}
	})
	t.Run("escalated, resolved with its alerts, firing again", func(t *testing.T) {
		e := newTriageEnv(t, alert.ActionTicket, nil)
		n := e.notifier(t, nil)
		tr := e.triage(t, n, nil, e.pager(t), slack.NewTriageMetrics(e.reg))
		e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:escalate", ActionTS: "1700001410.000001"}, signingSecret, e.now(), nil)
		if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
			t.Fatal(err)
		}
		if got := e.pd.Resolves(dk); got != 1 {
			t.Fatalf("the first escalation got %d resolves, want 1", got)
		}
		e.reopen(t, n, alert.ActionTicket)
		if got := strings.Join(buttons(t, e.current(t)), " "); !strings.Contains(got, "alertrouter:escalate") {
			t.Fatalf("buttons after the opening: %s, want Escalate", got)
		}
		before := len(e.h.srv.Responses())
		e.click(t, tr, e.current(t), slacktest.Click{User: "U456", UserName: "oncall", ActionID: "alertrouter:escalate", ActionTS: "1700001410.000002"}, signingSecret, e.now(), nil)
		e.noAlreadyDone(t, before)
		if got := e.pd.Triggers(dk); got != 2 {
			t.Fatalf("PagerDuty got %d triggers, want 2: the new firing escalated too (answers %+v)", got, e.h.srv.Responses()[before:])
		}
		// The second escalation is resolved with its alerts too (the
		// first one's "resolved" record is gone with it).
		if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
			t.Fatal(err)
		}
		if got := e.pd.Resolves(dk); got != 2 {
			t.Fatalf("PagerDuty got %d resolves, want 2: the second escalation's page stays open", got)
		}
	})
}

// An escalation still open when the incident fires again under its parent
// (the earlier firing's resolve never reached the router): PagerDuty still
// pages for it. It is kept: the parent offers its Acknowledge and Resolve
// (not an Escalate that answered "Already done"), and PagerDuty gets its
// resolve when the alerts resolve.
func TestAnEscalationStillOpenWhenTheIncidentFiresAgainIsKept(t *testing.T) {
	dk := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	e := newTriageEnv(t, alert.ActionTicket, nil)
	n := e.notifier(t, nil)
	tr := e.triage(t, n, nil, e.pager(t), slack.NewTriageMetrics(e.reg))
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:escalate", ActionTS: "1700001420.000001"}, signingSecret, e.now(), nil)
	e.reopen(t, n, alert.ActionTicket)
	if got := strings.Join(buttons(t, e.current(t)), " "); !strings.Contains(got, "alertrouter:ack") || !strings.Contains(got, "alertrouter:resolve") || strings.Contains(got, "alertrouter:escalate") {
		t.Fatalf("buttons after the opening: %s, want the open escalation's Acknowledge and Resolve, no Escalate", got)
	}
	e.click(t, tr, e.current(t), slacktest.Click{User: "U456", UserName: "oncall", ActionID: "alertrouter:ack", ActionTS: "1700001420.000002"}, signingSecret, e.now(), nil)
	if got := e.pd.Count("acknowledge", dk); got != 1 {
		t.Fatalf("PagerDuty got %d acknowledges of the escalation, want 1 (answers %+v)", got, e.h.srv.Responses())
	}
	if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	if got := e.pd.Resolves(dk); got != 1 {
		t.Fatalf("PagerDuty got %d resolves once the alerts resolved, want 1: the escalation's page stays open", got)
	}
}

// pagedAgain does what the dispatch core does once PagerDuty took the
// trigger of an incident resolved there by hand (routing's
// reopenHandResolved): it clears the hand-resolve mark, which the
// incident's new page no longer is.
func (e *triageEnv) pagedAgain(t *testing.T) {
	t.Helper()
	key := dedup.HandResolvedKey("", "llm-inference-gpu/chat/TTFT")
	vals, found, err := e.store.Get(context.Background(), []string{key})
	if err != nil {
		t.Fatal(err)
	}
	if !found[0] {
		t.Fatalf("no hand-resolve mark at %s", key)
	}
	if err := e.store.DeleteIfEqual(context.Background(), []store.Entry{{Key: key, Value: vals[0]}}); err != nil {
		t.Fatal(err)
	}
}

// An Acknowledge clicked on a copy of the message from before its Resolve
// (two people, two replicas: the acknowledge reached PagerDuty 1 ms after
// the resolve, and the thread said the incident acknowledged — an audit)
// is refused: the page was resolved in PagerDuty, nothing is acknowledged.
func TestAnAckAfterTheResolveIsRefused(t *testing.T) {
	dk := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	e := newTriageEnv(t, alert.ActionPage, nil)
	n := e.notifier(t, nil)
	tr := e.triage(t, n, e.pager(t), nil, slack.NewTriageMetrics(e.reg))
	before := e.current(t)
	e.click(t, tr, before, slacktest.Click{User: "U0BOB", UserName: "bob", ActionID: "alertrouter:resolve", ActionTS: "1700001500.000001"}, signingSecret, e.now(), nil)
	answers := len(e.h.srv.Responses())
	e.click(t, tr, before, slacktest.Click{User: "U0ALICE", UserName: "alice", ActionID: "alertrouter:ack", ActionTS: "1700001500.000002"}, signingSecret, e.now(), nil)
	if got := e.pd.Count("acknowledge", dk); got != 0 {
		t.Fatalf("PagerDuty got %d acknowledges after the resolve, want none", got)
	}
	rs := e.h.srv.Responses()[answers:]
	if len(rs) != 1 || !strings.Contains(rs[0].Text, "was resolved by <@U0BOB> in PagerDuty") || !strings.Contains(rs[0].Text, "nothing was acknowledged") {
		t.Fatalf("the Acknowledge was answered %+v, want it refused as resolved", rs)
	}
	for _, m := range e.h.srv.Thread(e.parent.TS) {
		if strings.Contains(m.Text, "acknowledged the incident") {
			t.Fatalf("the thread says %q", m.Text)
		}
	}
}

// A hand Resolve's mark outlives its page until PagerDuty is paged through
// its integration again — never, for an escalation — so it refuses no
// Acknowledge of a later page: the incident resolved, fired again, and
// escalated (or paged) anew is acknowledged (a review: refused for a
// week).
func TestAnAckOfALaterPageIsNotRefusedByAnEarlierResolve(t *testing.T) {
	dk := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	for _, action := range []alert.Action{alert.ActionTicket, alert.ActionPage} {
		e := newTriageEnv(t, action, nil)
		n := e.notifier(t, nil)
		var tr *slack.Triage
		if action == alert.ActionTicket {
			tr = e.triage(t, n, nil, e.pager(t), slack.NewTriageMetrics(e.reg))
			e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:escalate", ActionTS: "1700001600.000001"}, signingSecret, e.now(), nil)
		} else {
			tr = e.triage(t, n, e.pager(t), nil, slack.NewTriageMetrics(e.reg))
		}
		e.click(t, tr, e.current(t), slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:resolve", ActionTS: "1700001600.000002"}, signingSecret, e.now(), nil)
		if err := n.Notify(context.Background(), e.resolvedNote(action)); err != nil {
			t.Fatal(err)
		}
		e.reopen(t, n, action) // the mark still there: the dispatch core clears it once PagerDuty took the page
		if action == alert.ActionTicket {
			e.click(t, tr, e.current(t), slacktest.Click{User: "U456", UserName: "oncall", ActionID: "alertrouter:escalate", ActionTS: "1700001600.000003"}, signingSecret, e.now(), nil)
		}
		before := len(e.h.srv.Responses())
		e.click(t, tr, e.current(t), slacktest.Click{User: "U456", UserName: "oncall", ActionID: "alertrouter:ack", ActionTS: "1700001600.000004"}, signingSecret, e.now(), nil)
		if got := e.pd.Count("acknowledge", dk); got != 1 {
			t.Errorf("%s: PagerDuty got %d acknowledges of the later page, want 1 (answers %+v)", action, got, e.h.srv.Responses()[before:])
		}
	}
}
