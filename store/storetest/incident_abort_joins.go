package storetest

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

func init() {
	cases = append(cases, []conformance{
		{"incident: an aborted opening's members are no longer read as joined", testIncidentAbortedOpeningJoins},
		{"incident: an aborted closing's members are read as joined when they joined", testIncidentAbortedClosingJoins},
	}...)
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

// A closing aborted (its resolve failed) puts its members back: they are
// the incident's again, joined when they joined. The memory store forgot
// their join times at the Leave and read them as never joined — Slack's
// note of the earlier alerts still firing counted too few — while Redis
// kept them.
func testIncidentAbortedClosingJoins(t *testing.T, s store.Store, k keyMaker) {
	r, ok := s.(store.IncidentJoinsReader)
	if !ok {
		t.Skip("the store reads no join times")
	}
	key := k.incident("aborted-closing-joins")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A", "B")})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	before, err := r.IncidentJoins(t.Context(), []string{key})
	if err != nil || len(before[0]) != 2 {
		t.Fatalf("IncidentJoins of the open incident = %v, %v; want A and B", before, err)
	}
	closing := step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t2", Members: members("A", "B")})
	want(t, "leave of A and B", closing, store.OutcomeClosing)
	want(t, "abort of the closing", step(t, s, store.IncidentOp{Key: key, Step: store.StepAbort, Token: "t2", Members: closing.Removed}), store.OutcomeOK)
	after, err := r.IncidentJoins(t.Context(), []string{key})
	if err != nil || len(after) != 1 {
		t.Fatalf("IncidentJoins = %v, %v; want one answer", after, err)
	}
	for _, fp := range []string{"A", "B"} {
		// Redis keeps a join time in µs, and the member's last join in
		// ms, which it reads for a member put back.
		if at, ok := after[0][fp]; !ok || !at.Truncate(time.Millisecond).Equal(before[0][fp].Truncate(time.Millisecond)) {
			t.Errorf("%s after the aborted closing: joined %v (%v), want %v as before the leave", fp, at, ok, before[0][fp])
		}
	}
}
