package pagerduty_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/routing/alert"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

const incident = "llm-inference-gpu/chat/TTFT"

type harness struct {
	srv   *pdtest.Server
	reg   *prometheus.Registry
	n     *pagerduty.Notifier
	logs  *notifytest.SyncBuffer
	waits *notifytest.Waits
}

// sendOne notifies no and returns the one event PagerDuty took, failing
// t unless it took exactly one and refused none.
func (h *harness) sendOne(t *testing.T, no *alert.Notification) pdtest.Event {
	t.Helper()
	if err := h.n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	evs := h.srv.Events()
	if len(evs) != 1 || len(h.srv.Rejections()) != 0 {
		t.Fatalf("events %d, rejections %v: want one event, none refused", len(evs), h.srv.Rejections())
	}
	return evs[0]
}

func newHarness(t *testing.T, mutate func(*pagerduty.Config)) *harness {
	t.Helper()
	h := &harness{srv: pdtest.NewServer(), reg: prometheus.NewRegistry(), logs: &notifytest.SyncBuffer{}, waits: &notifytest.Waits{}}
	t.Cleanup(h.srv.Close)
	cfg := pagerduty.DefaultConfig()
	cfg.RoutingKey = pdtest.RoutingKey
	cfg.URL = h.srv.EnqueueURL()
	if mutate != nil {
		mutate(&cfg)
	}
	n, err := pagerduty.New(&cfg, "oncall", notify.Deps{
		Metrics: notify.NewMetrics(h.reg),
		Logger:  slog.New(slog.NewTextHandler(h.logs, nil)),
		Retry:   notify.RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Wait: h.waits.Wait},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.n = n
	return h
}

// outcomes returns the notifier's alertrouter_notifications_total by outcome.
func (h *harness) outcomes(t *testing.T) map[string]float64 {
	t.Helper()
	return notifytest.Outcomes(t, h.reg, pagerduty.Integration)
}

// firing returns a notification of firing alerts that does not open the
// incident: later members of an open incident.
func firing(fps ...string) *alert.Notification {
	var rs []*alert.Result
	for _, fp := range fps {
		rs = append(rs, notifytest.Result("TTFTHigh", fp, "firing", alert.ActionPage))
	}
	return notifytest.Notification("oncall", alert.KindFiring, alert.ActionPage, rs...)
}

// opening returns a notification of firing alerts that opens the incident,
// as the dispatch core hands it to exactly one sender.
func opening(fps ...string) *alert.Notification {
	n := firing(fps...)
	n.Opening = true
	return n
}

func resolved(incidentResolved bool, fps ...string) *alert.Notification {
	var rs []*alert.Result
	for _, fp := range fps {
		rs = append(rs, notifytest.Result("TTFTHigh", fp, "resolved", alert.ActionPage))
	}
	n := notifytest.Notification("oncall", alert.KindResolved, alert.ActionPage, rs...)
	n.IncidentResolved = incidentResolved
	return n
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update): %v", err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Fatalf("%s differs (run go test -update to accept):\n%s", path, pretty.String())
	}
}

func TestTriggerEventMatchesGolden(t *testing.T) {
	h := newHarness(t, func(c *pagerduty.Config) { c.CustomDetails = map[string]string{"team": "{{ .CommonLabels.job }}-team"} })
	no := opening("aaa", "bbb")
	no.AlertmanagerReceiver = "alertrouter" // Alertmanager's webhook receiver
	no.Results[0].Live = &alert.LiveSLO{Summary: "budget 37 % left · burn 1h 15.2× · 6h 7.1× · rising", Decided: true,
		Details: map[string]string{"summary": "budget 37 % left · burn 1h 15.2× · 6h 7.1× · rising", "budget_remaining": "0.37",
			"burn_1h": "15.2", "burn_6h": "7.1", "trend": "rising", "source": "sloth"}}
	if err := h.n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	evs := h.srv.Events()
	if len(evs) != 1 {
		t.Fatalf("events = %d, want 1", len(evs))
	}
	golden(t, "trigger.golden.json", evs[0].Raw)
}

