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
	"github.com/alertrouter/alertrouter/store"
)

// raceIncident is the incident of the triage env's parent.
const raceIncident = "llm-inference-gpu/chat/TTFT"

// incidentStep applies one step of the dispatch core's incident lifecycle
// at the parent's Slack integration (triage/slack/0) and returns its
// outcome.
func (e *triageEnv) incidentStep(t *testing.T, step store.IncidentStep, token string) string {
	t.Helper()
	res, err := e.store.Incidents(context.Background(), []store.IncidentOp{{
		Key: store.IncidentKey("", raceIncident, "triage/slack/0"), Step: step, Token: token,
		Members: []store.Member{{Fingerprint: "aaa", StartsAt: "1700000000000"}},
		Lease:   time.Minute, TTL: time.Hour,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return res[0].Outcome
}

// escalateWhileResolving clicks Escalate on the env's parent, PagerDuty
// holding the trigger for a while, and runs during it what the dispatch
// core does to the incident (during), then waits for the click to end.
func (e *triageEnv) escalateWhileResolving(t *testing.T, tr *slack.Triage, during func()) {
	t.Helper()
	e.pd.Fail(pdtest.Fault{Delay: 300 * time.Millisecond})
	body, err := e.h.srv.Interaction(e.parent, slacktest.Click{User: "U0CAROL", UserName: "carol", ActionID: "alertrouter:escalate", ActionTS: "1700001000.000001"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := slacktest.NewRequest("http://router/slack/interactions", slacktest.Sign(signingSecret, e.now(), body), body)
	if err != nil {
		t.Fatal(err)
	}
	tr.ServeHTTP(httptest.NewRecorder(), req) // answered at once; the action goes on
	for i := 0; e.pd.Requests() == 0; i++ {
		if i == 500 {
			t.Fatal("the escalation's trigger never reached PagerDuty")
		}
		time.Sleep(10 * time.Millisecond)
	}
	during()
	tr.Wait()
}

// openRaceEnv is a triage env whose ticket incident is open at the
// parent's Slack integration, its notifier, triage and the incident's
// PagerDuty dedup key.
func openRaceEnv(t *testing.T) (*triageEnv, *slack.Notifier, *slack.Triage, string) {
	t.Helper()
	e := newTriageEnv(t, alert.ActionTicket, nil)
	n := e.notifier(t, nil)
	tr := e.tickingTriage(t, n, e.pager(t), e.pager(t), slack.NewTriageMetrics(e.reg))
	if got := e.incidentStep(t, store.StepJoin, "open1"); got != store.OutcomeOpening {
		t.Fatalf("join: %s", got)
	}
	e.incidentStep(t, store.StepOpened, "open1")
	return e, n, tr, pagerduty.DedupKey(raceIncident)
}

// An Escalate whose PagerDuty trigger was on its way while the incident
// resolved: the resolve read the message before the escalation was
// recorded and sent no resolve, so the page stayed open for a cleared
// incident. The click, once its escalation is recorded, finds the incident
// closed by the dispatch core and its parent drawn resolved, and resolves
// the page itself; the thread says so.
func TestAnEscalationRacingTheResolveIsResolvedInPagerDuty(t *testing.T) {
	e, n, tr, dedup := openRaceEnv(t)

	e.escalateWhileResolving(t, tr, func() {
		if got := e.incidentStep(t, store.StepLeave, "close1"); got != store.OutcomeClosing {
			t.Fatalf("leave: %s", got)
		}
		if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
			t.Fatal(err)
		}
		e.incidentStep(t, store.StepResolved, "close1")
		if got := e.pd.Resolves(dedup); got != 0 {
			t.Fatalf("the resolve sent PagerDuty %d resolves before the escalation was recorded, want 0 (the race)", got)
		}
	})

	evs := e.pd.Events()
	if e.pd.Triggers(dedup) != 1 || e.pd.Resolves(dedup) != 1 || evs[len(evs)-1].EventAction != "resolve" {
		t.Fatalf("PagerDuty events %+v, want the escalation's trigger, then its resolve", evs)
	}
	found := false
	for _, m := range e.h.srv.Thread(e.parent.TS) {
		found = found || strings.Contains(m.Text, "Resolved in PagerDuty: the alerts resolved while this escalation was on its way")
	}
	if !found {
		t.Errorf("the thread does not say the escalated page was resolved: %+v", e.h.srv.Thread(e.parent.TS))
	}
	if got := counter(t, e.reg, "alertrouter_slack_escalation_resolves_total", "done"); got != 1 {
		t.Errorf(`alertrouter_slack_escalation_resolves_total{outcome="done"} = %v, want 1`, got)
	}
}

// The click resolves the escalated page only on the dispatch core's word
// that the incident closed: a resolve whose notification failed returns
// the incident to open (Alertmanager retries it), and the page stays for
// that retry — which reads the escalation and resolves it — not resolved
// by the click while the alerts may fire.
func TestAnEscalationIsNotResolvedByItsClickWhileTheIncidentIsOpen(t *testing.T) {
	e, n, tr, dedup := openRaceEnv(t)

	e.escalateWhileResolving(t, tr, func() {
		e.incidentStep(t, store.StepLeave, "close1")
		if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
			t.Fatal(err)
		}
		// The webhook failed elsewhere: the closing is aborted.
		if got := e.incidentStep(t, store.StepAbort, "close1"); got != store.OutcomeOK {
			t.Fatalf("abort: %s", got)
		}
	})
	if got := e.pd.Resolves(dedup); got != 0 {
		t.Fatalf("the click resolved the escalated page of an incident still open: %+v", e.pd.Events())
	}
	// Alertmanager's retry of the resolve reads the recorded escalation.
	e.incidentStep(t, store.StepLeave, "close2")
	if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	if got := e.pd.Resolves(dedup); got != 1 {
		t.Fatalf("the retried resolve sent %d resolves of the escalated page, want 1 (events %+v)", got, e.pd.Events())
	}
}

// With send_resolved: false the resolve posts nothing and does not redraw
// the parent (ResolvedUnsent), but it is the incident's resolve all the
// same: an Escalate whose trigger raced it resolves its page too — the
// default of every Slack entry import-alertmanager writes.
func TestAnEscalationRacingAnUnsentResolveIsResolvedInPagerDuty(t *testing.T) {
	e, n, tr, dedup := openRaceEnv(t)

	e.escalateWhileResolving(t, tr, func() {
		e.incidentStep(t, store.StepLeave, "close1")
		if err := n.ResolvedUnsent(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
			t.Fatal(err)
		}
		e.incidentStep(t, store.StepResolved, "close1")
	})
	if e.pd.Triggers(dedup) != 1 || e.pd.Resolves(dedup) != 1 {
		t.Fatalf("PagerDuty events %+v, want the escalation's trigger, then its resolve", e.pd.Events())
	}
}
