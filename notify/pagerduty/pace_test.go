package pagerduty_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// PagerDuty throttles a routing key (429: about 120 events a minute, no
// Retry-After); every event retried on its own backoff, a storm sent
// hundreds of requests a second to the throttled key (an audit: 12,728
// refused triggers for 300 pages). Once the key has been throttled, its
// events are paced, one per half second: of ten at once, the few whose turn
// comes within the wait go out one after the other, the others are not
// sent and fail retryable (Alertmanager's retry sends them later).
func TestEventsToAThrottledRoutingKeyArePaced(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Fail(pdtest.Fault{Status: 429})
	if err := h.n.Notify(context.Background(), opening("first")); err != nil {
		t.Fatalf("the throttled event's retry: %v", err)
	}
	before := h.srv.Requests()
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
			defer cancel()
			n := opening("fp")
			n.Incident = "incident-" + string(rune('a'+i))
			errs[i] = h.n.Notify(ctx, n)
		})
	}
	wg.Wait()
	sent, paced := h.srv.Requests()-before, 0
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !alert.Retryable(err) || !strings.Contains(err.Error(), "paced") {
			t.Fatalf("a paced event failed with %v, want a retryable failure saying it was paced", err)
		}
		paced++
	}
	if sent+paced != len(errs) || sent > 6 || paced == 0 {
		t.Errorf("after the key's 429: %d of %d events sent, %d not sent (paced); want at most 6 sent, the others paced", sent, len(errs), paced)
	}
}
