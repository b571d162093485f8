package flap

import (
	"fmt"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Verdict is what damping decided for one alert.
type Verdict struct {
	// Flapping is true when the alert made more than Threshold transitions
	// within Window.
	Flapping bool
	// Transitions is the number of transitions within the window, the
	// current one included.
	Transitions int
	// Action is the action after damping: the policies' action, or one
	// tier lower (page → ticket) when flapping. Never none unless the
	// policies said none.
	Action alert.Action
	// Reason explains a downgrade or a held resolve, quoting the numbers:
	// "flapping: 5 transitions in 1h". Empty when not flapping.
	Reason string
	// HoldResolveUntil is set for a resolve of a flapping alert: send the
	// resolve at that time if the alert has not fired again by then
	// (otherwise drop the held resolve, the incident goes on). Zero means
	// send the resolve now.
	HoldResolveUntil time.Time
	// StableAt is when the alert stops flapping if it makes no further
	// transition. Zero when not flapping.
	StableAt time.Time
}

// Damp applies flap damping to one alert whose policies decided action.
// h is the alert's history with its current transition already appended
// (History.Record); firing is the alert's current status. now is injected.
//
// The rule: count the transitions with At within (now - Window, now]. More
// than Threshold makes the alert flapping. A flapping alert that fires is
// downgraded one tier (page → ticket; ticket and none stay), and a flapping
// alert that resolves gets HoldResolveUntil = now + CoolDown. When its last
// transition is older than Window the count drops to at most one and the
// alert decides as its policies say again.
func (c Config) Damp(action alert.Action, h History, firing bool, now time.Time) Verdict {
	v := Verdict{Action: action, Transitions: c.count(h, now)}
	if v.Transitions <= c.Threshold {
		return v
	}
	v.Flapping = true
	v.Reason = fmt.Sprintf("flapping: %d transitions in %s", v.Transitions, c.Window)
	// Without a further transition the count is at most one a whole
	// window after the last transition (earlier, if the old ones age out
	// first): that is when the alert surely pages again.
	v.StableAt = h[len(h)-1].At.Add(time.Duration(c.Window))
	if firing {
		if action == alert.ActionPage {
			v.Action = alert.ActionTicket
			v.Reason += ": page downgraded to ticket"
		}
		return v
	}
	v.HoldResolveUntil = now.Add(time.Duration(c.CoolDown))
	v.Reason += fmt.Sprintf(": resolve held until %s", v.HoldResolveUntil.UTC().Format(time.RFC3339))
	return v
}

// count returns the transitions of h within (now - Window, now].
func (c Config) count(h History, now time.Time) int {
	from := now.Add(-time.Duration(c.Window))
	n := 0
	for _, t := range h {
		if t.At.After(from) && !t.At.After(now) {
			n++
		}
	}
	return n
}
