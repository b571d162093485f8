package storetest

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

func init() {
	cases = append(cases, []conformance{
		{"incident: first join opens, later joins find it open, last leave closes", testIncidentLifecycle},
		{"incident: a join while another sender resolves is busy, then opens again", testIncidentJoinWhileResolving},
		{"incident: aborts undo a failed opening and a failed closing", testIncidentAbort},
		{"incident: an expired lease reads as closed", testIncidentLeaseExpiry},
		{"incident: a member that fires again with another start reopens", testIncidentStaleMember},
		{"incident: a late report of an earlier instance neither reopens nor removes the live member", testIncidentEarlierInstance},
		{"incident: concurrent joins elect exactly one opener", testIncidentConcurrentJoin},
		{"incident: thousands of members, and one twice in a step, as if added one by one", testIncidentManyMembers},
		{"incident: a call of many steps, some on one incident, applies them in order", testIncidentManySteps},
		{"incident: a write of many steps applies them all", testIncidentManyStepsWritten},
		{"incident: IncidentStates reads each state without changing it, an expired lease as closed", testIncidentStates},
		{"incident: the last trigger is kept with the incident, one join per interval retriggers it", testIncidentRetrigger},
		{"incident: concurrent joins take one retrigger", testIncidentConcurrentRetrigger},
		{"incident: a retrigger in flight holds other joins until its sender settles it", testIncidentUnsettledRetrigger},
		{"incident: a retrigger's settle leaves the incident's time to live as it was", testIncidentSettleKeepsTTL},
		{"incident: an unjoin keeps a member that started after the resolve's end", testIncidentUnjoinEndsAt},
		{"incident: a leave says what it removed with the starts held, so an abort restores them", testIncidentLeaveRemoved},
		{"incident: an aborted closing of an incident never opened leaves it closed", testIncidentAbortNeverOpened},
		{"incident: RenewIncidents keeps an incident and its members past their time to live, and makes none", testIncidentRenew},
	}...)
}

func (k keyMaker) incident(name string) string {
	return store.IncidentKey(k.prefix, name, "pagerduty/0")
}

func members(fps ...string) []store.Member {
	out := make([]store.Member, len(fps))
	for i, fp := range fps {
		out[i] = store.Member{Fingerprint: fp, StartsAt: "1000"}
	}
	return out
}

func step(t *testing.T, s store.Store, op store.IncidentOp) store.IncidentResult {
	t.Helper()
	if op.TTL == 0 {
		op.TTL = longTTL
	}
	if op.Lease == 0 {
		op.Lease = longTTL
	}
	res, err := s.Incidents(t.Context(), []store.IncidentOp{op})
	if err != nil {
		t.Fatalf("Incidents(%s): %v", op.Step, err)
	}
	if len(res) != 1 {
		t.Fatalf("Incidents returned %d results for 1 op", len(res))
	}
	return res[0]
}

func want(t *testing.T, what string, got store.IncidentResult, outcome string) {
	t.Helper()
	if got.Outcome != outcome {
		t.Fatalf("%s: outcome %q, want %q (%+v)", what, got.Outcome, outcome, got)
	}
}

