package storetest

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

func init() {
	cases = append(cases, []conformance{
		{"incident: an unsettled retrigger is taken once, and a join without Retrigger leaves it unsettled", testIncidentUnsettledRetriggerTakenOnce},
		{"incident: an opening drops an unsettled retrigger", testIncidentOpeningDropsUnsettledRetrigger},
		{"incident: a retrigger given back restores the trigger time it replaced", testIncidentUntriggerRestoresTime},
		{"incident: a take void past its end restores the trigger time it replaced", testIncidentVoidTakeRestoresTime},
	}...)
}

// The sender holding an unsettled retrigger joins again (another webhook
// of its group): the retrigger it holds is not taken a second time — a
// second PagerDuty trigger within the interval. A join asking no
// retrigger (Slack) leaves the take as it is: dropped, another PagerDuty
// join took one more.
func testIncidentUnsettledRetriggerTakenOnce(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("taken-once")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t0", Members: members("A")}) // no trigger time kept
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t0"})
	if b := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tB", Members: members("B"), Retrigger: longTTL}); b.Retriggered == "" {
		t.Fatalf("B's join took no retrigger: %+v", b)
	}
	if r := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tB", Members: members("B2"), Retrigger: longTTL}); r.Outcome != store.OutcomeOpen || r.Retriggered != "" {
		t.Fatalf("the taker's own second join: %+v, want an update taking no second retrigger", r)
	}
	want(t, "a join without Retrigger", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tS", Members: members("S")}), store.OutcomeOpen)
	want(t, "C while B's retrigger is unsettled", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tC", Members: members("C"), Retrigger: longTTL}), store.OutcomeBusy)
}

// A member firing anew reopens the incident while a retrigger is
// unsettled (its sender's next webhook): the opening triggers, and the take
// is dropped — kept, it held every other sender's join busy (5xx,
// Alertmanager's retries) until its lease ended, the opening's settle
// settling no retrigger.
func testIncidentOpeningDropsUnsettledRetrigger(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("opening-drops")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t0", Members: at("A", "1000")})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t0"})
	if b := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tB", Members: members("B"), Retrigger: longTTL}); b.Retriggered == "" {
		t.Fatalf("B's join took no retrigger: %+v", b)
	}
	want(t, "A firing anew", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tB", Members: at("A", "2000"), Retrigger: longTTL}), store.OutcomeOpening)
	want(t, "the reopening sent", step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "tB"}), store.OutcomeOK)
	if c := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tC", Members: members("C"), Retrigger: longTTL}); c.Outcome != store.OutcomeOpen || c.Retriggered != "" {
		t.Fatalf("C after the reopening: %+v, want an update (the reopening triggered just now)", c)
	}
}

// A retrigger given back (its send failed) restores the trigger time it
// replaced: the next join is due by that time, not at once — dropped, the
// next alert triggered PagerDuty again within the interval.
func testIncidentUntriggerRestoresTime(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("untrigger-restores")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t0", Members: members("A"), Retrigger: longTTL}) // the opening's trigger time
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t0"})
	b := takeRetrigger(t, s, key, "tB", "B", longTTL)
	if b.PrevTriggered == "" {
		t.Fatalf("B's retrigger replaced no time: %+v, want the opening's", b)
	}
	want(t, "B's retrigger given back", step(t, s, store.IncidentOp{Key: key, Step: store.StepUntrigger, Token: "tB", Triggered: b.Retriggered, PrevTriggered: b.PrevTriggered}), store.OutcomeOK)
	if c := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tC", Members: members("C"), Retrigger: longTTL}); c.Outcome != store.OutcomeOpen || c.Retriggered != "" {
		t.Fatalf("C within an hour of the opening's trigger: %+v, want an update", c)
	}
}

// A take never settled (its sender died mid-send) is void past its end, as
// if given back: the join that finds it so, due or not, restores the
// trigger time the take replaced — dropped, the next join triggered
// PagerDuty again within the interval.
func testIncidentVoidTakeRestoresTime(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("void-restores")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t0", Members: members("A"), Retrigger: longTTL}) // the opening's trigger time
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t0"})
	takeRetrigger(t, s, key, "tDead", "B", 50*time.Millisecond)
	var c store.IncidentResult
	eventually(t, "a join once the dead sender's lease ended", func() (bool, error) {
		res, err := s.Incidents(t.Context(), []store.IncidentOp{{Key: key, Step: store.StepJoin, Token: "tC", Members: members("C"), Retrigger: longTTL, Lease: longTTL, TTL: longTTL}})
		if err != nil {
			return false, err
		}
		c = res[0]
		return c.Outcome == store.OutcomeOpen, nil
	})
	if c.Retriggered != "" {
		t.Fatalf("C within an hour of the opening's trigger: %+v, want an update", c)
	}
	if d := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tD", Members: members("D"), Retrigger: longTTL}); d.Outcome != store.OutcomeOpen || d.Retriggered != "" {
		t.Fatalf("D after C: %+v, want an update (the opening's trigger time restored)", d)
	}
}

// takeRetrigger has member join the open incident key with a millisecond's
// retrigger interval until the join takes a retrigger, under token for
// lease, and returns that join's result.
func takeRetrigger(t *testing.T, s store.Store, key, token, member string, lease time.Duration) store.IncidentResult {
	t.Helper()
	var r store.IncidentResult
	eventually(t, "a join takes a retrigger after a millisecond's interval", func() (bool, error) {
		res, err := s.Incidents(t.Context(), []store.IncidentOp{{Key: key, Step: store.StepJoin, Token: token, Members: members(member), Retrigger: time.Millisecond, Lease: lease, TTL: longTTL}})
		if err != nil {
			return false, err
		}
		r = res[0]
		return r.Retriggered != "", nil
	})
	return r
}
