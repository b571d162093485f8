package routing_test

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// During a PagerDuty outage every notification failed and each failure
// logged a line: 520 lines (282 KB) a second at 50 webhooks/s, a kubelet
// log file rotated in half a minute (an audit). A failure of one
// integration and cause is logged once per interval, the next line saying
// how many were left out; another integration's, or another cause, is
// logged at once. Every failure is still answered 5xx and counted in
// the webhook's summary (the journal's, the console's).
func TestDeliveryFailuresAreLoggedOncePerIntegrationAndCause(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	var logs notifytest.SyncBuffer
	p.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	outage := errors.New("send trigger event: HTTP 500: Internal Server Error")
	e.pd.setFail(func(*alert.Notification) error { return outage })
	for i := range 20 {
		sum, err := process(t, p, tAlert(fmt.Sprintf("Down%d", i), "firing", "page", "service", fmt.Sprintf("svc%d", i)))
		if err == nil || sum == nil || sum.Failed == 0 {
			t.Fatalf("webhook %d while PagerDuty failed: %+v, %v; want the failure counted and answered", i, sum, err)
		}
	}
	lines := func(receiver string) int {
		return strings.Count(logs.String(), `msg="notification failed; claim released so Alertmanager's retry sends it" receiver=`+receiver+" ")
	}
	if n := lines("pagerduty"); n != 1 {
		t.Errorf("20 failures of one integration and cause logged %d lines, want 1:\n%s", n, logs.String())
	}
	// Another cause of the same integration is logged at once.
	e.pd.setFail(func(*alert.Notification) error {
		return errors.New("send trigger event: HTTP 400: invalid routing key")
	})
	if _, err := process(t, p, tAlert("BadKey", "firing", "page", "service", "other")); err == nil {
		t.Fatal("answered success while PagerDuty refused")
	}
	if n := lines("pagerduty"); n != 2 || !strings.Contains(logs.String(), "HTTP 400") {
		t.Errorf("a new cause logged %d lines in all, want 2 naming it:\n%s", n, logs.String())
	}
}