func testIncidentLifecycle(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("a")
	r := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A")})
	want(t, "first join", r, store.OutcomeOpening)
	if len(r.Added) != 1 || r.Added[0].Fingerprint != "A" {
		t.Fatalf("first join added %+v, want [A]", r.Added)
	}
	want(t, "opened", step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1", Ref: "C1 123.456"}), store.OutcomeOK)
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t2", Members: members("A", "B")})
	want(t, "second join", r, store.OutcomeOpen)
	if r.Ref != "C1 123.456" || len(r.Added) != 1 || r.Added[0].Fingerprint != "B" {
		t.Fatalf("second join: ref %q added %+v, want the kept ref and [B]", r.Ref, r.Added)
	}
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t3", Members: members("A")})
	want(t, "leave of A", r, store.OutcomeStillOpen)
	if r.Remaining != 1 {
		t.Fatalf("leave of A: remaining %d, want 1", r.Remaining)
	}
	want(t, "leave of B", step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t4", Members: members("B")}), store.OutcomeClosing)
	want(t, "resolved", step(t, s, store.IncidentOp{Key: key, Step: store.StepResolved, Token: "t4"}), store.OutcomeOK)
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t5", Members: members("C")})
	want(t, "join after close", r, store.OutcomeOpening)
	if r.Ref != "" {
		t.Fatalf("a closed incident kept its ref %q", r.Ref)
	}
}

func testIncidentJoinWhileResolving(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("b")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A")})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	want(t, "leave of A", step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t2", Members: members("A")}), store.OutcomeClosing)
	want(t, "join of B while A resolves", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t3", Members: members("B")}), store.OutcomeBusy)
	want(t, "resolved", step(t, s, store.IncidentOp{Key: key, Step: store.StepResolved, Token: "t2"}), store.OutcomeOK)
	want(t, "join of B after the resolve", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t3", Members: members("B")}), store.OutcomeOpening)
}

func testIncidentAbort(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("c")
	r := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A")})
	want(t, "abort of the opening", step(t, s, store.IncidentOp{Key: key, Step: store.StepAbort, Token: "t1", Members: r.Added}), store.OutcomeOK)
	want(t, "join after a failed opening", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t2", Members: members("A")}), store.OutcomeOpening)
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t2"})
	want(t, "leave", step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t3", Members: members("A")}), store.OutcomeClosing)
	want(t, "abort of the closing", step(t, s, store.IncidentOp{Key: key, Step: store.StepAbort, Token: "t3", Members: members("A")}), store.OutcomeOK)
	want(t, "join after a failed closing", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t4", Members: members("B")}), store.OutcomeOpen)
	want(t, "retried leave", step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t5", Members: members("A")}), store.OutcomeStillOpen)
	want(t, "abort by a stranger", step(t, s, store.IncidentOp{Key: key, Step: store.StepAbort, Token: "nobody"}), store.OutcomeLost)
}

// A resolve whose alert was never a member (its opening failed and was
// aborted; the resolve sent "in case" to PagerDuty) takes the closing
// lease of an incident with no member; its send fails too. The abort put
// the incident in state open: every later alert joined it as an update
// and PagerDuty, which never held it, was paged by nobody.
func testIncidentAbortNeverOpened(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("never")
	r := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A")})
	want(t, "abort of the opening", step(t, s, store.IncidentOp{Key: key, Step: store.StepAbort, Token: "t1", Members: r.Added}), store.OutcomeOK)
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t2", Members: members("A")})
	want(t, "leave of the unseen resolve", r, store.OutcomeClosing)
	want(t, "abort of that closing", step(t, s, store.IncidentOp{Key: key, Step: store.StepAbort, Token: "t2", Members: r.Removed}), store.OutcomeOK)
	want(t, "the re-fire", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t3", Members: members("A")}), store.OutcomeOpening)
}

func testIncidentLeaseExpiry(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("d")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A"), Lease: shortTTL})
	eventually(t, "an expired opening lease lets another sender open", func() (bool, error) {
		res, err := s.Incidents(t.Context(), []store.IncidentOp{{Key: key, Step: store.StepJoin, Token: "t2", Members: members("A"), Lease: longTTL, TTL: longTTL}})
		if err != nil {
			return false, err
		}
		return res[0].Outcome == store.OutcomeOpening, nil
	})
	want(t, "the first sender's late confirm", step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"}), store.OutcomeLost)
	want(t, "the second sender's confirm", step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t2"}), store.OutcomeOK)
}

func testIncidentStaleMember(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("e")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A")})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	want(t, "same firing again", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t2", Members: members("A")}), store.OutcomeOpen)
	again := []store.Member{{Fingerprint: "A", StartsAt: "2000"}}
	want(t, "a new firing of A whose resolve was never recorded", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t3", Members: again}), store.OutcomeOpening)
}

func at(fp, startsAt string) []store.Member {
	return []store.Member{{Fingerprint: fp, StartsAt: startsAt}}
}

// ended is the Leave of fp's firing that started at startsAt and ended at
// endsAt.
func ended(fp, startsAt, endsAt string) []store.Member {
	return []store.Member{{Fingerprint: fp, StartsAt: startsAt, EndsAt: endsAt}}
}

func testIncidentEarlierInstance(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("e2")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: at("A", "1000")})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	want(t, "A fires again (its resolve never recorded)", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t2", Members: at("A", "3000")}), store.OutcomeOpening)
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t2"})
	want(t, "a lagging peer's repeat of the first instance", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t3", Members: at("A", "1000")}), store.OutcomeOpen)
	r := step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t4", Members: ended("A", "1000", "2000")})
	want(t, "the first instance's late resolve", r, store.OutcomeStillOpen)
	if r.Remaining != 1 {
		t.Fatalf("the first instance's late resolve: remaining %d, want the live instance", r.Remaining)
	}
	want(t, "the live instance's resolve", step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t5", Members: ended("A", "3000", "4000")}), store.OutcomeClosing)
	want(t, "resolved", step(t, s, store.IncidentOp{Key: key, Step: store.StepResolved, Token: "t5"}), store.OutcomeOK)

	// One firing whose start Alertmanager moved earlier (it merges the
	// copies of an HA Prometheus pair on the earliest): its resolve carries
	// the earlier start and removes the member all the same.
	key = k.incident("e3")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: at("B", "1500")})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	want(t, "the same firing with an earlier start", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t2", Members: at("B", "1000")}), store.OutcomeOpen)
	want(t, "its resolve", step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t3", Members: ended("B", "1000", "2000")}), store.OutcomeClosing)

	// A resolve without a usable end, and a member sent without startsAt
	// (the zero time: known by fingerprint alone), leave as before.
	key = k.incident("e4")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: append(at("C", "5000"), at("D", "-62135596800000")...)})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t2", Members: ended("C", "1000", "")})
	want(t, "a resolve without an end", r, store.OutcomeStillOpen)
	if r.Remaining != 1 {
		t.Fatalf("a resolve without an end: remaining %d, want D alone (C removed)", r.Remaining)
	}
	want(t, "the resolve of a member without a start", step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t3", Members: ended("D", "-62135596800000", "100")}), store.OutcomeClosing)

	// One step carrying the live instance, then an earlier one: the later
	// start is what the incident keeps.
	key = k.incident("e5")
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: []store.Member{{Fingerprint: "E", StartsAt: "3000"}, {Fingerprint: "E", StartsAt: "1000"}}})
	want(t, "a join of two instances", r, store.OutcomeOpening)
	if len(r.Added) != 1 || r.Added[0] != (store.Member{Fingerprint: "E", StartsAt: "3000"}) {
		t.Fatalf("a join of two instances added %+v, want [E 3000]", r.Added)
	}
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	want(t, "a resolve that ended before the later start", step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t2", Members: ended("E", "1000", "2000")}), store.OutcomeStillOpen)
}

func testIncidentConcurrentJoin(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("f")
	const n = 16
	var wg sync.WaitGroup
	outcomes := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Incidents(t.Context(), []store.IncidentOp{{Key: key, Step: store.StepJoin, Token: fmt.Sprint("t", i),
				Members: members(fmt.Sprint("fp", i)), Lease: time.Minute, TTL: longTTL}})
			if err != nil {
				errs[i] = err
				return
			}
			outcomes[i] = res[0].Outcome
		}()
	}
	wg.Wait()
	opening := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("join %d: %v", i, errs[i])
		}
		switch outcomes[i] {
		case store.OutcomeOpening:
			opening++
		case store.OutcomeBusy:
		default:
			t.Fatalf("join %d: outcome %q, want opening or busy", i, outcomes[i])
		}
	}
	if opening != 1 {
		t.Fatalf("%d concurrent joins elected %d openers, want exactly 1", n, opening)
	}
}

func testIncidentManyMembers(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("g")
	many := make([]string, 2500) // more than one chunk of a Redis script call
	for i := range many {
		many[i] = fmt.Sprint("fp", i)
	}
	r := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members(many...)})
	want(t, "join of 2500", r, store.OutcomeOpening)
	if len(r.Added) != len(many) || r.Added[0].Fingerprint != "fp0" || r.Added[2499].Fingerprint != "fp2499" {
		t.Fatalf("join of 2500 added %d members, want all in order", len(r.Added))
	}
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t2", Members: members("fp7", "new1", "new1")})
	want(t, "join of a member, and of a new one twice", r, store.OutcomeOpen)
	if len(r.Added) != 1 || r.Added[0].Fingerprint != "new1" {
		t.Fatalf("added %+v, want new1 once", r.Added)
	}
	twice := []store.Member{{Fingerprint: "new2", StartsAt: "1000"}, {Fingerprint: "new2", StartsAt: "2000"}}
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t3", Members: twice})
	want(t, "join of one alert with two starts", r, store.OutcomeOpening)
	if len(r.Added) != 1 || r.Added[0] != twice[0] {
		t.Fatalf("added %+v, want the first start of new2 only", r.Added)
	}
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t3"})
	all := append(members(many...), store.Member{Fingerprint: "new1", StartsAt: "1000"}, twice[1])
	want(t, "leave of every member", step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t4", Members: all}), store.OutcomeClosing)
	want(t, "abort of the closing", step(t, s, store.IncidentOp{Key: key, Step: store.StepAbort, Token: "t4", Members: all}), store.OutcomeOK)
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t5", Members: members("fp2499")})
	if want(t, "join of a member put back", r, store.OutcomeOpen); len(r.Added) != 0 {
		t.Fatalf("added %+v, want none: fp2499 was put back", r.Added)
	}
	want(t, "unjoin of 2500", step(t, s, store.IncidentOp{Key: key, Step: store.StepUnjoin, Token: "t6", Members: members(many...)}), store.OutcomeOK)
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t7", Members: members("fp10")})
	if want(t, "join after the unjoin", r, store.OutcomeOpen); len(r.Added) != 1 {
		t.Fatalf("added %+v, want fp10 again", r.Added)
	}
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t8", Members: members("fp10", "new1")})
	if want(t, "leave of two of three", r, store.OutcomeStillOpen); r.Remaining != 1 {
		t.Fatalf("remaining %d, want 1 (new2)", r.Remaining)
	}
	// A step of more than eight members with one twice (the Redis script
	// remembers them in a table then, a scan of what it wrote for fewer).
	ten := members("d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d0")
	r = step(t, s, store.IncidentOp{Key: k.incident("ten"), Step: store.StepJoin, Token: "t9", Members: ten})
	if want(t, "join of nine members, one twice", r, store.OutcomeOpening); len(r.Added) != 9 {
		t.Fatalf("added %+v, want d0 to d8 once each", r.Added)
	}
}

