package slack_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// tickingTriage is e.triage with a clock that moves on a minute at each
// reading, so that the parent's triage lines keep the order they were
// written in (a fixed clock sorts them by their text).
func (e *triageEnv) tickingTriage(t testing.TB, n *slack.Notifier, pager, escalation slack.Pager, metrics *slack.TriageMetrics) *slack.Triage {
	t.Helper()
	var mu sync.Mutex
	now := clock
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Metrics: metrics, Logger: slog.New(slog.NewTextHandler(e.h.logs, nil)),
		Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			now = now.Add(time.Minute)
			return now
		}})
	if err := tr.Add("triage", "slack/0", n, pager, escalation); err != nil {
		t.Fatal(err)
	}
	return tr
}

// pagerAt is a PagerDuty integration sending to srv, one attempt per event.
func pagerAt(t testing.TB, srv *pdtest.Server) *pagerduty.Notifier {
	t.Helper()
	pcfg := pagerduty.DefaultConfig()
	pcfg.RoutingKey = pdtest.RoutingKey
	pcfg.URL = srv.EnqueueURL()
	pager, err := pagerduty.New(&pcfg, "triage", notify.Deps{Retry: notify.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return pager
}

// resolvedNote is the dispatch core's notification that the incident of
// the env's parent resolved at its Slack integration.
func (e *triageEnv) resolvedNote(action alert.Action) *alert.Notification {
	no := under(e.parent.Channel+" "+e.parent.TS, note(alert.KindResolved, action, "resolved", "aaa"))
	no.IncidentResolved, no.Integration = true, "slack/0"
	return no
}

// hasLine reports whether one of lines starts with prefix.
func hasLine(lines []string, prefix string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) })
}

// A ticket escalated from Slack pages through escalate_to's PagerDuty,
// which the dispatch core never sent the firing to, so it would never send
// it the resolve either: PagerDuty kept paging on-call once the alerts had
// resolved, and the resolved parent offered nothing to close it. When the
// incident resolves, PagerDuty gets the resolve through the pager that was
// triggered (not the receiver's own), once even if the notification is
// delivered again; the resolved parent keeps its triage lines.
func TestAnIncidentEscalatedFromSlackIsResolvedInPagerDutyWhenItsAlertsResolve(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	own := pdtest.NewServer() // the receiver's own PagerDuty: not the one paged
	t.Cleanup(own.Close)
	n := e.notifier(t, nil)
	metrics := slack.NewTriageMetrics(e.reg)
	tr := e.tickingTriage(t, n, pagerAt(t, own), e.pager(t), metrics)
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")

	e.click(t, tr, e.parent, slacktest.Click{User: "U0CAROL", UserName: "carol", ActionID: "alertrouter:escalate", ActionTS: "1700001000.000001"}, signingSecret, e.now(), nil)
	e.click(t, tr, e.current(t), slacktest.Click{User: "U0DAVE", UserName: "dave", ActionID: "alertrouter:ack", ActionTS: "1700001000.000002"}, signingSecret, e.now(), nil)
	if e.pd.Triggers(dedup) != 1 || e.pd.Count("acknowledge", dedup) != 1 {
		t.Fatalf("PagerDuty events %+v, want the escalation's trigger and its acknowledge (answers %+v)", e.pd.Events(), e.h.srv.Responses())
	}

	if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	if got := e.pd.Resolves(dedup); got != 1 {
		t.Fatalf("PagerDuty got %d resolves of the escalated incident once its alerts resolved, want 1 (events %+v)", got, e.pd.Events())
	}
	if len(own.Events()) != 0 {
		t.Fatalf("the receiver's own PagerDuty got %+v: the escalation paged escalate_to's", own.Events())
	}
	parent := e.current(t)
	if b := buttons(t, parent); len(b) != 0 {
		t.Fatalf("the resolved parent offers %v", b)
	}
	lines := logLines(t, parent)
	for i, want := range []string{"Escalated to a page by <@U0CAROL>", "Acknowledged in PagerDuty by <@U0DAVE>", "Resolved in PagerDuty: the alerts resolved"} {
		if i >= len(lines) || !strings.HasPrefix(lines[i], want) {
			t.Fatalf("the resolved parent's triage lines are %q, want %q… as line %d", lines, want, i+1)
		}
	}
	if !strings.Contains(string(parent.Blocks), "[RESOLVED]") {
		t.Fatalf("the parent is not drawn resolved: %s", parent.Blocks)
	}

	// Delivered again (Alertmanager's retry after a later failure, another
	// replica): PagerDuty is not sent the resolve again.
	if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	if got := e.pd.Resolves(dedup); got != 1 {
		t.Fatalf("a second delivery of the resolve sent PagerDuty %d resolves, want still 1", got)
	}
	if got := len(logLines(t, e.current(t))); got != len(lines) {
		t.Fatalf("a second delivery of the resolve drew %d triage lines, want %d", got, len(lines))
	}
	if got := counter(t, e.reg, "alertrouter_slack_escalation_resolves_total", "done"); got != 1 {
		t.Fatalf(`alertrouter_slack_escalation_resolves_total{outcome="done"} = %v, want 1`, got)
	}
}

