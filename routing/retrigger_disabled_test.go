package routing_test

import (
	"testing"
	"time"
)

// retrigger_interval: 0 turns retriggers off: a new alert joining an open
// incident sends PagerDuty nothing, even while the store's run reads as
// beginning after this replica's now — recorded by a replica whose clock
// runs a minute ahead (dedup.StoreLife). Counted from there, every trigger
// looked due: on-call disabled retriggers and PagerDuty was triggered again
// by each new alert, paging anew an incident resolved there (a mutation
// audit found it untested).
func TestNoRetriggerIntervalNeverRetriggersInAStoreRunStampedAhead(t *testing.T) {
	e, _ := retriggerEnv(t)
	s := newStandIns(t)
	p := retriggering(e, s, 0)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	p.StoreLife = func() time.Time { return e.clock.Now().Add(time.Minute) }
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "b"))
	if got := s.pd.Triggers(ttftIncident); got != 1 {
		t.Errorf("PagerDuty triggers = %d with retrigger_interval 0, want the opening's alone", got)
	}
}