// manySteps are 3n steps over n incidents, in an order that interleaves
// them: incident i is joined by "a<i>", then by "b<i>" (busy: a<i> holds
// the opening lease), then opened by "a<i>" with the ref "ref<i>". More
// steps than one call of the Redis store carries (incidentBatch).
func manySteps(k keyMaker, n int) []store.IncidentOp {
	ops := make([]store.IncidentOp, 0, 3*n)
	for _, phase := range []string{"a", "b", "opened"} {
		for i := range n {
			key := k.incident(fmt.Sprint("many-", i))
			switch phase {
			case "a", "b":
				ops = append(ops, store.IncidentOp{Key: key, Step: store.StepJoin, Token: fmt.Sprint(phase, i),
					Members: members(fmt.Sprint("fp-", phase, i)), Lease: longTTL, TTL: longTTL})
			case "opened":
				ops = append(ops, store.IncidentOp{Key: key, Step: store.StepOpened, Token: fmt.Sprint("a", i), Ref: fmt.Sprint("ref", i), TTL: longTTL})
			}
		}
	}
	return ops
}

// checkManyStepsDone checks that the n incidents of manySteps are open with
// their refs and hold a<i>'s member only.
func checkManyStepsDone(t *testing.T, s store.Store, k keyMaker, n int) {
	t.Helper()
	for i := range n {
		key := k.incident(fmt.Sprint("many-", i))
		r := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "later", Members: members(fmt.Sprint("fp-a", i))})
		want(t, fmt.Sprint("join of incident ", i, " afterwards"), r, store.OutcomeOpen)
		if r.Ref != fmt.Sprint("ref", i) || len(r.Added) != 0 {
			t.Fatalf("incident %d afterwards: ref %q, added %+v; want ref%d and nothing added", i, r.Ref, r.Added, i)
		}
	}
}