// A resolve PagerDuty fails to take fails the Slack notification with a
// retryable error before anything is posted: the webhook is answered 5xx,
// and Alertmanager's retry resolves and posts once. A resolve PagerDuty
// refuses (a retry cannot help) is said on the parent, and the
// notification goes on.
func TestAFailedResolveOfAnEscalationFailsTheSlackNotificationBeforeItPosts(t *testing.T) {
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	escalated := func(t *testing.T) (*triageEnv, *slack.Notifier) {
		e := newTriageEnv(t, alert.ActionTicket, nil)
		n := e.notifier(t, nil)
		tr := e.tickingTriage(t, n, nil, e.pager(t), slack.NewTriageMetrics(e.reg))
		e.click(t, tr, e.parent, slacktest.Click{User: "U0CAROL", UserName: "carol", ActionID: "alertrouter:escalate", ActionTS: "1700001100.000001"}, signingSecret, e.now(), nil)
		if e.pd.Triggers(dedup) != 1 {
			t.Fatalf("escalation: PagerDuty events %+v", e.pd.Events())
		}
		return e, n
	}

	t.Run("unreachable", func(t *testing.T) {
		e, n := escalated(t)
		before, updates := len(e.h.srv.Thread(e.parent.TS)), e.current(t).Updates
		e.pd.Fail(pdtest.Fault{Status: 503})
		err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket))
		if err == nil || !alert.Retryable(err) {
			t.Fatalf("Notify = %v, want a retryable error: PagerDuty still pages for the escalated incident", err)
		}
		if got := len(e.h.srv.Thread(e.parent.TS)); got != before || e.current(t).Updates != updates {
			t.Fatalf("the failed notification posted %d replies and edited the parent %d times: its retry would post them again", got-before, e.current(t).Updates-updates)
		}
		if got := counter(t, e.reg, "alertrouter_slack_escalation_resolves_total", "failed"); got != 1 {
			t.Fatalf(`alertrouter_slack_escalation_resolves_total{outcome="failed"} = %v, want 1`, got)
		}
		if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
			t.Fatal(err)
		}
		if e.pd.Resolves(dedup) != 1 || len(e.h.srv.Thread(e.parent.TS)) != before+1 {
			t.Fatalf("the retry: %d resolves, %d new replies; want 1 and 1", e.pd.Resolves(dedup), len(e.h.srv.Thread(e.parent.TS))-before)
		}
	})

	t.Run("refused", func(t *testing.T) {
		e, n := escalated(t)
		e.pd.Fail(pdtest.Fault{Status: 400})
		if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
			t.Fatalf("Notify = %v: a resolve PagerDuty refuses is no reason to retry the Slack notification", err)
		}
		if lines := logLines(t, e.current(t)); !hasLine(lines, "The alerts resolved, but resolving the escalated page in PagerDuty failed") {
			t.Fatalf("the resolved parent's lines %q do not say the page is left open", lines)
		}
		if got := counter(t, e.reg, "alertrouter_slack_escalation_resolves_total", "refused"); got != 1 {
			t.Fatalf(`alertrouter_slack_escalation_resolves_total{outcome="refused"} = %v, want 1`, got)
		}
	})
}

