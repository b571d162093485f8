package flap

import (
	"fmt"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// The rules below are the router's damping (routing's damp) beside the
// transition count of Config.Damp; the policy simulator replays them too.

// HeldAsTicket reports whether the firing that resolved alert a resolves
// — the transition before h's last, a resolve — was decided page but went
// out as a ticket: damping held it, so the page mark (paged, as read) is
// older than its start, or none. False when h does not hold that firing
// (flap damping off then, or the history trimmed).
func HeldAsTicket(h History, paged time.Time, a *alert.Alert) bool {
	n := len(h)
	if n < 2 || h[n-1].Firing || !h[n-2].Firing {
		return false
	}
	start := a.IdentityStart().Truncate(time.Second)
	if start.IsZero() || !h[n-2].At.Equal(start) {
		return false
	}
	return paged.Before(h[n-2].At)
}

// Refired damps a firing that came back within cool_down of the resolve of
// a firing that paged, even before the count of transitions says flapping:
// the page already woke someone for this trouble, and an alert that pages,
// resolves and fires again minutes later is the start of a flap. So a
// flapping alert pages once, not once per cycle until the threshold. A
// re-fire still firing cool_down after it started pages (GoesOn).
func (cfg Config) Refired(v Verdict, h History, paged time.Time, action alert.Action, now time.Time) Verdict {
	n := len(h)
	if n < 3 || paged.IsZero() {
		return v
	}
	cur, res, prev := h[n-1], h[n-2], h[n-3]
	gap := cur.At.Sub(res.At)
	// prev paged: when it fired (paged is its start) or later, before it
	// resolved (paged is when: its hold ended).
	prevPaged := !paged.Before(prev.At) && !paged.After(res.At)
	if !cur.Firing || res.Firing || !prevPaged || gap > time.Duration(cfg.CoolDown) {
		return v
	}
	if since := now.Sub(cur.At); since >= time.Duration(cfg.CoolDown) {
		// No flap but a trouble that goes on, and it pages: Alertmanager
		// resolves an alert whose resends from Prometheus stopped (a
		// Prometheus restart or outage longer than four resend delays: a
		// long WAL replay), and Prometheus fires it again with a new start
		// when it is back (it keeps no start across a restart). Held for a
		// whole window, the trouble went on with its page resolved in
		// PagerDuty (an audit).
		v.Reason = GoesOn(cur.At, gap, since, time.Duration(cfg.CoolDown))
		return v
	}
	v.Flapping = true
	v.StableAt = cur.At.Add(time.Duration(cfg.CoolDown))
	v.Reason = fmt.Sprintf("flapping: fired again %s after its page resolved (within cool_down %s)", gap, cfg.CoolDown)
	if action == alert.ActionPage {
		v.Action = alert.ActionTicket
		v.Reason += ": page downgraded to ticket"
	}
	return v
}

// MaxClockAhead bounds how far an alert's time may be ahead of this
// replica's clock and still be taken as it is: Alertmanager's and
// Prometheus' clocks ahead of this replica's (replicas whose clocks
// disagree by minutes must record one alert's transitions alike), not a
// time made up (a startsAt years ahead), which reads as now.
const MaxClockAhead = time.Hour

// TransitionTime is when the alert entered its current state: its startsAt
// when firing, its endsAt when resolved — the alert's own times, which all
// replicas read alike —, now when Alertmanager sent none or one more than
// MaxClockAhead ahead of now.
func TransitionTime(a *alert.Alert, now time.Time) time.Time {
	t := a.IdentityStart()
	if !a.Firing() {
		t = a.EndsAt
	}
	if t.IsZero() || t.After(now.Add(MaxClockAhead)) {
		return now
	}
	return t
}

// Judge is the damping's verdict on one decision (action) of an alert whose
// history is h, its current transition last, at at: Damp's count, then a
// firing back within cool_down of a resolved page (Refired, with paged, the
// page mark now). A firing that flaps but never paged (pagedBefore, the
// mark as read, is zero) pages once: damping spares someone a second
// wake-up, and nobody was woken. A flapping resolve is sent at once, and
// its reason says so.
func (cfg Config) Judge(action alert.Action, h History, firing bool, at, paged, pagedBefore time.Time) Verdict {
	v := cfg.Damp(action, h, firing, at)
	if !v.Flapping && firing {
		v = cfg.Refired(v, h, paged, action, at)
	}
	switch {
	case !v.Flapping:
	case !firing:
		// Resolves are sent at once (docs/policies.md says why).
		v.Reason = fmt.Sprintf("flapping: %d transitions in %s: resolve sent at once", v.Transitions, cfg.Window)
	case v.Action != action && pagedBefore.IsZero():
		v.Action = action
		v.Reason = fmt.Sprintf("flapping: %d transitions in %s, none of them paged: paged once", v.Transitions, cfg.Window)
	}
	return v
}

// GoesOn is the reason a re-fire, gap after its page resolved, pages once
// it has fired since start, for since, past cool_down (Refired).
func GoesOn(start time.Time, gap, since, coolDown time.Duration) string {
	return fmt.Sprintf("fired again %s after its page resolved, at %s, and has fired since, for %s (past cool_down %s): a trouble that goes on, not a flap — "+
		"Alertmanager resolves an alert whose resends from Prometheus stopped (a Prometheus restart), and it fires again with a new start",
		gap, start.UTC().Format(time.RFC3339), since.Truncate(time.Second), coolDown)
}