func testIncidentManySteps(t *testing.T, s store.Store, k keyMaker) {
	const n = 70
	ops := manySteps(k, n)
	res, err := s.Incidents(t.Context(), ops)
	if err != nil {
		t.Fatalf("Incidents of %d steps: %v", len(ops), err)
	}
	if len(res) != len(ops) {
		t.Fatalf("Incidents returned %d results for %d steps", len(res), len(ops))
	}
	for i := range n {
		want(t, fmt.Sprint("first join of incident ", i), res[i], store.OutcomeOpening)
		if len(res[i].Added) != 1 || res[i].Added[0].Fingerprint != fmt.Sprint("fp-a", i) {
			t.Fatalf("first join of incident %d added %+v, want fp-a%d", i, res[i].Added, i)
		}
		want(t, fmt.Sprint("second join of incident ", i), res[n+i], store.OutcomeBusy)
		want(t, fmt.Sprint("opening of incident ", i), res[2*n+i], store.OutcomeOK)
		if res[2*n+i].Ref != fmt.Sprint("ref", i) {
			t.Fatalf("opening of incident %d: ref %q, want ref%d", i, res[2*n+i].Ref, i)
		}
	}
	checkManyStepsDone(t, s, k, n)
}

func testIncidentManyStepsWritten(t *testing.T, s store.Store, k keyMaker) {
	const n = 70
	ops := manySteps(k, n)
	if err := store.Write(t.Context(), s, store.Writes{Incidents: ops}).Err(); err != nil {
		t.Fatalf("Write of %d incident steps: %v", len(ops), err)
	}
	checkManyStepsDone(t, s, k, n)
}