// An escalation resolved by hand (Resolve) is not resolved again, and an
// incident never escalated sends PagerDuty nothing when it resolves.
func TestOnlyAnOpenEscalationIsResolvedWithItsAlerts(t *testing.T) {
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	e := newTriageEnv(t, alert.ActionTicket, nil)
	n := e.notifier(t, nil)
	tr := e.tickingTriage(t, n, nil, e.pager(t), nil)
	e.click(t, tr, e.parent, slacktest.Click{User: "U0CAROL", UserName: "carol", ActionID: "alertrouter:escalate", ActionTS: "1700001200.000001"}, signingSecret, e.now(), nil)
	e.click(t, tr, e.current(t), slacktest.Click{User: "U0BOB", UserName: "bob", ActionID: "alertrouter:resolve", ActionTS: "1700001200.000002"}, signingSecret, e.now(), nil)
	if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	if got := e.pd.Resolves(dedup); got != 1 {
		t.Fatalf("PagerDuty got %d resolves, want the hand resolve's only", got)
	}

	plain := newTriageEnv(t, alert.ActionTicket, nil)
	pn := plain.notifier(t, nil)
	plain.tickingTriage(t, pn, nil, plain.pager(t), nil)
	if err := pn.Notify(context.Background(), plain.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	if ev := plain.pd.Events(); len(ev) != 0 {
		t.Fatalf("a ticket never escalated sent PagerDuty %+v when it resolved", ev)
	}
}

// An incident resolved by hand in PagerDuty (Resolve) while its alerts
// fired is triggered there again when a new alert joins it (routing's
// reopenHandResolved). Its Slack parent said "Resolved in PagerDuty" and
// offered neither Acknowledge nor Resolve, and the thread a plain update.
// The notification flagged Repaged says so in the thread, forgets the
// message's acknowledgement and resolve, and redraws the parent with
// Acknowledge and Resolve, which act on the new PagerDuty incident.
func TestAnIncidentPagedAgainAfterAHandResolveOffersAckAndResolveAgain(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	n := e.notifier(t, nil)
	tr := e.tickingTriage(t, n, e.pager(t), nil, slack.NewTriageMetrics(e.reg))
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	ref := e.parent.Channel + " " + e.parent.TS
	e.click(t, tr, e.parent, slacktest.Click{User: "U0ALICE", UserName: "alice", ActionID: "alertrouter:ack", ActionTS: "1700001300.000001"}, signingSecret, e.now(), nil)
	e.click(t, tr, e.current(t), slacktest.Click{User: "U0BOB", UserName: "bob", ActionID: "alertrouter:resolve", ActionTS: "1700001300.000002"}, signingSecret, e.now(), nil)
	if got := strings.Join(buttons(t, e.current(t)), " "); strings.Contains(got, "ack") || strings.Contains(got, "resolve") {
		t.Fatalf("after ack and resolve the parent offers %s", got)
	}

	// A plain update (PagerDuty not paged again) leaves the parent alone.
	plain := under(ref, note(alert.KindFiring, alert.ActionPage, "firing", "bbb"))
	plain.Integration = "slack/0"
	updates := e.current(t).Updates
	if err := n.Notify(context.Background(), plain); err != nil {
		t.Fatal(err)
	}
	if e.current(t).Updates != updates {
		t.Fatal("a plain update redrew the parent")
	}

	repaged := under(ref, note(alert.KindFiring, alert.ActionPage, "firing", "ccc"))
	repaged.Integration, repaged.Repaged = "slack/0", true
	if err := n.Notify(context.Background(), repaged); err != nil {
		t.Fatal(err)
	}
	thread := e.h.srv.Thread(e.parent.TS)
	last := thread[len(thread)-1]
	if s := sectionTexts(t, last); !strings.Contains(s, "PagerDuty paged again") || !strings.Contains(s, "resolved there by <@U0BOB>") || !strings.Contains(s, "*Update:* 1 firing") {
		t.Fatalf("the update's reply does not say PagerDuty was paged again after Bob's resolve: %s", s)
	}
	parent := e.current(t)
	if got := strings.Join(buttons(t, parent), " "); got != "alertrouter:ack alertrouter:silence:1h alertrouter:silence:4h alertrouter:silence:24h alertrouter:resolve" {
		t.Fatalf("the parent paged again offers %q, want Acknowledge and Resolve again", got)
	}
	lines := logLines(t, parent)
	for i, want := range []string{"Acknowledged in PagerDuty by <@U0ALICE>", "Resolved in PagerDuty by <@U0BOB>", "Paged again in PagerDuty: a new alert joined the incident resolved there by <@U0BOB>"} {
		if i >= len(lines) || !strings.HasPrefix(lines[i], want) {
			t.Fatalf("the parent's triage lines are %q, want %q… as line %d", lines, want, i+1)
		}
	}

	// The buttons act on the new PagerDuty incident.
	e.pagedAgain(t)
	e.click(t, tr, parent, slacktest.Click{User: "U0ALICE", UserName: "alice", ActionID: "alertrouter:ack", ActionTS: "1700001300.000003"}, signingSecret, e.now(), nil)
	e.click(t, tr, e.current(t), slacktest.Click{User: "U0BOB", UserName: "bob", ActionID: "alertrouter:resolve", ActionTS: "1700001300.000004"}, signingSecret, e.now(), nil)
	if a, r := e.pd.Count("acknowledge", dedup), e.pd.Resolves(dedup); a != 2 || r != 2 {
		t.Fatalf("after the new page: %d acknowledges and %d resolves in all, want 2 and 2 (answers %+v)", a, r, e.h.srv.Responses())
	}
}

// Without triage (a channel offering no action), the reply still says
// PagerDuty was paged again.
func TestARepagedUpdateIsSaidWithoutTriage(t *testing.T) {
	h := newHarness(t)
	n, first := h.opened(t)
	repaged := under(first.Ref, note(alert.KindFiring, alert.ActionPage, "firing", "bbb"))
	repaged.Repaged = true
	if err := n.Notify(context.Background(), repaged); err != nil {
		t.Fatal(err)
	}
	thread := h.srv.Thread(h.srv.Parents()[0].TS)
	if len(thread) != 1 || !strings.Contains(string(thread[0].Blocks), "PagerDuty paged again") || !strings.Contains(thread[0].Text, "PagerDuty paged again") {
		t.Fatalf("thread = %+v", thread)
	}
}

// sectionTexts joins the texts of m's sections.
func sectionTexts(t *testing.T, m slacktest.Message) string {
	t.Helper()
	var out []string
	for _, b := range blocksOf(t, m) {
		if text, ok := b["text"].(map[string]any); ok && b["type"] == "section" {
			out = append(out, fmt.Sprint(text["text"]))
		}
	}
	return strings.Join(out, "\n")
}

// counter is the value of counter name{outcome} in reg.
func counter(t *testing.T, reg *prometheus.Registry, name, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label(m, "outcome") == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// The parent redrawn resolved by the dispatch core keeps the lines of what
// was done on it (it dropped them all, the acknowledgement included): only
// the buttons go.
func TestTheResolvedParentKeepsItsTriageLines(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	n := e.notifier(t, nil)
	tr := e.tickingTriage(t, n, e.pager(t), nil, nil)
	e.click(t, tr, e.parent, slacktest.Click{User: "U0ALICE", UserName: "alice", ActionID: "alertrouter:ack", ActionTS: "1700001400.000001"}, signingSecret, e.now(), nil)
	if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionPage)); err != nil {
		t.Fatal(err)
	}
	parent := e.current(t)
	if lines := logLines(t, parent); len(lines) != 1 || !strings.HasPrefix(lines[0], "Acknowledged in PagerDuty by <@U0ALICE>") {
		t.Fatalf("the resolved parent's triage lines are %q, want the acknowledgement", lines)
	}
	if b := buttons(t, parent); len(b) != 0 || !strings.Contains(string(parent.Blocks), "[RESOLVED]") {
		t.Fatalf("the parent is not drawn resolved without buttons (buttons %v): %s", b, parent.Blocks)
	}
}

