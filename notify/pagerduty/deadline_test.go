package pagerduty_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// failures reads alertrouter_notification_failures_total by reason.
func (h *harness) failures(t *testing.T) map[string]float64 {
	t.Helper()
	return notifytest.Failures(t, h.reg, pagerduty.Integration)
}

// An attempt cut off by the webhook's deadline (before the entry's own
// timeout) ran out of time: it is counted reason="timeout" and said so,
// not a server error reported as "context deadline exceeded".
func TestAnAttemptCutOffByTheWebhooksDeadlineIsATimeout(t *testing.T) {
	h := newHarness(t, nil) // the entry's timeout: 10s
	h.srv.Fail(pdtest.Fault{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := h.n.Notify(ctx, opening("aaa"))
	if err == nil || !alert.Retryable(err) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want a retryable timeout", err)
	}
	if f := h.failures(t); f["timeout"] != 1 || f["server_error"] != 0 {
		t.Errorf("failures by reason %v, want one timeout", f)
	}
}