func states(t *testing.T, s store.Store, keys ...string) []string {
	t.Helper()
	got, err := s.IncidentStates(t.Context(), keys)
	if err != nil {
		t.Fatalf("IncidentStates: %v", err)
	}
	if len(got) != len(keys) {
		t.Fatalf("IncidentStates returned %d states for %d keys", len(got), len(keys))
	}
	return got
}

func testIncidentStates(t *testing.T, s store.Store, k keyMaker) {
	opening, open, resolving, closed, never, lapsed := k.incident("s1"), k.incident("s2"), k.incident("s3"), k.incident("s4"), k.incident("s5"), k.incident("s6")
	step(t, s, store.IncidentOp{Key: opening, Step: store.StepJoin, Token: "t1", Members: members("A")})
	for _, key := range []string{open, resolving, closed} {
		step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A")})
		step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	}
	step(t, s, store.IncidentOp{Key: resolving, Step: store.StepLeave, Token: "t2", Members: members("A")})
	step(t, s, store.IncidentOp{Key: closed, Step: store.StepLeave, Token: "t2", Members: members("A")})
	step(t, s, store.IncidentOp{Key: closed, Step: store.StepResolved, Token: "t2"})
	step(t, s, store.IncidentOp{Key: lapsed, Step: store.StepJoin, Token: "t1", Members: members("A"), Lease: shortTTL})
	got := states(t, s, opening, open, resolving, closed, never, opening)
	if want := []string{store.OutcomeOpening, "open", "resolving", "", "", store.OutcomeOpening}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("IncidentStates = %q, want %q", got, want)
	}
	// Reading changed nothing: the opener still holds its lease.
	want(t, "another join while the opening is sent", step(t, s, store.IncidentOp{Key: opening, Step: store.StepJoin, Token: "t3", Members: members("B")}), store.OutcomeBusy)
	want(t, "the opener's confirm", step(t, s, store.IncidentOp{Key: opening, Step: store.StepOpened, Token: "t1"}), store.OutcomeOK)
	if got := states(t, s, opening); got[0] != "open" {
		t.Fatalf("after the opener's confirm: %q, want open", got[0])
	}
	eventually(t, "an opening lease past its end reads as closed", func() (bool, error) {
		got, err := s.IncidentStates(t.Context(), []string{lapsed})
		return err == nil && len(got) == 1 && got[0] == "", err
	})
	if got, err := s.IncidentStates(t.Context(), nil); err != nil || len(got) != 0 {
		t.Fatalf("IncidentStates of no key = %q, %v", got, err)
	}
}

