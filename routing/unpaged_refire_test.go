package routing_test

import (
	"errors"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// PagerDuty down for a firing and for its resolve: the resolve, sent "in
// case" (no marker says the firing was notified), took the closing lease
// of an incident PagerDuty never held, and its failed send's abort marked
// the incident open for notified_ttl. The re-fire, once PagerDuty was back,
// joined it as an update — answered "suppressed", and PagerDuty got
// nothing, for that alert and every later one of the incident.
func TestARefireAfterPagerDutyMissedTheFiringAndTheResolvePages(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testRefireAfterMissedPage(t, newEnv(t)) })
	t.Run("redis", func(t *testing.T) {
		testRefireAfterMissedPage(t, redisEnv(t, []string{redistest.Start(t).Addr()}, false))
	})
}

func testRefireAfterMissedPage(t *testing.T, e *env) {
	p := e.pipeline()
	labels := map[string]string{"alertname": "TTFTHigh", "service": "chat", "sector": "llm-inference-gpu", "kpi": "TTFT", "test_action": "page"}
	mk := func(status string, start time.Time) webhooktest.Alert {
		return webhooktest.MkAlert(status, labels, map[string]string{"summary": "x"}, "x > 1", start)
	}
	e.pd.setFail(func(*alert.Notification) error { return errors.New("PagerDuty answered 500") })
	if _, err := process(t, p, mk("firing", webhooktest.Start)); err == nil {
		t.Fatal("the firing with PagerDuty down: want a 5xx")
	}
	if _, err := process(t, p, mk("resolved", webhooktest.Start)); err == nil {
		t.Fatal("the resolve with PagerDuty down: want a 5xx")
	}
	e.pd.setFail(nil)
	mustProcess(t, p, mk("firing", webhooktest.Start.Add(20*time.Minute)))
	triggers := 0
	for _, n := range e.pd.notifications() {
		if n.Opening {
			triggers++
		}
	}
	if triggers != 1 {
		t.Fatalf("%d PagerDuty triggers after PagerDuty came back, want the re-fire's 1 (notifications %v)", triggers, e.pd.events())
	}
}
