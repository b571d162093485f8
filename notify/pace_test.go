package notify_test

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/notify"
)

// Each replica paces an endpoint alone: two at its rate are twice over it,
// and where refused requests count against the limit the throttle never
// cleared (a review). A 429 while paced doubles the interval — not the 429s
// of requests sent together before the pace took hold —, each pacedFor
// without one halves it back, and pacing ends pacedFor after the last 429
// at the base interval.
func TestAPacerSlowsDownWhileRefusedAndBackWhenNot(t *testing.T) {
	const base, pacedFor = 500 * time.Millisecond, time.Minute
	p := notify.NewPacers(base, pacedFor).Of("key")
	t0 := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for range 5 { // a burst sent before any 429, refused together
		p.Limit(t0, 0)
	}
	if got := p.Interval(); got != base {
		t.Fatalf("after one burst's 429s: interval %v, want %v", got, base)
	}
	p.Limit(at(time.Second), 0) // refused while paced: another replica takes the rest
	p.Limit(at(2*time.Second), 0)
	if got := p.Interval(); got != 4*base {
		t.Fatalf("after two 429s while paced: interval %v, want %v", got, 4*base)
	}
	// A minute without a 429 halves it; another, back to the base.
	if _, ok := p.Turn(at(2*time.Second+pacedFor+time.Second), time.Hour); !ok || p.Interval() != 2*base {
		t.Fatalf("a minute on: paced %t, interval %v; want paced at %v", ok, p.Interval(), 2*base)
	}
	if wait, ok := p.Turn(at(2*time.Second+2*pacedFor+2*time.Second), time.Hour); !ok || p.Interval() != base || wait != 0 {
		t.Fatalf("two minutes on: wait %v, interval %v; want the base, at once", wait, p.Interval())
	}
	// Pacing ends a minute after the last change at the base.
	later := at(2*time.Second + 3*pacedFor + 3*time.Second)
	for range 3 {
		if wait, ok := p.Turn(later, 0); !ok || wait != 0 {
			t.Fatalf("three minutes on: wait %v, %t; want no pace", wait, ok)
		}
	}
}
