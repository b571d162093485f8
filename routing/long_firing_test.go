package routing_test

import (
	"testing"
	"time"
)

// An alert firing longer than dedup.notified_ttl with no reminder sent —
// dedup.repeat_interval 0 ("never remind"), or Alertmanager repeating less
// often than the marker lives — paged again as new once its marker expired
// (the repeats skipped never renewed it): a page a week for an alert that
// never stopped. A skipped firing renews its marker past half its life.
func TestAnAlertFiringLongerThanNotifiedTTLIsNotPagedAgain(t *testing.T) {
	e := newEnv(t)
	e.dedup.RepeatInterval = 0
	e.dedup.NotifiedTTL = 7 * 24 * time.Hour
	p := e.pipeline()
	a := tAlert("TTFTHigh", "firing", "page")
	mustProcess(t, p, a)
	for day := 1; day <= 20; day++ {
		e.clock.Advance(24 * time.Hour)
		mustProcess(t, p, a) // Alertmanager's repeat
	}
	if got := e.pd.events(); len(got) != 1 {
		t.Fatalf("PagerDuty after 20 days of one alert firing, repeated daily: %v; want the one trigger", got)
	}
}