func TestTriggerThenResolve(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	if err := h.n.Notify(ctx, opening("aaa")); err != nil {
		t.Fatal(err)
	}
	if err := h.n.Notify(ctx, resolved(true, "aaa")); err != nil {
		t.Fatal(err)
	}
	if h.srv.Triggers(incident) != 1 || h.srv.Resolves(incident) != 1 {
		t.Fatalf("triggers = %d, resolves = %d; want 1 and 1", h.srv.Triggers(incident), h.srv.Resolves(incident))
	}
	golden(t, "resolve.golden.json", h.srv.Events()[1].Raw)
	if got := h.outcomes(t); got[notify.OutcomeSuccess] != 2 || got[notify.OutcomeDeduplicated] != 0 {
		t.Fatalf("outcomes = %v, want 2 successes", got)
	}
}

func TestAlertsJoiningAndLeavingAnIncident(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	steps := []struct {
		name         string
		n            *alert.Notification
		wantTriggers int
		wantResolves int
	}{
		{"the first alert opens the incident and triggers", opening("aaa"), 1, 0},
		{"a second alert joining does not trigger again", firing("bbb"), 1, 0},
		{"a reminder triggers again (PagerDuty folds it into the open incident)", func() *alert.Notification { n := firing("aaa"); n.Kind = alert.KindReminder; return n }(), 2, 0},
		{"one alert leaving while another fires sends nothing", resolved(false, "aaa"), 2, 0},
		{"the last alert leaving resolves", resolved(true, "bbb"), 2, 1},
		{"the incident opening again triggers anew", opening("ccc"), 3, 1},
	}
	for _, s := range steps {
		if err := h.n.Notify(ctx, s.n); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got, gotR := h.srv.Triggers(incident), h.srv.Resolves(incident); got != s.wantTriggers || gotR != s.wantResolves {
			t.Fatalf("%s: triggers = %d, resolves = %d; want %d, %d", s.name, got, gotR, s.wantTriggers, s.wantResolves)
		}
	}
	if got := h.outcomes(t); got[notify.OutcomeSuccess] != 4 || got[notify.OutcomeDeduplicated] != 2 {
		t.Fatalf("outcomes = %v, want 4 successes and 2 deduplicated", got)
	}
}

// Only a notification that opens or closes the incident reaches PagerDuty;
// every other one is folded into the open incident and counted as
// deduplicated.
func TestNotificationsThatNeitherOpenNorCloseSendNothing(t *testing.T) {
	tests := []struct {
		name string
		n    func() *alert.Notification
	}{
		{"a firing alert joining an open incident", func() *alert.Notification { return firing("aaa") }},
		{"a resolve while the incident still fires", func() *alert.Notification { return resolved(false, "aaa") }},
		{"a resolve marked opening but not closing the incident", func() *alert.Notification {
			n := resolved(false, "aaa")
			n.Opening = true
			return n
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			if err := h.n.Notify(context.Background(), tt.n()); err != nil {
				t.Fatal(err)
			}
			if got := h.srv.Requests(); got != 0 {
				t.Fatalf("requests = %d, want 0", got)
			}
			if got := h.outcomes(t); got[notify.OutcomeDeduplicated] != 1 || got[notify.OutcomeSuccess] != 0 {
				t.Fatalf("outcomes = %v, want 1 deduplicated", got)
			}
		})
	}
}

