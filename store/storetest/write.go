package storetest

import (
	"fmt"
	"sort"
	"testing"

	"github.com/alertrouter/alertrouter/store"
)

func init() {
	cases = append(cases, []conformance{
		{"Write writes every part as the separate calls do, across incidents", testWrite},
		{"Write adds sets of thousands of members with their TTL", testWriteLargeSet},
		{"an empty Write succeeds", testWriteEmpty},
		{"Claim takes claims as SetNX does and writes the other entries", testClaim},
	}...)
}

func testWrite(t *testing.T, s store.Store, k keyMaker) {
	mine, theirs := k.key("i1", "claim"), k.key("i2", "claim")
	mustSet(t, s, store.Entry{Key: mine, Value: "tok", TTL: longTTL}, store.Entry{Key: theirs, Value: "other", TTL: longTTL})
	removeFrom := k.set("i3")
	mustAdd(t, s, removeFrom, longTTL, "x", "y")
	inc := k.incident("i4")
	want(t, "join", step(t, s, store.IncidentOp{Key: inc, Step: store.StepJoin, Token: "t1", Members: members("A")}), store.OutcomeOpening)

	w := store.Writes{
		Set: []store.Entry{
			{Key: k.key("i1", "marker"), Value: "v1", TTL: longTTL},
			{Key: k.key("i5", "marker"), Value: "v5", TTL: longTTL},
		},
		Release:   []store.Entry{{Key: mine, Value: "tok"}, {Key: theirs, Value: "tok"}},
		Incidents: []store.IncidentOp{{Key: inc, Step: store.StepOpened, Token: "t1", Ref: "C1 1.2", TTL: longTTL}},
		Add:       []store.Members{{Key: k.set("i6"), TTL: longTTL, Members: []string{"m1", "m2"}}, {Key: k.set("i7"), TTL: longTTL, Members: nil}},
		Remove:    []store.Members{{Key: removeFrom, Members: []string{"x"}}},
	}
	if err := store.Write(t.Context(), s, w).Err(); err != nil {
		t.Fatalf("Write: %v", err)
	}
	expect(t, "values after Write", mustGet(t, s, k.key("i1", "marker"), k.key("i5", "marker"), mine, theirs),
		[]string{"v1", "v5", "<missing>", "other"})
	expect(t, "added set", mustMembers(t, s, k.set("i6")), []string{"m1", "m2"})
	expect(t, "set with nothing added", mustMembers(t, s, k.set("i7")), []string{})
	expect(t, "set after removal", mustMembers(t, s, removeFrom), []string{"y"})
	r := step(t, s, store.IncidentOp{Key: inc, Step: store.StepJoin, Token: "t2", Members: members("B")})
	want(t, "join after the opened step written by Write", r, store.OutcomeOpen)
	if r.Ref != "C1 1.2" {
		t.Fatalf("incident ref %q, want the one Write settled", r.Ref)
	}
}

func testWriteLargeSet(t *testing.T, s store.Store, k keyMaker) {
	var many []string
	for i := range 2500 {
		many = append(many, fmt.Sprintf("m%04d", i))
	}
	short := k.set("i2")
	w := store.Writes{Add: []store.Members{{Key: k.set("i1"), TTL: longTTL, Members: many}, {Key: short, TTL: shortTTL, Members: []string{"s"}}}}
	if err := store.Write(t.Context(), s, w).Err(); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got := mustMembers(t, s, k.set("i1"))
	sort.Strings(got)
	expect(t, "large set", got, many)
	eventually(t, "short-TTL set written by Write expired", func() (bool, error) {
		m, err := s.Members(t.Context(), short)
		return err == nil && len(m) == 0, err
	})
}

func testWriteEmpty(t *testing.T, s store.Store, k keyMaker) {
	if err := store.Write(t.Context(), s, store.Writes{}).Err(); err != nil {
		t.Fatalf("empty Write: %v", err)
	}
}

func testClaim(t *testing.T, s store.Store, k keyMaker) {
	held := k.key("c1", "claim")
	mustSet(t, s, store.Entry{Key: held, Value: "other", TTL: longTTL})
	claims := []store.Entry{
		{Key: held, Value: "tok", TTL: longTTL},
		{Key: k.key("c2", "claim"), Value: "tok", TTL: longTTL},
	}
	also := []store.Entry{{Key: k.key("c3", "history"), Value: "h1", TTL: longTTL}}
	won, err, alsoErr := store.Claim(t.Context(), s, claims, also)
	if err != nil || alsoErr != nil {
		t.Fatalf("Claim: %v, %v", err, alsoErr)
	}
	if len(won) != 2 || won[0] || !won[1] {
		t.Fatalf("Claim won %v, want [false true] (the first key was held)", won)
	}
	expect(t, "values after Claim", mustGet(t, s, held, k.key("c2", "claim"), k.key("c3", "history")),
		[]string{"other", "tok", "h1"})
	// Claims alone, and writes alone.
	other := []store.Entry{{Key: claims[1].Key, Value: "tok2", TTL: longTTL}}
	if won, err, alsoErr = store.Claim(t.Context(), s, other, nil); err != nil || alsoErr != nil || len(won) != 1 || won[0] {
		t.Fatalf("Claim of a key another token holds = %v, %v, %v; want [false]", won, err, alsoErr)
	}
	// The same claim sent again (a retry after a lost reply) is still won.
	if won, err, alsoErr = store.Claim(t.Context(), s, claims[1:], nil); err != nil || alsoErr != nil || len(won) != 1 || !won[0] {
		t.Fatalf("the same Claim again = %v, %v, %v; want [true]", won, err, alsoErr)
	}
	also[0].Value = "h2"
	if won, err, alsoErr = store.Claim(t.Context(), s, nil, also); err != nil || alsoErr != nil || len(won) != 0 {
		t.Fatalf("Claim with writes only = %v, %v, %v", won, err, alsoErr)
	}
	expect(t, "overwritten by a Claim's writes", mustGet(t, s, k.key("c3", "history")), []string{"h2"})
}
