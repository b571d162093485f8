package storetest

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

func init() {
	cases = append(cases, []conformance{
		{"ClaimJoin joins and removes only the members whose claim it took", testClaimJoin},
		{"ClaimJoin of many steps keeps each step's own members", testClaimJoinMany},
		{"ClaimJoin's claims expire after their TTL, those of steps and the others", testClaimJoinExpiry},
		{"ClaimJoin of one step with thousands of claims", testClaimJoinThousands},
		{"ClaimJoin reads each step's After keys in the same call, after its other writes", testClaimJoinAfter},
		{"IncidentJoins says when each member last joined", testIncidentJoins},
	}...)
}

func fingerprints(ms []store.Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Fingerprint
	}
	return out
}

func testClaimJoin(t *testing.T, s store.Store, k keyMaker) {
	incA, incB, incC := k.incident("a"), k.incident("b"), k.incident("c")
	claim := func(name string) string { return k.key(name, "claim") }
	// C is open with members c2 and c3.
	want(t, "join C", step(t, s, store.IncidentOp{Key: incC, Step: store.StepJoin, Token: "t0", Members: members("c2", "c3")}), store.OutcomeOpening)
	want(t, "opened C", step(t, s, store.IncidentOp{Key: incC, Step: store.StepOpened, Token: "t0", Ref: "R"}), store.OutcomeOK)
	// Another sender holds the claims of a1, c3 and b1.
	mustSet(t, s, store.Entry{Key: claim("a1"), Value: "other", TTL: longTTL},
		store.Entry{Key: claim("c3"), Value: "other", TTL: longTTL},
		store.Entry{Key: claim("b1"), Value: "other", TTL: longTTL})
	names := []string{"a0", "a1", "c2", "c3", "b1", "a2"}
	claims := make([]store.Entry, len(names))
	for i, n := range names {
		claims[i] = store.Entry{Key: claim(n), Value: "tok", TTL: longTTL}
	}
	also := k.key("h", "history")
	op := func(key string, st store.IncidentStep, fps ...string) store.ClaimedOp {
		c := store.ClaimedOp{Op: store.IncidentOp{Key: key, Step: st, Token: "tok", Members: members(fps...), Lease: longTTL, TTL: longTTL}}
		for _, fp := range fps {
			c.Claims = append(c.Claims, slices.Index(names, fp))
		}
		return c
	}
	res := store.ClaimJoin(t.Context(), s, claims, []store.Entry{{Key: also, Value: "v", TTL: longTTL}}, []store.ClaimedOp{
		op(incA, store.StepJoin, "a0", "a1"),
		op(incB, store.StepJoin, "b1"),
		op(incC, store.StepLeave, "c2", "c3"),
		op(incA, store.StepJoin, "a2"),
	})
	if res.ClaimErr != nil || res.AlsoErr != nil || res.IncidentsErr != nil {
		t.Fatalf("ClaimJoin errors: claims %v, also %v, incidents %v", res.ClaimErr, res.AlsoErr, res.IncidentsErr)
	}
	expect(t, "won", res.Won, []bool{true, false, true, false, false, true})
	if got := mustGet(t, s, also, claim("a0"), claim("a1")); !slices.Equal(got, []string{"v", "tok", "other"}) {
		t.Fatalf("after ClaimJoin: history and claims %q, want [v tok other]", got)
	}
	if len(res.Incidents) != 4 {
		t.Fatalf("ClaimJoin answered %d steps, want 4", len(res.Incidents))
	}
	want(t, "join of A with a1's claim lost", res.Incidents[0], store.OutcomeOpening)
	expect(t, "A's first join added", fingerprints(res.Incidents[0].Added), []string{"a0"})
	want(t, "join of B with every claim lost", res.Incidents[1], store.OutcomeSkipped)
	want(t, "leave of C with c3's claim lost", res.Incidents[2], store.OutcomeStillOpen)
	if res.Incidents[2].Remaining != 1 || res.Incidents[2].Ref != "R" {
		t.Fatalf("leave of C: remaining %d ref %q, want 1 (c3 stays) and R", res.Incidents[2].Remaining, res.Incidents[2].Ref)
	}
	want(t, "second join of A in the same call", res.Incidents[3], store.OutcomeOpening)
	expect(t, "A's second join added", fingerprints(res.Incidents[3].Added), []string{"a2"})

	// B was left untouched: the other sender's join opens it, with only b1.
	r := step(t, s, store.IncidentOp{Key: incB, Step: store.StepJoin, Token: "other", Members: members("b1")})
	want(t, "the claim holder's join of B", r, store.OutcomeOpening)
	expect(t, "B's join added", fingerprints(r.Added), []string{"b1"})
	// a1 never joined A: the claim holder adds it.
	r = step(t, s, store.IncidentOp{Key: incA, Step: store.StepOpened, Token: "tok"})
	want(t, "opened A", r, store.OutcomeOK)
	r = step(t, s, store.IncidentOp{Key: incA, Step: store.StepJoin, Token: "other", Members: members("a0", "a1", "a2")})
	want(t, "the claim holder's join of A", r, store.OutcomeOpen)
	expect(t, "A's join by the claim holder added", fingerprints(r.Added), []string{"a1"})
	// c3 stayed in C: its leave by the claim holder closes it.
	want(t, "the claim holder's leave of C", step(t, s, store.IncidentOp{Key: incC, Step: store.StepLeave, Token: "other", Members: members("c3")}), store.OutcomeClosing)
}

