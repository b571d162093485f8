package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/webhooktest"
)

// A shutdown (SIGTERM, a rolling deploy) while a webhook's page is on its
// way to a slow PagerDuty waits for it: the webhook is answered 200 after
// the event is taken, and serve exits 0 — never a connection reset, which
// Alertmanager would retry against a replica that may see the page as new.
func TestShutdownDrainsAWebhookWhosePageIsOnItsWay(t *testing.T) {
	pd := pdtest.NewServer()
	t.Cleanup(pd.Close)
	pd.Fail(pdtest.Fault{Delay: 2 * time.Second})
	payload := webhooktest.ReadFixture(t, "firing.json")
	p := writeFile(t, "router.yml", "route: {receiver: pd}\nreceivers: [{name: pd, pagerduty_configs: [{routing_key: "+pdtest.RoutingKey+", url: '"+pd.EnqueueURL()+"'}]}]\n")
	base, _, errb, stop := runRouter(t, p)
	defer stop()
	type answer struct {
		status int
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.Post(base+"/webhook", "application/json", bytes.NewReader(payload))
		if err != nil {
			answered <- answer{err: err}
			return
		}
		resp.Body.Close()
		answered <- answer{status: resp.StatusCode}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for pd.Requests() == 0 { // the event is at PagerDuty, held there
		if time.Now().After(deadline) {
			t.Fatal("the page never reached PagerDuty")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }() // shut down (as SIGTERM does) while it is held
	select {
	case a := <-answered:
		if a.err != nil || a.status != http.StatusOK {
			t.Fatalf("webhook in flight at shutdown: status %d, err %v; want 200 once PagerDuty took the page\n%s", a.status, a.err, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the webhook in flight at shutdown was never answered")
	}
	if n := len(pd.Events()); n == 0 {
		t.Fatal("PagerDuty took no event")
	}
	select {
	case <-stopped:
		if !strings.Contains(errb.String(), "exit_code=0") {
			t.Fatalf("serve did not exit 0 after draining:\n%s", errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop after draining")
	}
}

// The deadline of the state's close at a shutdown (closeDeadline, which
// serve hands the drain's end) is within the drain's budget (webhook.timeout
// + 5s), so the process exits within the grace period deploy/ sizes for it:
// after a drain that took the whole budget, with the store stalled, the
// journal's 5s and the deferred writes' 2s took it 7s past, and the kubelet
// would kill it mid-close (an audit). It keeps at least closeMinimum for one
// last attempt, and at most stateCloseTime.
func TestTheCloseDeadlineIsWithinTheDrainsBudget(t *testing.T) {
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name     string
		drainEnd time.Time
		want     time.Time
	}{
		{"no drain (stopped on an error)", time.Time{}, now.Add(stateCloseTime)},
		{"a drain that ended early", now.Add(20 * time.Second), now.Add(stateCloseTime)},
		{"a drain that used most of its budget", now.Add(2 * time.Second), now.Add(2 * time.Second)},
		{"a drain that used all of it", now.Add(-time.Second), now.Add(closeMinimum)},
	} {
		var end int64
		if !tt.drainEnd.IsZero() {
			end = tt.drainEnd.UnixNano()
		}
		if got := closeDeadline(now, end); !got.Equal(tt.want) {
			t.Errorf("%s: close by %v, want %v", tt.name, got.Sub(now), tt.want.Sub(now))
		}
	}
}
