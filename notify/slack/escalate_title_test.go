package slack_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// The audit's case: after Escalate, the parent's header kept saying
// [TICKET] and PagerDuty's incident read "Escalated from Slack: [TICKET]
// CheckoutErrorsHigh 1 firing" while PagerDuty paged on-call. Both say the
// page now, and that it was escalated from a ticket (by whom, in
// PagerDuty), while the card's Decision line still says the alerts'
// decision: a ticket. The header stays so through later clicks and
// redraws, until the incident resolves.
func TestAnEscalatedTicketReadsAsAPage(t *testing.T) {
	const (
		title   = "[PAGE] TTFTHigh (llm-inference-gpu TTFT) 1 firing (escalated from a ticket)"
		summary = "[PAGE] TTFTHigh (llm-inference-gpu TTFT) 1 firing (escalated from a ticket in Slack by @jdoe)"
	)
	e := newTriageEnv(t, alert.ActionTicket, nil)
	n := e.notifier(t, nil)
	tr := e.triage(t, n, nil, e.pager(t), slack.NewTriageMetrics(e.reg))
	if got := header(t, e.parent); !strings.HasPrefix(got, "[TICKET] ") {
		t.Fatalf("the ticket's header = %q", got)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:escalate", ActionTS: "1700003000.000001"}, signingSecret, e.now(), nil)
	evs := e.pd.Events()
	if len(evs) != 1 || evs[0].Payload == nil || evs[0].Payload.Summary != summary {
		t.Fatalf("PagerDuty got %+v, want one trigger summarized %q", evs, summary)
	}
	// Its source, component, group and class are a routed page's: event
	// rules keyed on them missed escalated pages, and PagerDuty named the
	// router as the source (an audit).
	if pl := evs[0].Payload; pl.Source != "gpu-node-1:8000" || pl.Component != "llm-inference-gpu" || pl.Group != "TTFT" || pl.Class != "latency" {
		t.Errorf("the escalation's payload %+v, want source gpu-node-1:8000 (its alert's instance, as a routed page's), component llm-inference-gpu, group TTFT, class latency", pl)
	}
	p := e.current(t)
	if got := header(t, p); got != title {
		t.Fatalf("the escalated parent's header = %q, want %q", got, title)
	}
	if !strings.HasPrefix(p.Text, "[PAGE] ") || !strings.HasSuffix(p.Text, "(escalated from a ticket)") {
		t.Errorf("the escalated parent's text = %q, want it the page's", p.Text)
	}
	if !strings.Contains(string(p.Blocks), `*Decision:* ticket`) {
		t.Errorf("the card no longer says the alerts' decision (ticket): %s", p.Blocks)
	}

	// A later click redraws from the escalated copy: said once.
	e.click(t, tr, p, slacktest.Click{User: "U456", UserName: "oncall", ActionID: "alertrouter:ack", ActionTS: "1700003000.000002"}, signingSecret, e.now(), nil)
	if p = e.current(t); p.Updates != 2 || header(t, p) != title {
		t.Fatalf("after Acknowledge (%d updates) the header = %q, want %q", p.Updates, header(t, p), title)
	}

	// The incident fires again under its parent while the escalation is
	// open: the router redraws the parent from the ticket, and it still
	// reads as the page.
	e.reopen(t, n, alert.ActionTicket)
	if got := header(t, e.current(t)); got != title {
		t.Fatalf("redrawn firing again, the header = %q, want %q", got, title)
	}

	// Resolved, it says so.
	if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	if got := header(t, e.current(t)); !strings.HasPrefix(got, "[RESOLVED] ") || strings.Contains(got, "escalated") {
		t.Fatalf("the resolved parent's header = %q", got)
	}
}

// A long title keeps the note whole within Slack's 150 characters of a
// header and PagerDuty's 1024 of a summary.
func TestAnEscalatedLongTitleKeepsItsNote(t *testing.T) {
	e := &triageEnv{h: newHarness(t), pd: pdtest.NewServer(), store: store.NewMemory(), reg: prometheus.NewRegistry(), now: time.Now}
	t.Cleanup(e.pd.Close)
	name := strings.Repeat("VeryLongAlertName", 80) // 1360 characters
	no := notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, notifytest.Result(name, "aaa", "firing", alert.ActionTicket))
	no.Data.CommonLabels["alertname"] = name
	no.Opening, no.Integration = true, "slack/0"
	n := e.notifier(t, nil)
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	e.parent = e.h.srv.Parents()[0]
	tr := e.triage(t, n, nil, e.pager(t), slack.NewTriageMetrics(e.reg))
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:escalate", ActionTS: "1700003100.000001"}, signingSecret, e.now(), nil)
	got := header(t, e.current(t))
	if !strings.HasPrefix(got, "[PAGE] VeryLongAlertName") || !strings.HasSuffix(got, "… (escalated from a ticket)") || utf8.RuneCountInString(got) > 150 {
		t.Errorf("header (%d characters) = %q", utf8.RuneCountInString(got), got)
	}
	evs := e.pd.Events()
	if len(evs) != 1 || evs[0].Payload == nil {
		t.Fatalf("PagerDuty got %+v, want one trigger", evs)
	}
	if s := evs[0].Payload.Summary; !strings.HasPrefix(s, "[PAGE] VeryLongAlertName") || !strings.HasSuffix(s, "(escalated from a ticket in Slack by @jdoe)") || utf8.RuneCountInString(s) > 1024 {
		t.Errorf("summary (%d characters) = %q", utf8.RuneCountInString(s), s)
	}
}

// A page source of thousands of characters (an instance label) took every
// button off the message once the parent kept it for an escalation
// (REVIEWV): the message keeps it cut as PagerDuty's event is, and, were
// the buttons' value still too large, drops it before the buttons.
func TestALongPageSourceKeepsTheButtons(t *testing.T) {
	for _, instance := range []string{strings.Repeat("gpu-node-1.", 230), strings.Repeat("a&b<c>", 200)} {
		e := newTriageEnv(t, alert.ActionTicket, nil)
		r := notifytest.Result("TTFTHigh", "bbb", "firing", alert.ActionTicket)
		r.Alert.Labels["instance"] = instance
		no := notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, r)
		no.Opening, no.Integration = true, "slack/0"
		n := e.notifier(t, nil)
		if err := n.Notify(context.Background(), no); err != nil {
			t.Fatal(err)
		}
		ps := e.h.srv.Parents()
		e.parent = ps[len(ps)-1]
		if !strings.Contains(string(e.parent.Blocks), "alertrouter:escalate") {
			t.Fatalf("instance of %d characters: the ticket's parent offers no Escalate: %s", len(instance), e.parent.Blocks)
		}
		tr := e.triage(t, n, nil, e.pager(t), slack.NewTriageMetrics(e.reg))
		e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:escalate", ActionTS: "1700003200.000001"}, signingSecret, e.now(), nil)
		evs := e.pd.Events()
		if len(evs) != 1 || evs[0].Payload == nil {
			t.Fatalf("instance of %d characters: PagerDuty got %+v, want the escalation's trigger", len(instance), evs)
		}
		want, _ := notify.TruncateInRunes(instance, notify.MaxPageSource)
		if got := evs[0].Payload.Source; got != want {
			t.Errorf("instance of %d characters: the escalation's source %q, want %q", len(instance), got, want)
		}
		if !strings.Contains(string(e.current(t).Blocks), "alertrouter:ack") {
			t.Errorf("instance of %d characters: the escalated page offers no Acknowledge: %s", len(instance), e.current(t).Blocks)
		}
	}
}