// testClaimJoinMany runs 150 steps over 50 incidents in one ClaimJoin,
// every fifth member's claim held by another sender (some steps lose all), so a step's members
// read at another step's offsets, or its claims at another's keys, fail it.
func testClaimJoinMany(t *testing.T, s store.Store, k keyMaker) {
	const n = 50
	var claims, theirs []store.Entry
	var ops []store.ClaimedOp
	wantAdded := map[int][]string{}
	for i := range n {
		key := k.incident("m" + strconv.Itoa(i))
		for j := range 3 {
			c := store.ClaimedOp{Op: store.IncidentOp{Key: key, Step: store.StepJoin, Token: "tok", Lease: longTTL, TTL: longTTL}}
			for m := range j + 1 {
				fp := strconv.Itoa(i) + "-" + strconv.Itoa(j) + "-" + strconv.Itoa(m)
				ck := k.key("m"+strconv.Itoa(i), "claim:"+fp)
				if len(claims)%5 == 3 {
					theirs = append(theirs, store.Entry{Key: ck, Value: "other", TTL: longTTL})
				} else {
					wantAdded[len(ops)] = append(wantAdded[len(ops)], fp)
				}
				c.Op.Members = append(c.Op.Members, store.Member{Fingerprint: fp, StartsAt: "1000"})
				c.Claims = append(c.Claims, len(claims))
				claims = append(claims, store.Entry{Key: ck, Value: "tok", TTL: longTTL})
			}
			ops = append(ops, c)
		}
	}
	mustSet(t, s, theirs...)
	res := store.ClaimJoin(t.Context(), s, claims, nil, ops)
	if res.ClaimErr != nil || res.IncidentsErr != nil {
		t.Fatalf("ClaimJoin errors: claims %v, incidents %v", res.ClaimErr, res.IncidentsErr)
	}
	if len(res.Incidents) != len(ops) {
		t.Fatalf("ClaimJoin answered %d steps, want %d", len(res.Incidents), len(ops))
	}
	for i, r := range res.Incidents {
		if len(wantAdded[i]) == 0 {
			want(t, "step "+strconv.Itoa(i)+" without a claim won", r, store.OutcomeSkipped)
			continue
		}
		want(t, "step "+strconv.Itoa(i), r, store.OutcomeOpening)
		expect(t, "step "+strconv.Itoa(i)+" added", fingerprints(r.Added), wantAdded[i])
	}
}

