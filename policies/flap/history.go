package flap

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxEntries bounds the transitions kept per fingerprint: enough to count
// any sensible threshold, small enough for one short store value.
const MaxEntries = 64

// Transition is one change of state of an alert.
type Transition struct {
	// At is when the alert changed state (its startsAt for a firing, its
	// endsAt for a resolve), to the second.
	At time.Time
	// Firing is true for resolved → firing, false for firing → resolved.
	Firing bool
}

// String encodes t as "f<unix seconds>" or "r<unix seconds>", e.g.
// "f1764689323". Parse and ParseTransition read it back.
func (t Transition) String() string {
	c := byte('r')
	if t.Firing {
		c = 'f'
	}
	return string(c) + strconv.FormatInt(t.At.Unix(), 10)
}

// ParseTransition decodes one entry written by Transition.String.
func ParseTransition(s string) (Transition, error) {
	if len(s) < 2 || (s[0] != 'f' && s[0] != 'r') {
		return Transition{}, fmt.Errorf("flap transition %q: want f<unix seconds> or r<unix seconds>", s)
	}
	sec, err := strconv.ParseInt(s[1:], 10, 64)
	if err != nil || sec < 0 {
		return Transition{}, fmt.Errorf("flap transition %q: bad unix seconds", s)
	}
	return Transition{At: time.Unix(sec, 0).UTC(), Firing: s[0] == 'f'}, nil
}

// History is the transitions of one fingerprint, oldest first, each a change
// of state from the one before. The zero value is an empty history.
type History []Transition

// Change says what Record did to a history.
type Change int

// The changes Record makes.
const (
	// Unchanged: the alert was reported in the state it was already in
	// (Alertmanager repeats firing alerts), or a resolve of an earlier
	// firing came late.
	Unchanged Change = iota
	// Appended: the alert changed state; the transition was appended.
	Appended
	// Resumed: a firing that started before the last resolve: the firing
	// that resolve ended never stopped — the resolve was Alertmanager's,
	// sent when Prometheus's resends lapsed, and the firing came back with
	// its startsAt — so that resolve is withdrawn instead of a transition
	// being appended.
	Resumed
)

// Record records that the alert is firing (or resolved) at t.At — its
// startsAt when firing, its endsAt when resolved — and returns the history
// trimmed to what Damp needs: transitions older than window before the
// newest are dropped, except the newest MinKept (the newest tells the
// current state; the two before it, the firing a resolve ended and that
// resolve), and at most MaxEntries are kept. The receiver is not modified.
//
// A report of the state the alert is already in changes nothing. A report
// whose time is before the newest transition is no transition either, and
// no time is made up for it:
//
//   - a firing that started before the last resolve says that it was
//     firing all along: that resolve is withdrawn (Resumed) — Alertmanager
//     resolves an alert whose resends from Prometheus lapsed, and fires it
//     again, with the same startsAt, when they resume; with no firing
//     before that resolve in the history (the resolve was the first
//     transition recorded), this firing takes its place;
//   - a resolve that ended before the last firing started is the late
//     report of an earlier firing (an Alertmanager peer lagging): nothing
//     changes.
func (h History) Record(t Transition, window time.Duration) (out History, c Change) {
	t.At = t.At.Truncate(time.Second)
	n := len(h)
	if n > 0 && h[n-1].Firing == t.Firing {
		return h, Unchanged
	}
	if n > 0 && t.At.Before(h[n-1].At) {
		switch {
		case !t.Firing:
			return h, Unchanged
		case n == 1:
			return History{t}, Resumed
		}
		return slices.Clone(h[:n-1]), Resumed
	}
	out = make(History, 0, n+1)
	out = append(out, h...)
	out = append(out, t)
	return out.Trim(t.At, window), Appended
}

// MinKept is the fewest transitions Trim keeps however old they are: a
// firing, its resolve and the firing after it — what the cool-down rule
// reads (a re-fire within cool_down of the resolve of a firing that
// paged), and what tells whether a resolve's firing was held as a ticket.
// A firing that lasted longer than the window is still the one its
// resolve ended. Older transitions count towards nothing: Damp counts
// those within the window only.
const MinKept = 3

// Trim drops transitions older than window before now, keeping at least the
// newest MinKept, and keeps at most the newest MaxEntries. It returns a
// sub-slice of h.
func (h History) Trim(now time.Time, window time.Duration) History {
	from := now.Add(-window)
	i := 0
	for i < len(h)-MinKept && h[i].At.Before(from) {
		i++
	}
	if len(h)-i > MaxEntries {
		i = len(h) - MaxEntries
	}
	return h[i:]
}

// Strings encodes each transition with Transition.String, oldest first: the
// form to keep in a store list.
func (h History) Strings() []string {
	out := make([]string, len(h))
	for i, t := range h {
		out[i] = t.String()
	}
	return out
}

// String encodes the history as its entries joined by commas, e.g.
// "f1764689323,r1764689443": the form to keep in a single store value.
func (h History) String() string { return strings.Join(h.Strings(), ",") }

// Parse decodes a history from a comma-separated string (History.String)
// or from list entries (History.Strings), in the order stored. Entries that
// repeat the state before them are skipped, so that a list appended to
// blindly still reads as transitions; an entry earlier than the one before
// it (replicas with different clocks) counts at the time before it. It
// returns an error, never panics, on anything it cannot read; an empty
// input is an empty history.
func Parse(entries ...string) (History, error) {
	var h History
	for _, e := range entries {
		for _, s := range strings.Split(e, ",") {
			if s == "" {
				continue
			}
			t, err := ParseTransition(s)
			if err != nil {
				return nil, err
			}
			if n := len(h); n > 0 {
				if h[n-1].Firing == t.Firing {
					continue
				}
				if t.At.Before(h[n-1].At) {
					// Replicas' clocks differ: keep the stored order,
					// at the newest time seen.
					t.At = h[n-1].At
				}
			}
			h = append(h, t)
		}
	}
	if len(h) > MaxEntries {
		h = h[len(h)-MaxEntries:]
	}
	return h, nil
}
