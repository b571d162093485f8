package pagerduty_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
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

// A person's Acknowledge on a throttled routing key waits its turn (up to
// half of its time) where a webhook's event would not: nothing retries a
// click that failed (a review: one failed at once behind a storm's events).
func TestAClickOnAThrottledRoutingKeyWaitsItsTurn(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Fail(pdtest.Fault{Status: 429})
	if err := h.n.Notify(context.Background(), opening("first")); err != nil {
		t.Fatalf("the throttled event's retry: %v", err)
	}
	var wg sync.WaitGroup
	for i := range 6 { // the turns of the next 3 seconds
		wg.Go(func() {
			n := opening("fp")
			n.Incident = "storm-" + string(rune('a'+i))
			_ = h.n.Notify(context.Background(), n)
		})
	}
	time.Sleep(100 * time.Millisecond) // the storm took its turns
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.n.Acknowledge(ctx, incident); err != nil {
		t.Fatalf("Acknowledge behind the storm's turns: %v; want it sent in its turn", err)
	}
	wg.Wait()
	if got := h.srv.Count("acknowledge", pagerduty.DedupKey(incident)); got != 1 {
		t.Errorf("PagerDuty got %d acknowledges, want 1", got)
	}
}
