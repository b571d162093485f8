package routing_test

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// Flap histories hold alert times (Prometheus' and Alertmanager's clocks),
// and were judged on the store clock: with Redis' clock 10 minutes ahead of
// the hosts', a re-fire 5 s after its page resolved read as 10 minutes
// after, past cool_down, and paged again (a review). They are judged on the
// decisions' clock, the host's.
func TestFlapDampingIsJudgedOnTheHostsClock(t *testing.T) {
	for _, ahead := range []time.Duration{0, 10*time.Minute + time.Second} {
		t.Run("store clock ahead "+ahead.String(), func(t *testing.T) {
			e := newEnv(t)
			cfg := flap.DefaultConfig()
			p := e.pipeline()
			p.Flap = &cfg
			p.Now = func() time.Time { return e.clock.Now().Add(ahead) } // shared stamps: Redis' time
			p.DecideNow = e.clock.Now                                    // as build.go wires them
			start := e.clock.Now()
			send := func(status string) {
				a := tAlert("TTFTHigh", status, "page")
				a.StartsAt = start.Format(time.RFC3339Nano)
				if status == "resolved" {
					a.EndsAt = e.clock.Now().Format(time.RFC3339Nano)
				}
				mustProcess(t, p, a)
			}
			send("firing")
			e.clock.Advance(5 * time.Second)
			send("resolved")
			e.clock.Advance(5 * time.Second)
			start = e.clock.Now()
			before := len(e.pd.notifications())
			send("firing")
			if got := e.pd.notifications()[before:]; len(got) != 0 {
				t.Errorf("a re-fire 5 s after its page resolved sent PagerDuty %d notifications, want none (damped: within cool_down)", len(got))
			}
		})
	}
}

// The lagging-copy check compared the flap history's last resolve (its
// endsAt: Alertmanager's clock) with the store clock: with Redis' clock 5
// minutes ahead, an HA peer's lagging copy under its own start was not
// asked about and paged again (a review). It is judged on the host's
// clock, as flap damping is.
func TestALaggingCopyIsJudgedOnTheHostsClock(t *testing.T) {
	for _, ahead := range []time.Duration{0, 5*time.Minute + 30*time.Second} {
		t.Run("store clock ahead "+ahead.String(), func(t *testing.T) {
			am, e, p := askingAlertmanager(t)
			p.Now = func() time.Time { return e.clock.Now().Add(ahead) }
			p.DecideNow = e.clock.Now
			a, start := firedAndResolved(t, am, e, p)
			lagging := a // a peer's copy, stamped with its own start
			lagging.StartsAt = start.Add(24 * time.Millisecond).Format(time.RFC3339Nano)
			e.clock.Advance(5 * time.Second)
			mustProcess(t, p, lagging)
			if n := pdCount(e, alert.KindFiring); n != 1 {
				t.Errorf("the lagging peer's copy paged again: %d PagerDuty firings, want 1", n)
			}
		})
	}
}