// A new alert joining an incident whose trigger is still being sent waits
// for it, then is answered 5xx: it was logged as an error, "notification
// failed … by another sender", which made most of a PagerDuty outage's
// error lines on a single replica and pointed on-call at a second replica
// (an audit). It is a warning saying it waited, and no delivery failure.
func TestAJoinWaitingForItsIncidentsSendIsNotLoggedAsAFailure(t *testing.T) {
	e := newEnv(t)
	a, b := e.pipeline(), e.pipeline()
	var logs notifytest.SyncBuffer
	b.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	release, done := pagerDutyHeld(t, e, a, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	sum, err := process(t, b, tAlert("TTFTHigh", "firing", "page", "instance", "b"))
	release <- nil
	if err := <-done; err != nil {
		t.Fatalf("the first alert's trigger: %v", err)
	}
	if !isRetryable(err) {
		t.Fatalf("a join during its incident's trigger: %v (summary %+v), want a retryable error", err, sum)
	}
	out := logs.String()
	if strings.Contains(out, "notification failed") || strings.Contains(out, "level=ERROR") {
		t.Errorf("waiting for the incident's send logged a failure:\n%s", out)
	}
	if !strings.Contains(out, `level=WARN msg="notification waits for its incident's send in progress (this replica's or another's)`) ||
		!strings.Contains(out, "receiver=pagerduty") || !strings.Contains(out, "integration=pagerduty/0") {
		t.Errorf("the wait is not logged as a warning naming receiver and integration:\n%s", out)
	}
}

// Resolves after the store lost its state (or of alerts no marker says
// were notified) logged a line an alert, again on every retry: 600 lines
// for one 100-alert resolve retried five times while PagerDuty failed (an
// audit). One line names how many and the first few; a retry within the
// interval adds none.
func TestResolvesTheStoreLostAreLoggedOnceAWebhook(t *testing.T) {
	e := newEnv(t)
	var alerts, resolved []webhooktest.Alert
	for i := range 20 {
		alerts = append(alerts, tAlert("TTFTHigh", "firing", "page", "instance", fmt.Sprintf("i%02d", i)))
		resolved = append(resolved, tAlert("TTFTHigh", "resolved", "page", "instance", fmt.Sprintf("i%02d", i)))
	}
	mustProcess(t, e.pipeline(), alerts...)
	other := tAlert("ErrorBudgetBurn", "firing", "page", "service", "checkout")
	mustProcess(t, e.pipeline(), other)
	e.clock.Advance(10 * time.Minute)
	e.store = store.NewMemory(store.WithClock(e.clock.Now)) // restarted empty
	p := e.pipeline()
	var logs notifytest.SyncBuffer
	p.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	e.pd.setFail(func(*alert.Notification) error {
		return errors.New("send resolve event: HTTP 500: Internal Server Error")
	})
	for range 3 {
		if _, err := process(t, p, resolved...); err == nil {
			t.Fatal("answered success while PagerDuty failed")
		}
	}
	out := logs.String()
	if n := strings.Count(out, "which started before the store's state began"); n != 1 {
		t.Errorf("20 resolves the store lost, sent three times: %d lines, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "alerts=20 ") || !strings.Contains(out, `receivers="[pagerduty`) || strings.Count(out, `fingerprints="[`) != 1 {
		t.Errorf("the line does not say how many alerts, their receivers and fingerprints:\n%s", out)
	}
	e.pd.setFail(nil)
	mustProcess(t, p, resolved...)
	if ns := e.pd.notifications(); len(ns) != 3 || !ns[2].IncidentResolved {
		t.Errorf("after PagerDuty recovered: %d notifications, want the two triggers and the incident's resolve", len(ns))
	}
	// Another group's resolves within the interval are logged at once (a
	// review: keyed by kind alone, their line was left out).
	other.Status = "resolved"
	mustProcess(t, p, other)
	if n := strings.Count(logs.String(), "which started before the store's state began"); n != 2 {
		t.Errorf("another group's lost resolves: %d lines in all, want 2:\n%s", n, logs.String())
	}
}

// The store logged its recovery, PagerDuty and Slack nothing: with their
// failures logged once per 30 s, a quiet log proved nothing (an audit).
// A delivery 30 s after the integration's last failure says it delivers
// again, how many failed and since when; a delivery beside failures that
// go on — PagerDuty refusing one incident's events — says nothing (a
// review: every other incident's page was logged as a recovery).
func TestAnIntegrationDeliveringAgainIsLogged(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	var logs notifytest.SyncBuffer
	p.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	e.pd.setFail(func(n *alert.Notification) error {
		if strings.Contains(n.Incident, "svcbad") {
			return alert.Permanent(errors.New("send trigger event: PagerDuty rejected the event (400): Invalid event"))
		}
		return nil
	})
	for i := range 5 {
		if _, err := process(t, p, tAlert("Down", "firing", "page", "service", "svcbad", "instance", fmt.Sprint(i))); err == nil {
			t.Fatal("answered success while PagerDuty refused")
		}
		mustProcess(t, p, tAlert("Down", "firing", "page", "service", fmt.Sprintf("svc%d", i)))
		e.clock.Advance(10 * time.Second)
	}
	if strings.Contains(logs.String(), "delivers again") {
		t.Fatalf("deliveries beside failures that go on logged a recovery:\n%s", logs.String())
	}
	e.pd.setFail(nil)
	e.clock.Advance(25 * time.Second) // 35 s after the last failure
	mustProcess(t, p, tAlert("Down", "firing", "page", "service", "svcok"))
	mustProcess(t, p, tAlert("Down", "firing", "page", "service", "svcok2"))
	out := logs.String()
	if n := strings.Count(out, `msg="integration delivers again" receiver=pagerduty integration=pagerduty/0 failed_notifications=5 failing_since=`); n != 1 {
		t.Errorf("PagerDuty delivering 35 s after its last failure: %d lines saying so, want 1:\n%s", n, out)
	}
	if strings.Contains(out, "integration=slack/0 failed_notifications") {
		t.Errorf("Slack, which never failed, logged a recovery:\n%s", out)
	}
}

// A PagerDuty outage ends with its open incidents triggered at once, then
// updates PagerDuty folds: no delivery came 30 s after the last failure,
// and the recovery was never logged (an audit re-run). A delivery sooner
// checks again once the 30 s have passed, and logs the recovery if no
// failure came meanwhile.
func TestARecoveryIsLoggedWhenNoDeliveryComesLater(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	routing.SetRecoveryCheck(p, 20*time.Millisecond)
	var logs notifytest.SyncBuffer
	p.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	e.pd.setFail(func(*alert.Notification) error {
		return errors.New("send trigger event: HTTP 500: Internal Server Error")
	})
	if _, err := process(t, p, tAlert("Down", "firing", "page", "service", "svc1")); err == nil {
		t.Fatal("answered success while PagerDuty failed")
	}
	e.pd.setFail(nil)
	e.clock.Advance(time.Second)
	mustProcess(t, p, tAlert("Down", "firing", "page", "service", "svc1")) // Alertmanager's retry: delivered
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), `msg="integration delivers again" receiver=pagerduty integration=pagerduty/0 failed_notifications=1`) {
		if time.Now().After(deadline) {
			t.Fatalf("no recovery logged after the check's wait:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
