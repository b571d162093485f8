package flap

import (
	"testing"
	"time"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// TestCountWindow: Damp counts the transitions within (now − window, now],
// as docs/policies.md says. Counting one more — a transition stamped ahead
// of now, or one exactly a window old — makes an alert at the threshold
// flapping, and on-call's page arrives as a ticket.
func TestCountWindow(t *testing.T) {
	cfg := DefaultConfig() // threshold 4, window 1h
	cases := []struct {
		name string
		h    History
		now  time.Time
	}{
		{"a transition ahead of now (Alertmanager's clock ahead) is not counted", History{
			{At: at(0), Firing: true}, {At: at(1)}, {At: at(2), Firing: true}, {At: at(3)}, {At: at(4.5), Firing: true},
		}, at(4)},
		{"a transition exactly a window old has left the window", History{
			{At: at(0), Firing: true}, {At: at(56)}, {At: at(57), Firing: true}, {At: at(58)}, {At: at(60), Firing: true},
		}, at(60)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := cfg.Damp(alert.ActionPage, c.h, true, c.now)
			if v.Transitions != cfg.Threshold || v.Flapping || v.Action != alert.ActionPage {
				t.Errorf("%s at %s: %+v; want %d transitions, not flapping, page", c.h, c.now, v, cfg.Threshold)
			}
		})
	}
}

// TestRefired: a firing back within cool_down of the resolve of a firing
// that paged is a ticket, once; anything else decides as it did.
func TestRefired(t *testing.T) {
	cfg := DefaultConfig() // cool_down 10m
	P, T := alert.ActionPage, alert.ActionTicket
	cases := []struct {
		name       string
		h          History
		paged, now time.Time
		want       alert.Action
		reason     string
	}{
		{"re-fire 1m after the resolve of a firing that paged: a ticket",
			History{{At: at(0), Firing: true}, {At: at(1)}, {At: at(2), Firing: true}}, at(0), at(2),
			T, "flapping: fired again 1m0s after its page resolved (within cool_down 10m): page downgraded to ticket"},
		// A page mark left from an earlier cycle, before the previous
		// firing: that firing did not page, and its re-fire must page.
		{"page mark older than the previous firing: pages",
			History{{At: at(0), Firing: true}, {At: at(1)}, {At: at(2), Firing: true}}, at(-30), at(2),
			P, ""},
		// History times are whole seconds: a gap of exactly cool_down
		// is within it (docs/policies.md: "within cool_down").
		{"re-fire exactly cool_down after the resolve: a ticket",
			History{{At: at(0), Firing: true}, {At: at(1)}, {At: at(11), Firing: true}}, at(0), at(11),
			T, "flapping: fired again 10m0s after its page resolved (within cool_down 10m): page downgraded to ticket"},
		// The rule lasts cool_down after the re-fire started: still firing
		// then, it is a trouble that goes on, and pages.
		{"re-fire still firing cool_down after it started: pages",
			History{{At: at(0), Firing: true}, {At: at(1)}, {At: at(2), Firing: true}}, at(0), at(12),
			P, GoesOn(at(2), time.Minute, 10*time.Minute, 10*time.Minute)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := cfg.Refired(Verdict{Action: P, Transitions: 3}, c.h, c.paged, P, c.now)
			if v.Action != c.want || v.Flapping != (c.want == T) || v.Reason != c.reason {
				t.Errorf("%s paged %s at %s: %+v; want %s, reason %q", c.h, c.paged, c.now, v, c.want, c.reason)
			}
		})
	}
}

// TestHeldAsTicket: only the resolve of a firing whose page mark is older
// than its start (or none) went out as a ticket. A firing that paged as it
// fired has its mark at its start: its resolve must reach PagerDuty, or the
// page stays open there.
func TestHeldAsTicket(t *testing.T) {
	h := History{{At: at(0), Firing: true}, {At: at(5)}}
	a := &alert.Alert{Alert: template.Alert{Status: "resolved", StartsAt: at(0), EndsAt: at(5)}}
	cases := []struct {
		name  string
		paged time.Time
		want  bool
	}{
		{"paged as it fired", at(0), false},
		{"paged later, once stable", at(3), false},
		{"mark from an earlier firing: held", at(-30), true},
		{"never paged: held", time.Time{}, true},
	}
	for _, c := range cases {
		if got := HeldAsTicket(h, c.paged, a); got != c.want {
			t.Errorf("%s (mark %s): HeldAsTicket = %v, want %v", c.name, c.paged, got, c.want)
		}
	}
}

// TestJudgeNeverPagedPagesOnce: damping spares a second wake-up, never the
// first — a flapping alert at the page tier that never paged pages once;
// one that paged before is a ticket.
func TestJudgeNeverPagedPagesOnce(t *testing.T) {
	cfg := DefaultConfig()
	h := History{{At: at(0), Firing: true}, {At: at(1)}, {At: at(2), Firing: true}, {At: at(3)}, {At: at(4), Firing: true}}
	cases := []struct {
		name        string
		pagedBefore time.Time
		want        alert.Action
		reason      string
	}{
		{"never paged: pages once", time.Time{}, alert.ActionPage, "flapping: 5 transitions in 1h, none of them paged: paged once"},
		{"paged before: a ticket", at(0), alert.ActionTicket, "flapping: 5 transitions in 1h: page downgraded to ticket"},
	}
	for _, c := range cases {
		v := cfg.Judge(alert.ActionPage, h, true, at(4), c.pagedBefore, c.pagedBefore)
		if v.Action != c.want || v.Reason != c.reason {
			t.Errorf("%s: %+v; want %s, reason %q", c.name, v, c.want, c.reason)
		}
	}
}

// TestJudgeLateResolveIsNoReFire: a late resolve of an earlier firing
// leaves the history as it is, its last transition a re-fire; the re-fire
// rule damps firings, so the resolve must not read as flapping (its
// reasons would tell on-call "flapping: 3 transitions in 1h").
func TestJudgeLateResolveIsNoReFire(t *testing.T) {
	h := History{{At: at(0), Firing: true}, {At: at(1)}, {At: at(2), Firing: true}}
	if v := DefaultConfig().Judge(alert.ActionPage, h, false, at(3), at(0), at(0)); v.Flapping || v.Reason != "" || v.Action != alert.ActionPage {
		t.Errorf("late resolve after a re-fire: %+v; want not flapping, no reason, page", v)
	}
}