func testIncidentRetrigger(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("r1")
	want(t, "opening", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A"), Retrigger: longTTL}), store.OutcomeOpening)
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	r := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t2", Members: members("B"), Retrigger: longTTL})
	if want(t, "a join within the interval", r, store.OutcomeOpen); r.Retriggered != "" {
		t.Fatalf("a join within the interval of the opening took the retrigger: %+v", r)
	}
	var taken store.IncidentResult
	eventually(t, "a join once the interval passed takes the retrigger", func() (bool, error) {
		res, err := s.Incidents(t.Context(), []store.IncidentOp{{Key: key, Step: store.StepJoin, Token: "t3", Members: members("C"), Retrigger: time.Millisecond, Lease: longTTL, TTL: longTTL}})
		if err != nil {
			return false, err
		}
		taken = res[0]
		return res[0].Retriggered != "", nil
	})
	prev, err1 := strconv.ParseInt(taken.PrevTriggered, 10, 64)
	now, err2 := strconv.ParseInt(taken.Retriggered, 10, 64)
	if err1 != nil || err2 != nil || prev >= now {
		t.Fatalf("retrigger %+v: want the opening's time replaced by a later one", taken)
	}
	// Another sender's join while t3's retrigger is unsettled waits for it
	// (busy); once t3 says it was sent, the join is an update.
	want(t, "a join while another's retrigger is unsettled", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t4", Members: members("D"), Retrigger: longTTL}), store.OutcomeBusy)
	want(t, "the retrigger sent", step(t, s, store.IncidentOp{Key: key, Step: store.StepTriggered, Token: "t3", Triggered: taken.Retriggered}), store.OutcomeOK)
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t4", Members: members("D"), Retrigger: longTTL})
	if want(t, "a join right after a retrigger was sent", r, store.OutcomeOpen); r.Retriggered != "" {
		t.Fatalf("a join right after a retrigger took another: %+v", r)
	}

	// Given back: the trigger time returns to what it was, unless a later
	// trigger took it meanwhile.
	key = k.incident("r2")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A")}) // no trigger time kept
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t2", Members: members("B"), Retrigger: longTTL})
	if r.Retriggered == "" || r.PrevTriggered != "" {
		t.Fatalf("a join of an incident with no trigger time: %+v, want the retrigger taken, nothing replaced", r)
	}
	want(t, "a stale untrigger", step(t, s, store.IncidentOp{Key: key, Step: store.StepUntrigger, Token: "t9", Triggered: "1", PrevTriggered: ""}), store.OutcomeOK)
	if r2 := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t3", Members: members("C"), Retrigger: longTTL}); r2.Retriggered != "" || r2.Outcome != store.OutcomeBusy {
		t.Fatalf("a stale untrigger gave the retrigger back (or settled it): %+v", r2)
	}
	want(t, "untrigger", step(t, s, store.IncidentOp{Key: key, Step: store.StepUntrigger, Token: "t2", Triggered: r.Retriggered, PrevTriggered: r.PrevTriggered}), store.OutcomeOK)
	if r2 := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t4", Members: members("D"), Retrigger: longTTL}); r2.Retriggered == "" {
		t.Fatalf("after the untrigger, a join found no retrigger due: %+v", r2)
	}
	// A join without Retrigger (Slack, or new alerts none of which may
	// retrigger) neither reads nor takes it, nor waits for t4's.
	if r2 := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t5", Members: members("E")}); r2.Retriggered != "" || r2.Outcome != store.OutcomeOpen {
		t.Fatalf("a join without Retrigger took one, or waited: %+v", r2)
	}
}

// A retrigger a Join took is settled by its sender: sent (StepTriggered),
// or given back (StepUntrigger). Until then another sender's Join asking
// for one waits (busy): folded into it as an update, its new alert went
// unpaged when the retrigger failed and was given back (an audit) — once
// given back, that Join takes it. A take its sender never settles (a
// replica killed mid-send) is void past the Join's lease, as if given back.
func testIncidentUnsettledRetrigger(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("r4")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t0", Members: members("A")}) // no trigger time kept
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t0"})
	b := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tB", Members: members("B"), Retrigger: longTTL})
	if b.Retriggered == "" {
		t.Fatalf("B's join took no retrigger: %+v", b)
	}
	// The same sender's other step, and a join without Retrigger, go on.
	want(t, "the taker's own join", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tB", Members: members("B2"), Retrigger: longTTL}), store.OutcomeOpen)
	want(t, "C while B's retrigger is in flight", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tC", Members: members("C"), Retrigger: longTTL}), store.OutcomeBusy)
	want(t, "a settle of another token", step(t, s, store.IncidentOp{Key: key, Step: store.StepTriggered, Token: "tX", Triggered: b.Retriggered}), store.OutcomeOK)
	want(t, "C still waits", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tC", Members: members("C"), Retrigger: longTTL}), store.OutcomeBusy)
	want(t, "B's retrigger given back", step(t, s, store.IncidentOp{Key: key, Step: store.StepUntrigger, Token: "tB", Triggered: b.Retriggered, PrevTriggered: b.PrevTriggered}), store.OutcomeOK)
	c := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tC", Members: members("C"), Retrigger: longTTL})
	if c.Outcome != store.OutcomeOpen || c.Retriggered == "" || c.PrevTriggered != "" {
		t.Fatalf("C after B's retrigger was given back: %+v, want it to take the retrigger", c)
	}

	// C's sender dies before it settles: past its lease the take is void,
	// and the next join is due as if C had given it back.
	key = k.incident("r5")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t0", Members: members("A")})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t0"})
	dead := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tDead", Members: members("B"), Retrigger: longTTL, Lease: 50 * time.Millisecond})
	if dead.Retriggered == "" {
		t.Fatalf("the join took no retrigger: %+v", dead)
	}
	var d store.IncidentResult
	eventually(t, "a join once the dead sender's lease ended takes the retrigger", func() (bool, error) {
		res, err := s.Incidents(t.Context(), []store.IncidentOp{{Key: key, Step: store.StepJoin, Token: "tD", Members: members("D"), Retrigger: longTTL, Lease: longTTL, TTL: longTTL}})
		if err != nil {
			return false, err
		}
		d = res[0]
		return d.Outcome == store.OutcomeOpen, nil
	})
	if d.Retriggered == "" || d.PrevTriggered != "" {
		t.Fatalf("after the dead sender's lease: %+v, want the retrigger taken, replacing nothing (the void take's previous)", d)
	}
	// Settled (sent), D's take leaves joins due no more.
	want(t, "D's retrigger sent", step(t, s, store.IncidentOp{Key: key, Step: store.StepTriggered, Token: "tD", Triggered: d.Retriggered}), store.OutcomeOK)
	if e := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tE", Members: members("E"), Retrigger: longTTL}); e.Outcome != store.OutcomeOpen || e.Retriggered != "" {
		t.Fatalf("a join after D's retrigger was sent: %+v, want an update", e)
	}
	// An aborted opening keeps the trigger time it set: an opening of no
	// Retrigger after it, then a retrigger, replaces that time (the memory
	// store dropped it with the state, and answered none: a review).
	key = k.incident("r6")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: members("A"), Retrigger: longTTL})
	want(t, "the aborted opening", step(t, s, store.IncidentOp{Key: key, Step: store.StepAbort, Token: "t1", Members: members("A")}), store.OutcomeOK)
	want(t, "an opening asking no retrigger", step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t2", Members: members("A")}), store.OutcomeOpening)
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t2"})
	var r6 store.IncidentResult
	eventually(t, "a retrigger after the reopening", func() (bool, error) {
		res, err := s.Incidents(t.Context(), []store.IncidentOp{{Key: key, Step: store.StepJoin, Token: "t3", Members: members("B"), Retrigger: time.Millisecond, Lease: longTTL, TTL: longTTL}})
		if err != nil {
			return false, err
		}
		r6 = res[0]
		return r6.Retriggered != "", nil
	})
	if r6.PrevTriggered == "" {
		t.Fatalf("the retrigger after an aborted opening replaced no time: %+v, want the aborted opening's", r6)
	}
}

