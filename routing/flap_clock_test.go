package routing_test

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/policies/flap"
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
