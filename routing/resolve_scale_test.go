package routing_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
)

// resolveAllocsPerAlert fires n paging alerts of n services (n incidents,
// each paged at PagerDuty and Slack) in one webhook, then resolves them in
// another, and returns the resolve webhook's allocations per alert.
func resolveAllocsPerAlert(t *testing.T, n int) float64 {
	t.Helper()
	e := newEnv(t)
	e.routes = pagesToBothRoutes
	p := e.pipeline()
	firing := make([]webhooktest.Alert, n)
	resolved := make([]webhooktest.Alert, n)
	for i := range n {
		svc := fmt.Sprintf("svc-%05d", i)
		firing[i] = tAlert("TTFTHigh", "firing", "page", "service", svc)
		resolved[i] = tAlert("TTFTHigh", "resolved", "page", "service", svc)
	}
	if sum := mustProcess(t, p, firing...); sum.Notified != 2*n {
		t.Fatalf("firing %d incidents: %+v, want %d notified", n, sum, 2*n)
	}
	msg := payload(t, resolved...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sum, err := p.Process(t.Context(), msg)
	runtime.ReadMemStats(&after)
	if err != nil || sum.Notified != 2*n {
		t.Fatalf("resolving %d incidents: %+v, %v; want %d notified", n, sum, err, 2*n)
	}
	return float64(after.Mallocs-before.Mallocs) / float64(n)
}

// A resolve webhook spanning many incidents costs the same per alert at
// any size: each resolve drawn as a page looked through every batch of
// the webhook for its incident's PagerDuty, so a resolve of 11,000
// incidents outlasted the webhook's time and sent nothing (an audit).
// Allocations are counted, not time: four times the incidents must not
// cost more than about as much per alert.
func TestAResolveOfManyIncidentsCostsTheSamePerAlert(t *testing.T) {
	small := resolveAllocsPerAlert(t, 250)
	large := resolveAllocsPerAlert(t, 1000)
	if large > 1.5*small {
		t.Fatalf("resolve allocations per alert: %.0f at 250 incidents, %.0f at 1,000 (%.2f×): grows with the webhook's incidents", small, large, large/small)
	}
	t.Logf("resolve allocations per alert: %.0f at 250 incidents, %.0f at 1,000", small, large)
}
