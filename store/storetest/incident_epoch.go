package storetest

import (
	"testing"

	"github.com/alertrouter/alertrouter/store"
)

func init() {
	cases = append(cases, conformance{"incident: a resolve whose end is at or before the epoch leaves by fingerprint", testIncidentLeaveEndAtEpoch})
}

// A time at or before the epoch orders nothing (laterStart, the script's
// later): a resolve carrying such an end is one without a usable end and
// removes the member, whatever start it holds. Read as a time before the
// member's start, it kept the member: the incident never closed and
// PagerDuty was never resolved.
func testIncidentLeaveEndAtEpoch(t *testing.T, s store.Store, k keyMaker) {
	for _, end := range []string{"0", "-62135596800000"} {
		key := k.incident("epoch" + end)
		step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: at("A", "5000")})
		step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
		r := step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t2", Members: ended("A", "5000", end)})
		if want(t, "the resolve ending at "+end, r, store.OutcomeClosing); len(r.Removed) != 1 || r.Removed[0].StartsAt != "5000" {
			t.Fatalf("the resolve ending at %s removed %+v, want [A 5000]", end, r.Removed)
		}
	}
}
