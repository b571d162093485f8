package routing_test

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
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