// A reminder (alerts still firing after dedup.repeat_interval) triggers
// again with the incident's dedup_key, as Alertmanager re-sends at its
// repeat_interval: PagerDuty folds it into an open incident, and opens a new
// one if the old was resolved outside the router — which otherwise would
// never page again while the router's incident stays open.
func TestAReminderTriggersAgain(t *testing.T) {
	h := newHarness(t, nil)
	if err := h.n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	reminder := firing("aaa")
	reminder.Kind = alert.KindReminder
	if err := h.n.Notify(context.Background(), reminder); err != nil {
		t.Fatal(err)
	}
	evs := h.srv.Events()
	if len(evs) != 2 || evs[1].EventAction != "trigger" || evs[1].DedupKey != evs[0].DedupKey {
		t.Fatalf("events = %+v, want the opening's trigger and a second trigger with its dedup_key", evs)
	}
}

// The notifier keeps no state: the incident a replica opened is resolved by
// whichever replica the dispatch core elects to close it.
func TestAnotherReplicaResolvesTheIncident(t *testing.T) {
	h := newHarness(t, nil)
	cfg := pagerduty.DefaultConfig()
	cfg.RoutingKey = pdtest.RoutingKey
	cfg.URL = h.srv.EnqueueURL()
	other, err := pagerduty.New(&cfg, "oncall", notify.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	if err := other.Notify(context.Background(), resolved(true, "aaa")); err != nil {
		t.Fatal(err)
	}
	if h.srv.Triggers(incident) != 1 || h.srv.Resolves(incident) != 1 {
		t.Fatalf("triggers = %d, resolves = %d; want 1 and 1", h.srv.Triggers(incident), h.srv.Resolves(incident))
	}
}

// A storm of 200 concurrent notifications of one incident, of which the
// dispatch core lets only the first open it, sends one trigger.
func TestStormOf200NotificationsWithOneOpenerTriggersOnce(t *testing.T) {
	h := newHarness(t, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		no := firing(strings.Repeat("f", 1+i%7) + string(rune('a'+i%26)))
		no.Opening = i == 0
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- h.n.Notify(context.Background(), no)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := h.srv.Triggers(incident); got != 1 {
		t.Fatalf("triggers = %d, want 1", got)
	}
	if got := h.srv.Requests(); got != 1 {
		t.Fatalf("requests = %d, want 1", got)
	}
	if got := h.outcomes(t); got[notify.OutcomeSuccess] != 1 || got[notify.OutcomeDeduplicated] != 199 {
		t.Fatalf("outcomes = %v, want 1 success and 199 deduplicated", got)
	}
}

func TestFailuresAndRetries(t *testing.T) {
	tests := []struct {
		name         string
		faults       []pdtest.Fault
		wantRequests int
		wantWaitMin  time.Duration
	}{
		{"a 429 is retried after its Retry-After", []pdtest.Fault{{Status: 429, RetryAfter: "3"}}, 2, 3 * time.Second},
		{"three 500s are retried until success", []pdtest.Fault{{Status: 500}, {Status: 500}, {Status: 500}}, 4, 0},
		{"a 503 is retried", []pdtest.Fault{{Status: 503}}, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.srv.Fail(tt.faults...)
			if err := h.n.Notify(context.Background(), opening("aaa")); err != nil {
				t.Fatal(err)
			}
			if h.srv.Requests() != tt.wantRequests || h.srv.Triggers(incident) != 1 {
				t.Fatalf("requests = %d, triggers = %d; want %d, 1", h.srv.Requests(), h.srv.Triggers(incident), tt.wantRequests)
			}
			for _, w := range h.waits.All() {
				if w < tt.wantWaitMin {
					t.Fatalf("waited %v, want at least %v", w, tt.wantWaitMin)
				}
			}
		})
	}
}

// A trigger that fails on every attempt is retryable, and its retry (the
// dispatch core hands the opening out again) triggers.
func TestFailedTriggerIsRetryableAndItsRetryTriggers(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.FailN(5, pdtest.Fault{Status: 500})
	err := h.n.Notify(context.Background(), opening("aaa"))
	if err == nil || !alert.Retryable(err) {
		t.Fatalf("err = %v, want a retryable error", err)
	}
	if h.srv.Requests() != 5 || h.srv.Triggers(incident) != 0 {
		t.Fatalf("requests = %d, triggers = %d; want 5 failed attempts", h.srv.Requests(), h.srv.Triggers(incident))
	}
	if err := h.n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	if h.srv.Triggers(incident) != 1 {
		t.Fatalf("triggers = %d, want 1", h.srv.Triggers(incident))
	}
	if got := h.outcomes(t); got[notify.OutcomeFailure] != 1 || got[notify.OutcomeSuccess] != 1 {
		t.Fatalf("outcomes = %v, want 1 failure and 1 success", got)
	}
}

func TestBadRequestIsRetriedOnceAsAMinimalEvent(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Fail(pdtest.Fault{Status: 400})
	if err := h.n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	evs := h.srv.Events()
	if len(evs) != 1 {
		t.Fatalf("events = %d, want 1", len(evs))
	}
	golden(t, "minimal.golden.json", evs[0].Raw)
	if !strings.Contains(h.logs.String(), "programmed fault") {
		t.Fatalf("PagerDuty's error text was not logged: %s", h.logs.String())
	}
}

// A 413 (an event too large for PagerDuty, or for a proxy before it) is a
// refused event like a 400: the minimal event goes out once. Before, it was
// a permanent failure and every retry of Alertmanager met it: the page was
// lost.
func TestTooLargeIsRetriedOnceAsAMinimalEvent(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Fail(pdtest.Fault{Status: 413})
	if err := h.n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	if evs := h.srv.Events(); len(evs) != 1 || evs[0].EventAction != "trigger" {
		t.Fatalf("events = %+v, want the minimal trigger", evs)
	}
}

// PagerDuty's 202 whose body cannot be read (empty, not JSON, cut off): the
// event was accepted, so it is delivered — not a permanent failure that
// Alertmanager's retry would page a second time for.
func TestAnAcceptedEventWithAnUnreadableAnswerIsDelivered(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Fail(pdtest.Fault{Unreadable: true})
	if err := h.n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatalf("Notify: %v, want delivered", err)
	}
	if n := h.srv.Requests(); n != 1 || len(h.srv.Events()) != 1 {
		t.Fatalf("requests %d events %d, want the one accepted event and no retry", n, len(h.srv.Events()))
	}
}

