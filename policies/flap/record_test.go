package flap

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
)

func at(min float64) time.Time { return t0.Add(time.Duration(min * float64(time.Minute))) }

// TestRecordResumesAFiringAlertmanagerResolved: a firing that started
// before the last resolve — with the startsAt of the firing that resolve
// ended, as Alertmanager fires an alert again once Prometheus's resends
// resume, or another one (a Prometheus HA peer's) — is that firing going
// on: the resolve is withdrawn, nothing is appended, and a recurrence after
// the cool-down of a later, real resolve is not flapping.
func TestRecordResumesAFiringAlertmanagerResolved(t *testing.T) {
	cfg := DefaultConfig()
	w := time.Duration(cfg.Window)
	for _, start := range []float64{0, 4} {
		var h History
		h, _ = h.Record(Transition{At: at(0), Firing: true}, w)
		h, _ = h.Record(Transition{At: at(5)}, w)
		h, c := h.Record(Transition{At: at(start), Firing: true}, w)
		if c != Resumed || h.String() != (History{{At: at(0), Firing: true}}).String() {
			t.Fatalf("re-fire started at %v: %v, history %s; want Resumed, the firing alone", start, c, h)
		}
		if _, c := h.Record(Transition{At: at(start), Firing: true}, w); c != Unchanged {
			t.Fatalf("a repeat of the resumed firing: %v, want Unchanged", c)
		}
		h, _ = h.Record(Transition{At: at(20)}, w)
		h, c = h.Record(Transition{At: at(31), Firing: true}, w)
		if c != Appended {
			t.Fatalf("recurrence: %v, want Appended", c)
		}
		if v := cfg.Damp(alert.ActionPage, h, true, at(31)); v.Flapping || v.Transitions != 3 {
			t.Fatalf("recurrence 11m after a real resolve: %+v; want 3 transitions, not flapping", v)
		}
	}

	// The firing before the resolve no longer in the history (it started
	// more than a window before it): the resumed firing takes its place.
	long := History{{At: at(200)}}
	if h, c := long.Record(Transition{At: at(10), Firing: true}, w); c != Resumed || len(h) != 1 || !h[0].Firing || !h[0].At.Equal(at(10)) {
		t.Fatalf("resume of a firing older than the window: %v, %s", c, h)
	}
}

// TestRecordMakesUpNoTime: a resolve that ended before the last firing
// started is a late report of an earlier firing: it changes nothing, and is
// not recorded at the firing's time (a resolve 0s after it).
func TestRecordMakesUpNoTime(t *testing.T) {
	h := History{{At: at(0), Firing: true}, {At: at(5)}, {At: at(10), Firing: true}}
	got, c := h.Record(Transition{At: at(5)}, time.Hour)
	if c != Unchanged || got.String() != h.String() {
		t.Fatalf("a late resolve of the earlier firing: %v, %s; want Unchanged, %s", c, got, h)
	}
	got, c = h.Record(Transition{At: at(12)}, time.Hour)
	if c != Appended || !got[len(got)-1].At.Equal(at(12)) {
		t.Fatalf("the resolve of the last firing: %v, %s", c, got)
	}
}
