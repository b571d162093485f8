package storetest

import (
	"testing"

	"github.com/alertrouter/alertrouter/store"
)

func init() {
	cases = append(cases, struct {
		name string
		run  func(t *testing.T, s store.Store, k keyMaker)
	}{"incident: an aborted opening's members are no longer read as joined", testIncidentAbortedOpeningJoins})
}

// IncidentJoins reads the incident's members: Slack's redrawn parent counts
// those its update did not carry ("N earlier alerts of the incident still
// firing are not listed"), and a hand Resolve counts those joined since the
// click. A member an aborted opening removed is none: read as joined, it
// was counted as an alert still firing that no one was ever paged for.
func testIncidentAbortedOpeningJoins(t *testing.T, s store.Store, k keyMaker) {
	r, ok := s.(store.IncidentJoinsReader)
	if !ok {
		t.Skip("the store reads no join times")
	}
	key := k.incident("aborted-joins")
	opening := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A", "B")})
	want(t, "abort of the opening", step(t, s, store.IncidentOp{Key: key, Step: store.StepAbort, Token: "t1", Members: opening.Added}), store.OutcomeOK)
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t2", Members: members("C")})
	joins, err := r.IncidentJoins(t.Context(), []string{key})
	if err != nil || len(joins) != 1 {
		t.Fatalf("IncidentJoins = %v, %v; want one answer", joins, err)
	}
	if _, c := joins[0]["C"]; len(joins[0]) != 1 || !c {
		t.Fatalf("joins after the aborted opening and C's join: %v, want C alone", joins[0])
	}
}
