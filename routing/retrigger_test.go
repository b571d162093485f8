package routing_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// PagerDuty holds one incident per router incident, and an alert joining
// it open is an update it is sent nothing for (storm control). Someone
// resolving the incident in PagerDuty itself (or its auto-resolve, or an
// Alertmanager that sends the router no resolves) would leave every later
// alert of the incident unpaged until dedup.repeat_interval: new alerts
// joining send the trigger again, at most once per retrigger_interval
// (PagerDuty folds it while its incident is open).
func TestNewAlertsJoiningAnOpenIncidentTriggerItAgainOncePerInterval(t *testing.T) {
	for _, interval := range []time.Duration{5 * time.Minute, 0} {
		t.Run(interval.String(), func(t *testing.T) {
			e := unseenEnv(t)
			s := newStandIns(t)
			c := newClock()
			p := s.replica(e)
			p.Now, p.RetriggerInterval = c.Now, interval
			other := s.replica(e) // a replica that sees the incident first later
			other.Now, other.RetriggerInterval = c.Now, interval

			mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
			mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "b"))
			c.Advance(time.Minute)
			mustProcess(t, other, tAlert("TTFTHigh", "firing", "page", "instance", "c"))
			if got := s.pd.Triggers(ttftIncident); got != 1 {
				t.Fatalf("PagerDuty triggers = %d within the interval, want the opening's alone", got)
			}
			c.Advance(5 * time.Minute)
			mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "d"), tAlert("TTFTHigh", "firing", "page", "instance", "e"))
			mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "f"))
			want := 2
			if interval == 0 {
				want = 1
			}
			if got := s.pd.Triggers(ttftIncident); got != want {
				t.Errorf("PagerDuty triggers = %d once the interval passed (two webhooks of new alerts), want %d", got, want)
			}
			// Alerts firing on with nothing new send nothing.
			c.Advance(10 * time.Minute)
			mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
			if got := s.pd.Triggers(ttftIncident); got != want {
				t.Errorf("PagerDuty triggers = %d after a repeat of a notified alert, want %d", got, want)
			}
		})
	}
}

// Webhooks bringing new alerts to the incident at the same moment, once
// the interval has passed, send one trigger between them: the first takes
// it before its send.
func TestConcurrentJoinsRetriggerOnce(t *testing.T) {
	e := unseenEnv(t)
	s := newStandIns(t)
	c := newClock()
	p := s.replica(e)
	p.Now, p.RetriggerInterval = c.Now, 5*time.Minute
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	c.Advance(6 * time.Minute)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			_, _ = p.Process(context.Background(), payload(t, tAlert("TTFTHigh", "firing", "page", "instance", fmt.Sprintf("n%d", i))))
		})
	}
	wg.Wait()
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Errorf("PagerDuty triggers = %d after 8 concurrent webhooks of new alerts, want the opening's and one more", got)
	}
}
