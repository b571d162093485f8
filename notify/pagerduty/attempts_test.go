package pagerduty_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// The minimal event sent after PagerDuty refused the full one is an
// attempt of its own: the delivery (and a dead letter) says as many
// attempts as PagerDuty received requests. Before, a trigger refused twice
// was dead-lettered as "1 attempt" after 2 requests.
func TestTheMinimalResendCountsAsAnAttempt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults []pdtest.Fault
		want   int // attempts: the requests PagerDuty received
	}{
		{name: "the full event refused, the minimal one accepted", faults: []pdtest.Fault{{Status: 400}}, want: 2},
		{name: "both refused", faults: []pdtest.Fault{{Status: 400}, {Status: 400}}, want: 2},
		{name: "the full event accepted", want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.srv.Fail(tc.faults...)
			var retries atomic.Int64
			_ = h.n.Notify(alert.CountAttempts(context.Background(), &retries), opening("aaa"))
			if got, requests := 1+int(retries.Load()), h.srv.Requests(); got != tc.want || requests != tc.want {
				t.Fatalf("counted %d attempts for %d requests, want %d", got, requests, tc.want)
			}
		})
	}
}