// An entry that sends no resolves (send_resolved: false) still resolves in
// PagerDuty the page an Escalate click opened, when the dispatch core tells
// it the incident resolved unsent (alert.UnsentResolves): nothing is posted.
func TestAnEscalationIsResolvedAlsoWhereResolvesAreNotSent(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	n := e.notifier(t, nil)
	tr := e.tickingTriage(t, n, e.pager(t), e.pager(t), slack.NewTriageMetrics(e.reg))
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	e.click(t, tr, e.parent, slacktest.Click{User: "U0CAROL", UserName: "carol", ActionID: "alertrouter:escalate", ActionTS: "1700001000.000001"}, signingSecret, e.now(), nil)
	if e.pd.Triggers(dedup) != 1 {
		t.Fatalf("PagerDuty events %+v, want the escalation's trigger", e.pd.Events())
	}
	posts := e.h.srv.Calls("chat.postMessage")
	if err := n.ResolvedUnsent(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	if got := e.pd.Resolves(dedup); got != 1 {
		t.Fatalf("PagerDuty got %d resolves of the escalated incident, want 1", got)
	}
	if got := e.h.srv.Calls("chat.postMessage"); got != posts {
		t.Errorf("%d messages posted for a resolve that is not sent", got-posts)
	}
}

// escalatedThenReloaded escalates the env's parent to escalate_to "oncall"
// (PagerDuty e.pd), then builds the notifier and triage of a reload that
// points escalate_to at "oncall2", whose PagerDuty is other.
func (e *triageEnv) escalatedThenReloaded(t *testing.T) (other *pdtest.Server, n2 *slack.Notifier, tr2 *slack.Triage) {
	t.Helper()
	n := e.notifier(t, func(c *slack.Config) { c.EscalateTo = "oncall" })
	tr := e.tickingTriage(t, n, e.pager(t), e.pager(t), slack.NewTriageMetrics(e.reg))
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	e.click(t, tr, e.parent, slacktest.Click{User: "U0CAROL", UserName: "carol", ActionID: "alertrouter:escalate", ActionTS: "1700001000.000001"}, signingSecret, e.now(), nil)
	if e.pd.Triggers(dedup) != 1 {
		t.Fatalf("PagerDuty events %+v, want the escalation's trigger", e.pd.Events())
	}
	other = pdtest.NewServer()
	t.Cleanup(other.Close)
	n2 = e.notifier(t, func(c *slack.Config) { c.EscalateTo = "oncall2" })
	tr2 = e.tickingTriage(t, n2, pagerAt(t, other), pagerAt(t, other), slack.NewTriageMetrics(prometheus.NewRegistry()))
	return other, n2, tr2
}

// An escalation records the receiver it paged: when a reload has changed
// escalate_to since and that receiver is gone, the incident's resolve is not
// sent to the other PagerDuty (it would close nothing and say it did); the
// parent says to resolve the page by hand.
func TestAnEscalationIsNotResolvedThroughAnotherEscalateTo(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	// Reloaded: escalate_to names another receiver, with its own
	// PagerDuty, and oncall is gone.
	other, n2, _ := e.escalatedThenReloaded(t)
	if err := n2.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	if len(other.Events()) != 0 {
		t.Errorf("the new escalate_to's PagerDuty got %+v for a page it never had", other.Events())
	}
	lines := logLines(t, e.current(t))
	if last := lines[len(lines)-1]; !strings.Contains(last, "resolve it there by hand") || !strings.Contains(last, `"oncall"`) {
		t.Errorf("the parent's last line %q, want it to say to resolve the page by hand", last)
	}
}

// An escalation's acknowledgement and resolve go to the PagerDuty it paged
// while the configuration still has that receiver, even after a reload
// pointed escalate_to at another one: the new receiver's PagerDuty never
// had the page, and the one that has it would stay open.
func TestAnEscalationIsAcknowledgedAndResolvedWhereItPagedAfterAReload(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	// Reloaded: escalate_to names oncall2; oncall is still configured.
	other, n2, tr2 := e.escalatedThenReloaded(t)
	tr2.AddPager("oncall", e.pager(t))
	tr2.AddPager("oncall2", pagerAt(t, other))
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")

	e.click(t, tr2, e.current(t), slacktest.Click{User: "U0ALICE", UserName: "alice", ActionID: "alertrouter:ack", ActionTS: "1700001060.000001"}, signingSecret, e.now(), nil)
	if got := e.pd.Count("acknowledge", dedup); got != 1 {
		t.Errorf("the escalated page got %d acknowledgements where it paged (events %+v), want 1", got, e.pd.Events())
	}
	if err := n2.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	if got := e.pd.Resolves(dedup); got != 1 {
		t.Errorf("the escalated page got %d resolves where it paged, want 1 (events %+v)", got, e.pd.Events())
	}
	if len(other.Events()) != 0 {
		t.Errorf("the new escalate_to's PagerDuty got %+v for a page it never had", other.Events())
	}
	if lines := logLines(t, e.current(t)); !hasLine(lines, "Resolved in PagerDuty: the alerts resolved") {
		t.Errorf("the parent's lines %q do not say the page was resolved", lines)
	}
}

// An escalated ticket whose parent was deleted: the update that replaces
// the parent carries what was done on it, so the incident's resolve still
// resolves the escalation in PagerDuty (a review: the new parent started
// blank, offered Escalate again, and the escalated page stayed open).
func TestAnEscalationSurvivesItsParentBeingReplaced(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	n := e.notifier(t, nil)
	tr := e.tickingTriage(t, n, nil, e.pager(t), slack.NewTriageMetrics(e.reg))
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	e.click(t, tr, e.parent, slacktest.Click{User: "U0CAROL", UserName: "carol", ActionID: "alertrouter:escalate", ActionTS: "1700001000.000001"}, signingSecret, e.now(), nil)
	if e.pd.Triggers(dedup) != 1 {
		t.Fatalf("PagerDuty events %+v, want the escalation's trigger", e.pd.Events())
	}
	e.h.srv.Delete(e.parent.Channel, e.parent.TS)
	update := under(e.parent.Channel+" "+e.parent.TS, note(alert.KindFiring, alert.ActionTicket, "firing", "bbb"))
	update.Integration = "slack/0"
	if err := n.Notify(context.Background(), update); err != nil {
		t.Fatalf("the update replacing the parent: %v", err)
	}
	parents := e.h.srv.Parents()
	if len(parents) != 1 || strings.Contains(string(parents[0].Blocks), "alertrouter:escalate") {
		t.Fatalf("%d parents (escalate offered: %v), want one new parent that does not offer Escalate again", len(parents), len(parents) > 0 && strings.Contains(string(parents[0].Blocks), "alertrouter:escalate"))
	}
	// Another replica's update, sent with the deleted parent's Ref as the
	// first was (an Alertmanager HA pair): it goes on in the new parent's
	// thread — one new parent, not two (a review: two replicas posted
	// two, one left drawn firing for good).
	other := e.notifier(t, func(c *slack.Config) { c.APIURL = strings.Replace(c.APIURL, "127.0.0.1", "localhost", 1) })
	e.tickingTriage(t, other, nil, e.pager(t), slack.NewTriageMetrics(prometheus.NewRegistry()))
	racing := under(e.parent.Channel+" "+e.parent.TS, note(alert.KindFiring, alert.ActionTicket, "firing", "ccc"))
	racing.Integration = "slack/0"
	if err := other.Notify(context.Background(), racing); err != nil {
		t.Fatalf("the other replica's update: %v", err)
	}
	if got := e.h.srv.Parents(); len(got) != 1 || len(e.h.srv.Thread(got[0].TS)) != 1 || parentOf(racing.Ref) != ref(got[0]) {
		t.Fatalf("%d parents, Ref %q; want the other replica's update in the new parent's thread", len(got), racing.Ref)
	}
	resolved := under(update.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa", "bbb"))
	resolved.IncidentResolved, resolved.Integration = true, "slack/0"
	if err := n.Notify(context.Background(), resolved); err != nil {
		t.Fatal(err)
	}
	if got := e.pd.Resolves(dedup); got != 1 {
		t.Fatalf("PagerDuty got %d resolves of the escalated incident once its alerts resolved, want 1 (events %+v)", got, e.pd.Events())
	}
}

// A click on the old parent after it was replaced (the app removed from
// its channel: the message stays clickable) escalates the ticket: the
// incident's resolve, drawn on the new parent, still resolves that page
// in PagerDuty (a review: it stayed open).
func TestAnEscalationOfAReplacedParentIsResolved(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	n := e.notifier(t, nil)
	tr := e.tickingTriage(t, n, nil, e.pager(t), slack.NewTriageMetrics(e.reg))
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	e.h.srv.Delete(e.parent.Channel, e.parent.TS)
	update := under(e.parent.Channel+" "+e.parent.TS, note(alert.KindFiring, alert.ActionTicket, "firing", "bbb"))
	update.Integration = "slack/0"
	if err := n.Notify(context.Background(), update); err != nil {
		t.Fatalf("the update replacing the parent: %v", err)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U0CAROL", UserName: "carol", ActionID: "alertrouter:escalate", ActionTS: "1700001000.000001"}, signingSecret, e.now(), nil)
	if e.pd.Triggers(dedup) != 1 {
		t.Fatalf("PagerDuty got %d triggers, want the escalation of the old parent", e.pd.Triggers(dedup))
	}
	resolved := under(update.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa", "bbb"))
	resolved.IncidentResolved, resolved.Integration = true, "slack/0"
	if err := n.Notify(context.Background(), resolved); err != nil {
		t.Fatal(err)
	}
	if got := e.pd.Resolves(dedup); got != 1 {
		t.Fatalf("PagerDuty got %d resolves of the old parent's escalation once the alerts resolved, want 1", got)
	}
}

// An alert of an incident resolved by hand from Slack fired again after its
// resolve was lost (routing's handResolvedEpisode): an opening under the
// same parent, flagged Repaged. PagerDuty was triggered again but Slack
// drew a plain opening — the parent still said "Resolved in PagerDuty"
// (a review). The opening says PagerDuty was paged again, in the thread
// and on the parent, which offers Acknowledge and Resolve again.
func TestAnIncidentFiringAgainAfterAHandResolveSaysItPagedAgain(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	n := e.notifier(t, nil)
	tr := e.tickingTriage(t, n, e.pager(t), nil, slack.NewTriageMetrics(e.reg))
	ref := e.parent.Channel + " " + e.parent.TS
	e.click(t, tr, e.parent, slacktest.Click{User: "U0BOB", UserName: "bob", ActionID: "alertrouter:resolve", ActionTS: "1700001400.000001"}, signingSecret, e.now(), nil)
	again := under(ref, note(alert.KindFiring, alert.ActionPage, "firing", "aaa"))
	again.Integration, again.Opening, again.Repaged = "slack/0", true, true
	if err := n.Notify(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	thread := e.h.srv.Thread(e.parent.TS)
	if s := sectionTexts(t, thread[len(thread)-1]); !strings.Contains(s, "PagerDuty paged again") || !strings.Contains(s, "resolved there by <@U0BOB>") || !strings.Contains(s, "fired again") {
		t.Fatalf("the opening's reply does not say PagerDuty was paged again after Bob's resolve: %s", s)
	}
	parent := e.current(t)
	if got := strings.Join(buttons(t, parent), " "); !strings.Contains(got, "alertrouter:ack") || !strings.Contains(got, "alertrouter:resolve") {
		t.Fatalf("the parent paged again offers %q, want Acknowledge and Resolve again", got)
	}
	if lines := strings.Join(logLines(t, parent), "\n"); !strings.Contains(lines, "Paged again in PagerDuty: an alert of the incident resolved there by <@U0BOB> fired again") {
		t.Fatalf("the parent's triage lines are %q, want the page again said", lines)
	}
}

// A partial resolve reaching Slack after the incident's resolve (another
// webhook's closing, sent at once while this one waited in the update
// window, or another replica's) replied "N resolved" under "[RESOLVED]"
// (an audit: 51 of 80 bursts). Once the parent is drawn resolved, such a
// reply is not posted; before, it is. So also without triage buttons (the
// parent's resolved mark is kept all the same; before, it was not).
func TestAPartialResolveAfterTheIncidentsResolveIsNotPosted(t *testing.T) {
	for _, buttons := range []bool{true, false} {
		t.Run(fmt.Sprintf("buttons=%t", buttons), func(t *testing.T) { partialAfterResolve(t, buttons) })
	}
}

func partialAfterResolve(t *testing.T, buttons bool) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	n := e.notifier(t, nil)
	if buttons {
		e.tickingTriage(t, n, e.pager(t), nil, slack.NewTriageMetrics(e.reg))
	} else {
		n = e.notifier(t, func(c *slack.Config) { c.Actions = slack.TriageActions{} })
		e.triage(t, n, nil, nil, nil)
	}
	ref := e.parent.Channel + " " + e.parent.TS
	partial := func(fp string) *alert.Notification {
		no := under(ref, note(alert.KindResolved, alert.ActionPage, "resolved", fp))
		no.Integration = "slack/0"
		return no
	}
	if err := n.Notify(context.Background(), partial("bbb")); err != nil {
		t.Fatal(err)
	}
	before := len(e.h.srv.Thread(e.parent.TS))
	if before == 0 {
		t.Fatal("a partial resolve of a firing incident was not posted")
	}
	resolved := under(ref, note(alert.KindResolved, alert.ActionPage, "resolved", "aaa"))
	resolved.Integration, resolved.IncidentResolved = "slack/0", true
	if err := n.Notify(context.Background(), resolved); err != nil {
		t.Fatal(err)
	}
	thread := e.h.srv.Thread(e.parent.TS)
	if err := n.Notify(context.Background(), partial("ccc")); err != nil {
		t.Fatal(err)
	}
	if after := e.h.srv.Thread(e.parent.TS); len(after) != len(thread) {
		t.Fatalf("a partial resolve after the incident's resolve was posted: %q", after[len(after)-1].Text)
	}
}

// A click carrying a copy of the parent drawn before PagerDuty was paged
// again (its Resolve recorded in the buttons' value) redraws the parent
// with what the store says — the page's Acknowledge and Resolve offered —,
// not with the copy's Resolve (an audit: a Silence on the older copy hid
// Acknowledge and Resolve from the new page for good).
func TestAClickOnACopyFromBeforeAPageAgainKeepsAckAndResolve(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	n := e.notifier(t, nil)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: silences(t), Logger: slog.New(slog.NewTextHandler(e.h.logs, nil))})
	if err := tr.Add("triage", "slack/0", n, e.pager(t), nil); err != nil {
		t.Fatal(err)
	}
	ref := e.parent.Channel + " " + e.parent.TS
	e.click(t, tr, e.parent, slacktest.Click{User: "U0BOB", UserName: "bob", ActionID: "alertrouter:resolve", ActionTS: "1700001400.000001"}, signingSecret, e.now(), nil)
	before := e.current(t)
	if got := strings.Join(buttons(t, before), " "); strings.Contains(got, "alertrouter:resolve") {
		t.Fatalf("after the Resolve the parent offers %s", got)
	}
	repaged := under(ref, note(alert.KindFiring, alert.ActionPage, "firing", "ccc"))
	repaged.Integration, repaged.Repaged = "slack/0", true
	if err := n.Notify(context.Background(), repaged); err != nil {
		t.Fatal(err)
	}
	const offered = "alertrouter:ack alertrouter:silence:1h alertrouter:silence:4h alertrouter:silence:24h alertrouter:resolve"
	if got := strings.Join(buttons(t, e.current(t)), " "); got != offered {
		t.Fatalf("the parent paged again offers %q, want %q", got, offered)
	}
	e.click(t, tr, before, slacktest.Click{User: "U0CAROL", UserName: "carol", ActionID: "alertrouter:silence:1h", ActionTS: "1700001400.000002"}, signingSecret, e.now(), nil)
	if got := strings.Join(buttons(t, e.current(t)), " "); got != "alertrouter:ack alertrouter:unsilence alertrouter:resolve" {
		t.Fatalf("after a Silence on the copy from before the page, the parent offers %q, want Acknowledge, Unsilence and Resolve", got)
	}
}

// failAckSet fails, while on, a Set holding a message's ":ack" state key.
type failAckSet struct {
	store.Store
	on atomic.Bool
}

func (f *failAckSet) Set(ctx context.Context, es []store.Entry) error {
	if f.on.Load() {
		for _, e := range es {
			if strings.HasSuffix(e.Key, ":ack") {
				return errors.New("injected: store write failed")
			}
		}
	}
	return f.Store.Set(ctx, es)
}

// On a parent paged again, an Acknowledge done in PagerDuty whose record
// the store did not take is still drawn done: the click's own action
// holds, whatever the store says (a review: Acknowledge offered again).
func TestAnAckWhoseRecordFailedOnAPageAgainIsDrawnDone(t *testing.T) {
	fs := &failAckSet{Store: store.NewMemory()}
	e := newTriageEnv(t, alert.ActionPage, fs)
	n := e.notifier(t, nil)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Logger: slog.New(slog.NewTextHandler(e.h.logs, nil))})
	if err := tr.Add("triage", "slack/0", n, e.pager(t), nil); err != nil {
		t.Fatal(err)
	}
	ref := e.parent.Channel + " " + e.parent.TS
	e.click(t, tr, e.parent, slacktest.Click{User: "U0BOB", UserName: "bob", ActionID: "alertrouter:resolve", ActionTS: "1700001450.000001"}, signingSecret, e.now(), nil)
	repaged := under(ref, note(alert.KindFiring, alert.ActionPage, "firing", "ccc"))
	repaged.Integration, repaged.Repaged = "slack/0", true
	if err := n.Notify(context.Background(), repaged); err != nil {
		t.Fatal(err)
	}
	e.pagedAgain(t)
	fs.on.Store(true)
	e.click(t, tr, e.current(t), slacktest.Click{User: "U0CAROL", UserName: "carol", ActionID: "alertrouter:ack", ActionTS: "1700001450.000002"}, signingSecret, e.now(), nil)
	fs.on.Store(false)
	if got := e.pd.Count("acknowledge", pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")); got != 1 {
		t.Fatalf("PagerDuty got %d acknowledges, want 1", got)
	}
	if got := strings.Join(buttons(t, e.current(t)), " "); strings.Contains(got, "alertrouter:ack") {
		t.Fatalf("acknowledged in PagerDuty, the parent offers %s", got)
	}
}
