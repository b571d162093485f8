package storetest

import (
	"testing"

	"github.com/alertrouter/alertrouter/store"
)

func init() {
	cases = append(cases, conformance{"incident: a step without a time to live leaves the incident's as it was", testIncidentStepWithoutTTL})
}

// IncidentOp.TTL not positive leaves the incident's time to live as it
// was (as Set and AddMembers do). Taken as a time to live of zero, it
// deleted the incident: the next alert opened it again, a second page.
func testIncidentStepWithoutTTL(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("nottl")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A", "B", "C")})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	for _, op := range []store.IncidentOp{
		{Key: key, Step: store.StepLeave, Token: "t2", Members: members("A"), Lease: longTTL},
		{Key: key, Step: store.StepOpened, Token: "t2"}, // lost: no lease of t2
		{Key: key, Step: store.StepJoin, Token: "t3", Members: members("D"), Lease: longTTL},
	} {
		res, err := s.Incidents(t.Context(), []store.IncidentOp{op})
		if err != nil {
			t.Fatalf("Incidents(%s): %v", op.Step, err)
		}
		if st := states(t, s, key); st[0] != "open" {
			t.Fatalf("after a %s without a time to live (%+v): state %q, want open", op.Step, res[0], st[0])
		}
	}
	r := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t4", Members: members("B", "C", "D")})
	if want(t, "a join of the members left", r, store.OutcomeOpen); len(r.Added) != 0 {
		t.Fatalf("a join of the members left added %+v, want none", r.Added)
	}
}
