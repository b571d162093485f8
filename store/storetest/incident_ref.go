package storetest

import (
	"testing"

	"github.com/alertrouter/alertrouter/store"
)

func init() {
	cases = append(cases, []conformance{
		{"incident: an opening confirmed without a ref keeps the incident's", testIncidentOpenedKeepsRef},
		{"incident: a ref for an incident not open is not kept", testIncidentRefOfClosedIncident},
	}...)
}

// A reopening (a member fired anew) confirmed without a ref (PagerDuty's
// trigger; Slack's reply in the thread) keeps the ref the incident holds:
// emptied, the incident's next update found no Slack parent and posted a
// new one.
func testIncidentOpenedKeepsRef(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("ref-kept")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: at("A", "1000")})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1", Ref: "C1 123.456"})
	want(t, "A firing anew", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t2", Members: at("A", "2000")}), store.OutcomeOpening)
	if r := step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t2"}); r.Outcome != store.OutcomeOK || r.Ref != "C1 123.456" {
		t.Fatalf("the reopening confirmed without a ref: %+v, want ok with the kept ref", r)
	}
	if r := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t3", Members: members("B")}); r.Ref != "C1 123.456" {
		t.Fatalf("a join after the reopening: ref %q, want the kept one", r.Ref)
	}
}

// Ref keeps a parent posted outside an opening, for an incident that
// exists: one that closed meanwhile keeps none, so its next opening posts
// a parent of its own rather than replying in the closed incident's thread.
func testIncidentRefOfClosedIncident(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("ref-closed")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A")})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1", Ref: "C1 1.1"})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t2", Members: members("A")})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepResolved, Token: "t2"})
	if r := step(t, s, store.IncidentOp{Key: key, Step: store.StepRef, Token: "t3", Ref: "C1 2.2"}); r.Ref != "" {
		t.Fatalf("a ref for the closed incident: %+v, want none kept", r)
	}
	if r := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t4", Members: members("B")}); r.Outcome != store.OutcomeOpening || r.Ref != "" {
		t.Fatalf("the next opening: %+v, want opening with no ref", r)
	}
}
