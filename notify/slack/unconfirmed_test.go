package slack_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/amtest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// lateFront is a server before target that hands it the first n requests
// — target does what they ask — and answers them only once the client has
// given up, as a PagerDuty or an Alertmanager slower than the click's
// timeout does; later requests pass through.
func lateFront(t *testing.T, target http.Handler, n int) *httptest.Server {
	t.Helper()
	return lateFrontFor(t, target, n, func(*http.Request) bool { return true })
}

// lateFrontFor is lateFront answering late the first n requests that
// match (others pass through).
func lateFrontFor(t *testing.T, target http.Handler, n int, match func(*http.Request) bool) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		late := n > 0 && match(r)
		if late {
			n--
		}
		mu.Unlock()
		if !late {
			target.ServeHTTP(w, r)
			return
		}
		target.ServeHTTP(httptest.NewRecorder(), r)
		<-r.Context().Done()
	}))
	t.Cleanup(s.Close)
	return s
}

// proxyTo is a handler passing requests on to base.
func proxyTo(t *testing.T, base string) http.Handler {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	return httputil.NewSingleHostReverseProxy(u)
}

// pagerThrough is a PagerDuty integration sending its events to enqueue,
// one attempt per event.
func pagerThrough(t *testing.T, enqueue string) *pagerduty.Notifier {
	t.Helper()
	pcfg := pagerduty.DefaultConfig()
	pcfg.RoutingKey = "0123456789abcdef0123456789abcdef"
	pcfg.URL = enqueue
	p, err := pagerduty.New(&pcfg, "triage", notify.Deps{Retry: notify.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// clickTimeout is the click's timeout of these tests: the late answers
// come after it whatever it is.
const clickTimeout = time.Second

// An Escalate whose trigger PagerDuty took after the click's timeout (its
// answer came too late): the user was answered nothing (the answer shared
// the spent deadline), and the escalation was not recorded, so its page
// was never resolved when the alerts resolved. The user is told it may
// have paged and to check PagerDuty, the escalation is recorded (the
// parent offers its Acknowledge and Resolve), and PagerDuty gets its
// resolve with the alerts.
func TestAnEscalationPagerDutyConfirmedTooLateIsSaidAndResolvedWithItsAlerts(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	n := e.notifier(t, nil)
	front := lateFront(t, e.pd.Config.Handler, 1)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Timeout: clickTimeout, Metrics: slack.NewTriageMetrics(e.reg), Logger: slog.New(slog.NewTextHandler(e.h.logs, nil))})
	if err := tr.Add("triage", "slack/0", n, nil, pagerThrough(t, front.URL+"/v2/enqueue")); err != nil {
		t.Fatal(err)
	}
	dk := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")

	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:escalate", ActionTS: "1700001000.000001"}, signingSecret, e.now(), nil)
	if got := e.pd.Triggers(dk); got != 1 {
		t.Fatalf("PagerDuty took %d triggers, want 1 (the late one)", got)
	}
	r := e.h.srv.Responses()
	if len(r) != 1 || !strings.Contains(r[0].Text, "may have been done") || !strings.Contains(r[0].Text, "Check PagerDuty") {
		t.Fatalf("answers %+v, want one saying the escalation may have paged and to check PagerDuty", r)
	}
	if got := e.actionCount(slack.ActionEscalate, slack.OutcomeUnconfirmed); got != 1 {
		t.Fatalf("escalate counted unconfirmed %v times, want 1", got)
	}
	parent := e.current(t)
	if got := strings.Join(buttons(t, parent), " "); !strings.Contains(got, "alertrouter:ack") || strings.Contains(got, "alertrouter:escalate") {
		t.Fatalf("buttons after the unconfirmed escalation: %s, want the escalation's Acknowledge and no Escalate", got)
	}
	if !hasLine(logLines(t, parent), "Escalated to a page by <@U123> — PagerDuty did not confirm it in time") {
		t.Fatalf("parent lines %q", logLines(t, parent))
	}

	if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatal(err)
	}
	if got := e.pd.Resolves(dk); got != 1 {
		t.Fatalf("PagerDuty got %d resolves once the alerts resolved, want 1: its late page stays open", got)
	}
}

// An Acknowledge PagerDuty answered too late is not recorded (a second
// click is safe: PagerDuty takes it once) and the user is told so.
func TestAnAcknowledgePagerDutyConfirmedTooLateIsSaidAndCanBeClickedAgain(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	front := lateFront(t, e.pd.Config.Handler, 1)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Timeout: clickTimeout, Metrics: slack.NewTriageMetrics(e.reg)})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), pagerThrough(t, front.URL+"/v2/enqueue"), nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700001000.000002"}, signingSecret, e.now(), nil)
	r := e.h.srv.Responses()
	if len(r) != 1 || !strings.Contains(r[0].Text, "may have been done") || !strings.Contains(r[0].Text, "clicking again is safe") {
		t.Fatalf("answers %+v, want one saying the acknowledgement may have been made", r)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700001000.000003"}, signingSecret, e.now(), nil)
	if got := e.pd.Count("acknowledge", pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")); got != 2 {
		t.Fatalf("PagerDuty got %d acknowledges, want 2 (the late one, and the second click's) (answers %+v)", got, e.h.srv.Responses())
	}
	if got := e.actionCount(slack.ActionAck, slack.OutcomeDone); got != 1 {
		t.Fatalf("ack done %v, want 1", got)
	}
}

