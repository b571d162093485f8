package notify_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
)

// A request that got no answer and did not time out — PagerDuty or Slack
// unreachable: the connection refused — is counted no_answer. Before, it
// read server_error, and the dashboard said PagerDuty answered 5xx while it
// was unreachable from the pod. Timeouts stay timeouts.
func TestARefusedConnectionIsNoAnswerNotAServerError(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := notify.NewMetrics(reg).Integration("oncall", "pagerduty")
	ctx := context.Background()
	refused := fmt.Errorf("dial tcp 127.0.0.1:1: %w", syscall.ECONNREFUSED)
	if err := m.NoAnswer(ctx, ctx, time.Now(), time.Minute, "send event", refused); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("NoAnswer = %v, want the cause wrapped", err)
	}
	timedOut, cancel := context.WithTimeout(ctx, 0)
	defer cancel()
	_ = m.NoAnswer(ctx, timedOut, time.Now(), time.Minute, "send event", context.DeadlineExceeded)
	f := notifytest.Failures(t, reg, "pagerduty")
	if f[notify.ReasonNoAnswer] != 1 || f[notify.ReasonServerError] != 0 || f[notify.ReasonTimeout] != 1 {
		t.Errorf("failures by reason = %v, want no_answer 1, timeout 1, server_error 0", f)
	}
}