// Only http(s) links reach PagerDuty: a runbook annotation, a generator
// URL or the webhook's externalURL with another scheme (javascript:, data:)
// is left out rather than made clickable there.
func TestOnlyWebLinksAreSent(t *testing.T) {
	h := newHarness(t, nil)
	no := opening("aaa")
	a := no.Results[0].Alert
	a.Annotations["runbook_url"] = "javascript:alert(document.domain)//"
	a.Annotations["dashboard_url"] = "JaVaScRiPt:alert(3)"
	a.GeneratorURL = "data:text/html,<script>alert(1)</script>"
	no.Data.ExternalURL = "vbscript:msgbox(7)"
	if err := h.n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	raw := string(h.srv.Events()[0].Raw)
	for _, bad := range []string{"javascript:", "JaVaScRiPt:", "data:text", "vbscript:"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the event carries a %s link: %s", bad, raw)
		}
	}
}

// A resolve has no smaller form: its 400 is permanent, sent once.
func TestRejectedResolveIsPermanent(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Fail(pdtest.Fault{Status: 400})
	err := h.n.Notify(context.Background(), resolved(true, "aaa"))
	if err == nil || alert.Retryable(err) {
		t.Fatalf("err = %v, want a permanent error", err)
	}
	if h.srv.Requests() != 1 {
		t.Fatalf("requests = %d, want 1", h.srv.Requests())
	}
}