// silenceCreate matches Alertmanager's POST /api/v2/silences.
func silenceCreate(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/api/v2/silences"
}

// failingLookups answers GET /api/v2/silences 503 (the look-up of a
// silence whose create got no answer), and passes the rest to target.
func failingLookups(target http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/api/v2/silences" {
			http.Error(w, "lookups fail", http.StatusServiceUnavailable)
			return
		}
		target.ServeHTTP(w, r)
	})
}

// A Silence Alertmanager made after the click's timeout (its answer came
// too late): the user was answered nothing, and the silence was on no
// message. The router looks it up in Alertmanager, finds it, and records
// it as done — the thread names it and the parent offers Unsilence.
func TestASilenceAlertmanagerConfirmedTooLateIsFoundAndKept(t *testing.T) {
	am := amtest.Start(t, "route: {receiver: none}\nreceivers: [{name: none}]\n")
	direct, err := amsilence.New(amsilence.Config{URL: am.URL})
	if err != nil {
		t.Fatal(err)
	}
	front := lateFrontFor(t, proxyTo(t, am.URL), 1, silenceCreate)
	late, err := amsilence.New(amsilence.Config{URL: front.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: late, Timeout: clickTimeout, Metrics: slack.NewTriageMetrics(e.reg)})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:4h", ActionTS: "1700001310.000001"}, signingSecret, e.now(), nil)
	list, err := direct.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("silences %+v, %v: want the one Alertmanager made late", list, err)
	}
	if got := e.actionCount(slack.ActionSilence, slack.OutcomeDone); got != 1 {
		t.Fatalf("silence done %v times, want 1 (answers %+v)", got, e.h.srv.Responses())
	}
	if thread := e.h.srv.Thread(e.parent.TS); len(thread) != 1 || !strings.Contains(thread[0].Text, list[0].ID) {
		t.Fatalf("thread %+v, want the reply naming silence %s", thread, list[0].ID)
	}
	if b := strings.Join(buttons(t, e.current(t)), " "); !strings.Contains(b, "alertrouter:unsilence") {
		t.Fatalf("buttons after the silence %q, want Unsilence", b)
	}
}

// A Silence Alertmanager answered too late, and Alertmanager's silences
// cannot be read to look it up: the user was answered nothing. There is
// no silence id to keep: the user is told the silence may exist and to
// check Alertmanager's silences, and the button stays.
func TestASilenceAlertmanagerConfirmedTooLateIsSaid(t *testing.T) {
	am := amtest.Start(t, "route: {receiver: none}\nreceivers: [{name: none}]\n")
	direct, err := amsilence.New(amsilence.Config{URL: am.URL})
	if err != nil {
		t.Fatal(err)
	}
	front := lateFrontFor(t, failingLookups(proxyTo(t, am.URL)), 1, silenceCreate)
	late, err := amsilence.New(amsilence.Config{URL: front.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: late, Timeout: clickTimeout, Metrics: slack.NewTriageMetrics(e.reg)})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:4h", ActionTS: "1700001310.000001"}, signingSecret, e.now(), nil)
	list, err := direct.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("silences %+v, %v: want the one Alertmanager made late", list, err)
	}
	r := e.h.srv.Responses()
	if len(r) != 1 || !strings.Contains(r[0].Text, "may have been done") || !strings.Contains(r[0].Text, "Check Alertmanager's silences") {
		t.Fatalf("answers %+v, want one saying the silence may exist and to check Alertmanager", r)
	}
	if got := e.actionCount(slack.ActionSilence, slack.OutcomeUnconfirmed); got != 1 {
		t.Fatalf("silence counted unconfirmed %v times, want 1", got)
	}
	if b := strings.Join(buttons(t, e.current(t)), " "); !strings.Contains(b, "alertrouter:silence") {
		t.Fatalf("buttons after the unconfirmed silence %q, want Silence still offered", b)
	}
}

// /alertrouter silence while Alertmanager answers after the command's
// timeout, and its silences cannot be read: the user hears that the
// silence may exist (the answer shared the spent deadline: none came).
func TestASilenceCommandAlertmanagerConfirmedTooLateIsSaid(t *testing.T) {
	am := amtest.Start(t, "route: {receiver: none}\nreceivers: [{name: none}]\n")
	front := lateFrontFor(t, failingLookups(proxyTo(t, am.URL)), 1, silenceCreate)
	late, err := amsilence.New(amsilence.Config{URL: front.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := newTriageEnv(t, alert.ActionPage, nil)
	j := journalOf(t, e.store,
		journal.Entry{Fingerprint: "aaa", Status: "firing", Receivers: []string{"triage"}, Incident: "inc/1", Labels: map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1"}, Decision: alert.Decision{Action: alert.ActionPage}},
	)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: late, Journal: j, Timeout: clickTimeout})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	a := e.commandAnswer(t, tr, "silence inc/1 2h", "late1", "U123")
	if !strings.Contains(a.Text, "may have been done") || !strings.Contains(a.Text, "Check Alertmanager's silences") {
		t.Fatalf("answer %+v, want that the silence may exist and to check Alertmanager", a)
	}
}