// A step whose claims outnumber what one Lua unpack takes (8,000 values
// in Redis' Lua) still reads them all.
func testClaimJoinThousands(t *testing.T, s store.Store, k keyMaker) {
	const n = 9000
	op := store.ClaimedOp{Op: store.IncidentOp{Key: k.incident("thousands"), Step: store.StepJoin, Token: "tok", Lease: longTTL, TTL: longTTL}}
	claims := make([]store.Entry, n)
	var theirs []store.Entry
	for i := range n {
		fp := "t" + strconv.Itoa(i)
		claims[i] = store.Entry{Key: k.key("thousands", "claim:"+fp), Value: "tok", TTL: longTTL}
		if i == n-1 {
			theirs = append(theirs, store.Entry{Key: claims[i].Key, Value: "other", TTL: longTTL})
		}
		op.Op.Members = append(op.Op.Members, store.Member{Fingerprint: fp, StartsAt: "1000"})
		op.Claims = append(op.Claims, i)
	}
	mustSet(t, s, theirs...)
	res := store.ClaimJoin(t.Context(), s, claims, nil, []store.ClaimedOp{op})
	if res.ClaimErr != nil || res.IncidentsErr != nil {
		t.Fatalf("ClaimJoin of %d claims: claims %v, incidents %v", n, res.ClaimErr, res.IncidentsErr)
	}
	want(t, "the step", res.Incidents[0], store.OutcomeOpening)
	if got := len(res.Incidents[0].Added); got != n-1 {
		t.Fatalf("the step added %d members, want %d (all but the one claimed by another)", got, n-1)
	}
}

func testClaimJoinExpiry(t *testing.T, s store.Store, k keyMaker) {
	carried, loose := k.key("x", "claim:a"), k.key("y", "claim:b")
	res := store.ClaimJoin(t.Context(), s, []store.Entry{
		{Key: carried, Value: "tok", TTL: shortTTL},
		{Key: loose, Value: "tok", TTL: shortTTL},
	}, nil, []store.ClaimedOp{{Op: store.IncidentOp{Key: k.incident("x"), Step: store.StepJoin, Token: "tok", Members: members("a"), Lease: longTTL, TTL: longTTL}, Claims: []int{0}}})
	if res.ClaimErr != nil || res.IncidentsErr != nil {
		t.Fatalf("ClaimJoin errors: claims %v, incidents %v", res.ClaimErr, res.IncidentsErr)
	}
	expect(t, "won", res.Won, []bool{true, true})
	if got := mustGet(t, s, carried, loose); !slices.Equal(got, []string{"tok", "tok"}) {
		t.Fatalf("claims %q, want both held by tok", got)
	}
	eventually(t, "ClaimJoin's claims expire", func() (bool, error) {
		_, found, err := s.Get(t.Context(), []string{carried, loose})
		return err == nil && !found[0] && !found[1], err
	})
}

func testClaimJoinAfter(t *testing.T, s store.Store, k keyMaker) {
	incA, incB := k.incident("after-a"), k.incident("after-b")
	markA, gone, markB := k.key("after-a", "mark"), k.key("after-a", "none"), k.key("after-b", "mark")
	mustSet(t, s, store.Entry{Key: markA, Value: "resolving", TTL: longTTL})
	claims := []store.Entry{{Key: k.key("after-a", "c0"), Value: "tok", TTL: longTTL}, {Key: k.key("after-b", "c1"), Value: "tok", TTL: longTTL}}
	ops := []store.ClaimedOp{
		{Op: store.IncidentOp{Key: incA, Step: store.StepJoin, Token: "tok", Members: members("a0"), Lease: longTTL, TTL: longTTL}, Claims: []int{0}, After: []string{markA, gone}},
		{Op: store.IncidentOp{Key: incB, Step: store.StepJoin, Token: "tok", Members: members("b0"), Lease: longTTL, TTL: longTTL}, Claims: []int{1}},
	}
	// The other writes of the call come before the steps: B's mark, written
	// with them, is read after.
	ops = append(ops, store.ClaimedOp{Op: store.IncidentOp{Key: incB, Step: store.StepJoin, Token: "tok", Members: members("b0"), Lease: longTTL, TTL: longTTL}, Claims: []int{1}, After: []string{markB}})
	res := store.ClaimJoin(t.Context(), s, claims, []store.Entry{{Key: markB, Value: "written", TTL: longTTL}}, ops)
	if res.ClaimErr != nil || res.IncidentsErr != nil || res.AfterErr != nil {
		t.Fatalf("ClaimJoin errors: claims %v, incidents %v, after %v", res.ClaimErr, res.IncidentsErr, res.AfterErr)
	}
	want(t, "join of A", res.Incidents[0], store.OutcomeOpening)
	if len(res.After) != 3 {
		t.Fatalf("ClaimJoin answered %d After reads, want one per op (3)", len(res.After))
	}
	expect(t, "A's After values", res.After[0].Values, []string{"resolving", ""})
	expect(t, "A's After found", res.After[0].Found, []bool{true, false})
	if len(res.After[1].Values) != 0 || len(res.After[1].Found) != 0 {
		t.Fatalf("B's first op asked nothing, read %v", res.After[1])
	}
	expect(t, "B's After values", res.After[2].Values, []string{"written"})
}