func TestInvalidRoutingKeyIsPermanentAndNeverLogged(t *testing.T) {
	const badKey = "short-secret-key"
	h := newHarness(t, func(c *pagerduty.Config) { c.RoutingKey = badKey })
	err := h.n.Notify(context.Background(), opening("aaa"))
	if err == nil || alert.Retryable(err) {
		t.Fatalf("err = %v, want a permanent error", err)
	}
	if h.srv.Requests() != 2 {
		t.Fatalf("requests = %d, want 2 (the event and its minimal retry)", h.srv.Requests())
	}
	if !strings.Contains(err.Error(), "routing_key") || !strings.Contains(h.logs.String(), "Length of 'routing_key'") {
		t.Fatalf("PagerDuty's reason is missing: err = %v, logs = %s", err, h.logs.String())
	}
	if strings.Contains(h.logs.String(), badKey) || strings.Contains(err.Error(), badKey) {
		t.Fatal("the routing key leaked into the logs or the error")
	}
}

// A 408 (PagerDuty, or a proxy before it, timed out reading the event) is
// transient like a 5xx: retried, and failing retryably if it lasts. Taken as
// permanent, the page was dead-lettered and the webhook answered 502, so
// Alertmanager never sent it again: on-call was not paged.
func TestRequestTimeoutStatusIsRetryable(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.FailN(5, pdtest.Fault{Status: 408})
	err := h.n.Notify(context.Background(), opening("aaa"))
	if err == nil || !alert.Retryable(err) {
		t.Fatalf("err = %v, want a retryable error", err)
	}
	if h.srv.Requests() != 5 {
		t.Fatalf("requests = %d, want 5 (every attempt)", h.srv.Requests())
	}
}

func TestTimeoutIsRetryable(t *testing.T) {
	h := newHarness(t, func(c *pagerduty.Config) { c.Timeout = model.Duration(50 * time.Millisecond) })
	h.srv.FailN(5, pdtest.Fault{Hang: true})
	err := h.n.Notify(context.Background(), opening("aaa"))
	if err == nil || !alert.Retryable(err) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want a retryable timeout", err)
	}
}

// tierSeverity templates the severity from the alerts' tier label, as
// Alertmanager's common `{{ .CommonLabels.severity }}` does.
func tierSeverity(c *pagerduty.Config) { c.Severity = "{{ .CommonLabels.tier }}" }

// tiered is the opening notification of a decision act whose alerts share
// tier.
func tiered(act alert.Action, tier string) func() *alert.Notification {
	return func() *alert.Notification {
		n := notifytest.Notification("oncall", alert.KindFiring, act, notifytest.Result("TTFTHigh", "aaa", "firing", act))
		n.Data.CommonLabels["tier"] = tier
		n.Opening = true
		return n
	}
}

// severityIs checks the event's severity.
func severityIs(want string) func(*testing.T, pdtest.Event) {
	return func(t *testing.T, e pdtest.Event) {
		if e.Payload.Severity != want {
			t.Fatalf("severity = %q, want %q", e.Payload.Severity, want)
		}
	}
}