// A retrigger's settle (Triggered after its send, Untrigger after a failed
// one) carries no time to live, as routing's settle sends it: the incident
// still expires its time to live after its last Join (a review: the memory
// store kept it for good).
func testIncidentSettleKeepsTTL(t *testing.T, s store.Store, k keyMaker) {
	for _, settle := range []store.IncidentStep{store.StepTriggered, store.StepUntrigger} {
		key := k.incident("r7-" + string(settle))
		step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t0", Members: members("A"), TTL: shortTTL})
		step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t0", TTL: shortTTL})
		b := step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tB", Members: members("B"), Retrigger: longTTL, TTL: shortTTL})
		if b.Retriggered == "" {
			t.Fatalf("B's join took no retrigger: %+v", b)
		}
		if _, err := s.Incidents(t.Context(), []store.IncidentOp{{Key: key, Step: settle, Token: "tB", Triggered: b.Retriggered, PrevTriggered: b.PrevTriggered}}); err != nil {
			t.Fatalf("Incidents(%s): %v", settle, err)
		}
		eventually(t, "the incident expires after "+string(settle), func() (bool, error) {
			st, err := s.IncidentStates(t.Context(), []string{key})
			return err == nil && st[0] == "", err
		})
	}
}

func testIncidentConcurrentRetrigger(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("r3")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t0", Members: members("A")})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t0"})
	const n = 16
	var wg sync.WaitGroup
	taken := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			res, err := s.Incidents(t.Context(), []store.IncidentOp{{Key: key, Step: store.StepJoin, Token: fmt.Sprint("t", i),
				Members: members(fmt.Sprint("fp", i)), Lease: time.Minute, TTL: longTTL, Retrigger: longTTL}})
			if err != nil {
				errs[i] = err
				return
			}
			taken[i] = res[0].Retriggered != ""
		})
	}
	wg.Wait()
	got := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("join %d: %v", i, errs[i])
		}
		if taken[i] {
			got++
		}
	}
	if got != 1 {
		t.Fatalf("%d concurrent joins took %d retriggers, want exactly 1", n, got)
	}
}