func testIncidentJoins(t *testing.T, s store.Store, k keyMaker) {
	r, ok := s.(store.IncidentJoinsReader)
	if !ok {
		t.Skip("the store reads no join times")
	}
	inc, none := k.incident("joins"), k.incident("joins-none")
	before := time.Now().Add(-time.Second)
	want(t, "join", step(t, s, store.IncidentOp{Key: inc, Step: store.StepJoin, Token: "t0", Members: members("a", "b"), Lease: longTTL, TTL: longTTL}), store.OutcomeOpening)
	after := time.Now().Add(time.Second)
	joins, err := r.IncidentJoins(t.Context(), []string{inc, none})
	if err != nil || len(joins) != 2 {
		t.Fatalf("IncidentJoins = %v, %v; want one answer per key", joins, err)
	}
	for _, fp := range []string{"a", "b"} {
		if at, ok := joins[0][fp]; !ok || at.Before(before) || at.After(after) {
			t.Errorf("member %s joined at %v (present %v), want between %v and %v", fp, at, ok, before, after)
		}
	}
	if len(joins[1]) != 0 {
		t.Errorf("an incident without state has joins %v", joins[1])
	}
	want(t, "opened", step(t, s, store.IncidentOp{Key: inc, Step: store.StepOpened, Token: "t0", Ref: "R"}), store.OutcomeOK)
	step(t, s, store.IncidentOp{Key: inc, Step: store.StepLeave, Token: "t1", Members: []store.Member{{Fingerprint: "a", StartsAt: "1000", EndsAt: "9000"}}, Lease: longTTL, TTL: longTTL})
	if joins, err = r.IncidentJoins(t.Context(), []string{inc}); err != nil || len(joins[0]) != 1 {
		t.Fatalf("after a left: %v, %v; want b alone", joins, err)
	}
	if _, ok := joins[0]["b"]; !ok {
		t.Fatalf("after a left: %v; want b", joins[0])
	}
	// Alertmanager repeating b (the same start) does not move when it
	// became a member; b firing anew (another start) does.
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	time.Sleep(20 * time.Millisecond)
	step(t, s, store.IncidentOp{Key: inc, Step: store.StepJoin, Token: "t2", Members: members("b"), Lease: longTTL, TTL: longTTL})
	again, err := r.IncidentJoins(t.Context(), []string{inc})
	if err != nil || !again[0]["b"].Equal(joins[0]["b"]) {
		t.Fatalf("after a repeat of b: %v, %v; want b unmoved from %v", again, err, joins[0]["b"])
	}
	step(t, s, store.IncidentOp{Key: inc, Step: store.StepJoin, Token: "t2", Members: []store.Member{{Fingerprint: "b", StartsAt: "2000"}}, Lease: longTTL, TTL: longTTL})
	if again, err = r.IncidentJoins(t.Context(), []string{inc}); err != nil || !again[0]["b"].After(mid) {
		t.Fatalf("after b fired anew: %v, %v; want b after %v", again, err, mid)
	}
	if now, err := r.TimeAt(t.Context(), inc); err != nil || now.Before(again[0]["b"]) {
		t.Fatalf("the store's time %v, %v; want it at or after b's %v", now, err, again[0]["b"])
	}
}
