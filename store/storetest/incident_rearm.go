package storetest

import (
	"testing"

	"github.com/alertrouter/alertrouter/store"
)

func init() {
	cases = append(cases, conformance{"incident: a leave re-arms the incident's time to live, a closing one too", testIncidentLeaveRearms})
}

// Every join or leave of an incident re-arms its time to live
// (docs/architecture.md). A Leave that did not: an incident whose alerts
// only resolved for its time to live expired with members still firing —
// their resolves found no incident and PagerDuty was never resolved — and
// one expiring while its resolve was sent lost the resolving lease.
func testIncidentLeaveRearms(t *testing.T, s store.Store, k keyMaker) {
	left, closing, witness := k.incident("rearm-left"), k.incident("rearm-closing"), k.incident("rearm-witness")
	for _, key := range []string{left, closing, witness} {
		step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A", "B"), TTL: shortTTL})
		step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1", TTL: shortTTL})
	}
	want(t, "leave of A", step(t, s, store.IncidentOp{Key: left, Step: store.StepLeave, Token: "t2", Members: members("A")}), store.OutcomeStillOpen)
	want(t, "leave of A and B", step(t, s, store.IncidentOp{Key: closing, Step: store.StepLeave, Token: "t2", Members: members("A", "B")}), store.OutcomeClosing)
	step(t, s, store.IncidentOp{Key: witness, Step: store.StepRef, Token: "t2", Ref: "R", TTL: shortTTL}) // re-arms nothing
	eventually(t, "the incident no leave re-armed expired", func() (bool, error) {
		st, err := s.IncidentStates(t.Context(), []string{witness})
		return err == nil && st[0] == "", err
	})
	if st := states(t, s, left, closing); st[0] != "open" || st[1] != "resolving" {
		t.Fatalf("states after the leaves = %q, want open and resolving", st)
	}
	if r := step(t, s, store.IncidentOp{Key: left, Step: store.StepLeave, Token: "t3", Members: members("B")}); r.Outcome != store.OutcomeClosing {
		t.Fatalf("leave of B, the last member: %+v, want closing", r)
	}
	want(t, "the closing's resolve", step(t, s, store.IncidentOp{Key: closing, Step: store.StepResolved, Token: "t2"}), store.OutcomeOK)
}