func testIncidentUnjoinEndsAt(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("u1")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: append(at("A", "3000"), at("B", "1000")...)})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	// The late resolve of A's earlier instance, in a truncated webhook.
	want(t, "unjoin of an earlier instance", step(t, s, store.IncidentOp{Key: key, Step: store.StepUnjoin, Token: "t2", Members: ended("A", "1000", "2000")}), store.OutcomeOK)
	r := step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t3", Members: ended("B", "1000", "2000")})
	if want(t, "leave of B", r, store.OutcomeStillOpen); r.Remaining != 1 {
		t.Fatalf("leave of B: remaining %d, want A's live instance", r.Remaining)
	}
	// The resolve of the firing A holds, and an unjoin without an end (a
	// failed update's), remove.
	want(t, "unjoin of A's live instance", step(t, s, store.IncidentOp{Key: key, Step: store.StepUnjoin, Token: "t4", Members: ended("A", "3000", "4000")}), store.OutcomeOK)
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t5", Members: at("C", "5000")})
	want(t, "unjoin without an end", step(t, s, store.IncidentOp{Key: key, Step: store.StepUnjoin, Token: "t5", Members: at("C", "5000")}), store.OutcomeOK)
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t6", Members: append(at("A", "3000"), at("C", "5000")...)})
	if len(r.Added) != 2 {
		t.Fatalf("join after the unjoins added %+v, want A and C again", r.Added)
	}
}

func testIncidentLeaveRemoved(t *testing.T, s store.Store, k keyMaker) {
	key := k.incident("l1")
	step(t, s, store.IncidentOp{Key: key, Step: store.StepJoin, Token: "t1", Members: append(at("A", "1500"), at("B", "1000")...)})
	step(t, s, store.IncidentOp{Key: key, Step: store.StepOpened, Token: "t1"})
	r := step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t2", Members: append(ended("B", "1000", "2000"), ended("X", "1000", "2000")...)})
	if want(t, "leave of B and of a stranger", r, store.OutcomeStillOpen); len(r.Removed) != 1 || r.Removed[0].Fingerprint != "B" || r.Removed[0].StartsAt != "1000" {
		t.Fatalf("leave removed %+v, want [B 1000]", r.Removed)
	}
	// A's resolve carries an earlier start than the incident holds (the
	// start Alertmanager settles on for an HA Prometheus pair's copies).
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t3", Members: ended("A", "1000", "2000")})
	if want(t, "leave of A", r, store.OutcomeClosing); len(r.Removed) != 1 || r.Removed[0].Fingerprint != "A" || r.Removed[0].StartsAt != "1500" {
		t.Fatalf("leave removed %+v, want [A 1500]: the start the incident held", r.Removed)
	}
	want(t, "abort of the closing", step(t, s, store.IncidentOp{Key: key, Step: store.StepAbort, Token: "t3", Members: r.Removed}), store.OutcomeOK)
	// Put back with its own start: a lagging peer's resolve of an earlier
	// instance (ended at 1200) leaves it in place.
	r = step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t4", Members: ended("A", "900", "1200")})
	if want(t, "late resolve of an earlier instance", r, store.OutcomeStillOpen); r.Remaining != 1 {
		t.Fatalf("remaining %d, want A", r.Remaining)
	}
}

// testIncidentRenew: an incident renewed outlives the time to live its
// steps gave it, members included (a member's leave still finds it), and
// renewing an incident that does not exist creates nothing.
func testIncidentRenew(t *testing.T, s store.Store, k keyMaker) {
	key, other, none := k.incident("i1"), k.incident("i2"), k.incident("i3")
	for _, kk := range []string{key, other} {
		step(t, s, store.IncidentOp{Key: kk, Step: store.StepJoin, Token: "t1", Members: members("A", "B"), TTL: shortTTL})
		step(t, s, store.IncidentOp{Key: kk, Step: store.StepOpened, Token: "t1", TTL: shortTTL})
	}
	if err := s.RenewIncidents(t.Context(), []string{key, none}, longTTL); err != nil {
		t.Fatalf("RenewIncidents: %v", err)
	}
	eventually(t, "the incident not renewed expired", func() (bool, error) {
		st, err := s.IncidentStates(t.Context(), []string{other})
		return err == nil && st[0] == "", err
	})
	st, err := s.IncidentStates(t.Context(), []string{key, none})
	if err != nil || st[0] != "open" || st[1] != "" {
		t.Fatalf("IncidentStates after the renewal = %q, %v; want the renewed incident open, the missing one still missing", st, err)
	}
	if res := step(t, s, store.IncidentOp{Key: key, Step: store.StepLeave, Token: "t2", Members: members("A")}); res.Outcome == store.OutcomeClosing {
		t.Fatalf("a leave of one of two members closed the renewed incident (%+v): its members expired", res)
	}
}