func TestEventContent(t *testing.T) {
	long := strings.Repeat("x", 300)
	huge := strings.Repeat("é", 20000)
	tests := []struct {
		name   string
		mutate func(*pagerduty.Config)
		n      func() *alert.Notification
		check  func(t *testing.T, e pdtest.Event)
	}{
		{
			name:   "a summary template that fails falls back to the built-in summary",
			mutate: func(c *pagerduty.Config) { c.Summary = "{{ .Nope.Deeper }}" },
			n:      func() *alert.Notification { return opening("aaa") },
			check: func(t *testing.T, e pdtest.Event) {
				if e.Payload.Summary != "TTFTHigh (llm-inference-gpu TTFT): TTFT p99 is 2.4s (SLO 1s)" {
					t.Fatalf("summary = %q", e.Payload.Summary)
				}
			},
		},
		{
			name: "the incident's console page is linked when the router has an external URL",
			n: func() *alert.Notification {
				n := opening("aaa")
				n.ConsoleURL = "https://alertrouter.example.com/incidents/llm-inference-gpu%2Fchat%2FTTFT"
				return n
			},
			check: func(t *testing.T, e pdtest.Event) {
				if !strings.Contains(string(e.Raw), `"href":"https://alertrouter.example.com/incidents/llm-inference-gpu%2Fchat%2FTTFT","text":"alertrouter console"`) {
					t.Fatalf("links lack the console page: %s", e.Raw)
				}
			},
		},
		{
			name:   "an invalid templated severity falls back to the decision's",
			mutate: func(c *pagerduty.Config) { c.Severity = "urgent" },
			n:      func() *alert.Notification { return opening("aaa") },
			check: func(t *testing.T, e pdtest.Event) {
				if e.Payload.Severity != "critical" {
					t.Fatalf("severity = %q", e.Payload.Severity)
				}
			},
		},
		// Alertmanager's common PagerDuty snippet templates severity from
		// the alerts' label: a page the router decided over a warning
		// label (a burn rate, a capacity over its threshold) went out as
		// warning, low urgency — no page where the service's urgency
		// follows severity. The template chooses within the decision's
		// urgency only.
		{
			name:   "a templated severity never makes a page low urgency",
			mutate: tierSeverity,
			n:      tiered(alert.ActionPage, "warning"),
			check:  severityIs("critical"), // the page's
		},
		{
			name:   "a templated severity chooses within a page's urgency",
			mutate: tierSeverity,
			n:      tiered(alert.ActionPage, "error"),
			check:  severityIs("error"), // the template's
		},
		{
			name:   "a constant severity is the receiver's choice, kept",
			mutate: func(c *pagerduty.Config) { c.Severity = "info" },
			n:      func() *alert.Notification { return opening("aaa") },
			check:  severityIs("info"),
		},
		{
			name:   "a templated severity never makes a ticket high urgency",
			mutate: tierSeverity,
			n:      tiered(alert.ActionTicket, "critical"),
			check:  severityIs("warning"), // the ticket's
		},
		{
			name: "a ticket is sent with severity warning",
			n: func() *alert.Notification {
				n := notifytest.Notification("oncall", alert.KindFiring, alert.ActionTicket, notifytest.Result("TTFTHigh", "aaa", "firing", alert.ActionTicket))
				n.Opening = true
				return n
			},
			check: func(t *testing.T, e pdtest.Event) {
				if e.Payload.Severity != "warning" {
					t.Fatalf("severity = %q", e.Payload.Severity)
				}
			},
		},
		{
			name:   "a long summary is cut to 1024 characters with an ellipsis",
			mutate: func(c *pagerduty.Config) { c.Summary = strings.Repeat("s", 2000) },
			n:      func() *alert.Notification { return opening("aaa") },
			check: func(t *testing.T, e pdtest.Event) {
				if n := len([]rune(e.Payload.Summary)); n != 1024 || !strings.HasSuffix(e.Payload.Summary, "…") {
					t.Fatalf("summary has %d runes", n)
				}
			},
		},
		{
			name: "a long incident key is hashed into a dedup_key of at most 255",
			n: func() *alert.Notification {
				n := opening("aaa")
				n.Incident = long
				return n
			},
			check: func(t *testing.T, e pdtest.Event) {
				if len(e.DedupKey) > 255 || e.DedupKey != pagerduty.DedupKey(long) || e.DedupKey == pagerduty.DedupKey(long+"y") {
					t.Fatalf("dedup_key = %q", e.DedupKey)
				}
			},
		},
		{
			name: "an event over 512 KB is shrunk, not dropped",
			n: func() *alert.Notification {
				var rs []*alert.Result
				for i := range 20 {
					r := notifytest.Result("TTFTHigh", string(rune('a'+i)), "firing", alert.ActionPage)
					for j := range 30 {
						r.Alert.Labels[string(rune('A'+j))] = huge
					}
					rs = append(rs, r)
				}
				n := notifytest.Notification("oncall", alert.KindFiring, alert.ActionPage, rs...)
				n.Opening = true
				return n
			},
			check: func(t *testing.T, e pdtest.Event) {
				if len(e.Raw) > pdtest.MaxBody || e.Payload.Severity != "critical" {
					t.Fatalf("event of %d bytes", len(e.Raw))
				}
				if bytes.Contains(e.Payload.CustomDetails, []byte(`"alerts":`)) {
					t.Fatal("per-alert details were kept")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.mutate)
			if err := h.n.Notify(context.Background(), tt.n()); err != nil {
				t.Fatal(err)
			}
			evs := h.srv.Events()
			if len(evs) != 1 {
				t.Fatalf("events = %d (rejections %v)", len(evs), h.srv.Rejections())
			}
			tt.check(t, evs[0])
		})
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string
	}{
		{"defaults are filled", "routing_key: k", ""},
		{"a routing key is required", "url: https://events.pagerduty.com/v2/enqueue", "routing_key: one of routing_key or routing_key_file is required"},
		{"key and key file exclude each other", "routing_key: k\nrouting_key_file: /f", "routing_key: at most one"},
		{"the url must be the enqueue URL", "routing_key: k\nurl: https://events.pagerduty.com/", "url: \"https://events.pagerduty.com/\" must end in /v2/enqueue"},
		{"the timeout must be positive", "routing_key: k\ntimeout: 0s", "timeout: must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c pagerduty.Config
			if err := yaml.UnmarshalStrict([]byte(tt.yaml), &c); err != nil {
				t.Fatal(err)
			}
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil || c.URL != pagerduty.DefaultURL || c.Timeout != model.Duration(10*time.Second) {
					t.Fatalf("err = %v, config = %+v", err, c)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestRoutingKeyNeverPrints(t *testing.T) {
	c := pagerduty.DefaultConfig()
	c.RoutingKey = "super-secret-routing-key"
	b, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "super-secret") {
		t.Fatalf("the routing key printed: %s", b)
	}
}

func TestRoutingKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte(pdtest.RoutingKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *pagerduty.Config) { c.RoutingKey = ""; c.RoutingKeyFile = path })
	if err := h.n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	if evs := h.srv.Events(); len(evs) != 1 || evs[0].RoutingKey != pdtest.RoutingKey {
		t.Fatalf("events = %+v", evs)
	}
}

func BenchmarkTrigger(b *testing.B) {
	srv := pdtest.NewServer()
	defer srv.Close()
	cfg := pagerduty.DefaultConfig()
	cfg.RoutingKey = pdtest.RoutingKey
	cfg.URL = srv.EnqueueURL()
	n, err := pagerduty.New(&cfg, "oncall", notify.Deps{})
	if err != nil {
		b.Fatal(err)
	}
	no := opening("aaa", "bbb")
	res := resolved(true, "aaa", "bbb")
	b.ReportAllocs()
	for b.Loop() {
		if err := n.Notify(context.Background(), no); err != nil {
			b.Fatal(err)
		}
		if err := n.Notify(context.Background(), res); err != nil {
			b.Fatal(err)
		}
	}
}

// An alert's bidirectional controls (U+202E) in PagerDuty's summary —
// what a phone shows of the page — reversed the words around them (an
// audit): they are shown as "[U+202E]".
func TestBidiControlsInTheSummaryAreShown(t *testing.T) {
	h := newHarness(t, nil)
	no := opening("aaa")
	no.Data.CommonLabels["alertname"] = "DiskFull \u202eetirw-on enon :noitca"
	if err := h.n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	evs := h.srv.Events()
	if len(evs) != 1 {
		t.Fatalf("events = %d, want 1", len(evs))
	}
	if s := evs[0].Payload.Summary; strings.ContainsRune(s, '\u202e') || !strings.Contains(s, "[U+202E]") {
		t.Fatalf("summary %q, want its U+202E shown as [U+202E]", s)
	}
}
