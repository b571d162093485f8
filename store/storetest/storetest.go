// Package storetest is the conformance suite every store.Store
// implementation must pass: the memory store, a real redis-server and a real
// Redis Cluster all run the same Run.
package storetest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

// shortTTL is the TTL of entries the suite waits to see expire; expiryWait
// bounds that wait.
const (
	shortTTL   = 100 * time.Millisecond
	longTTL    = time.Hour
	expiryWait = 10 * time.Second
)

// Run runs the conformance suite. Its subtests run in parallel and each calls
// newStore once, so newStore must be safe for concurrent use; it should
// register the store's Close with t.Cleanup and tolerate a store the subtest
// already closed. Every key the suite writes carries a prefix unique to this
// run and subtest, so stores may share one backend (and be left dirty).
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	run := "storetest:" + nonce() + ":"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			tc.run(t, s, keyMaker{prefix: run + tc.name + ":"})
		})
	}
}

// conformance is one case of the suite: its subtest's name and body.
type conformance struct {
	name string
	run  func(t *testing.T, s store.Store, k keyMaker)
}

var cases = []conformance{
	{"SetNX sets only absent keys and reports each entry", testSetNXPerEntry},
	{"SetNX sets a key repeated in one batch by its first entry only", testSetNXRepeatedKey},
	{"empty batches succeed without results", testEmptyBatches},
	{"SetNX entries expire after their TTL", testSetNXExpiry},
	{"Set overwrites the value and the TTL", testSetOverwrites},
	{"Get reports present and missing keys", testGet},
	{"Get of thousands of keys answers each in order, repeats included", testGetMany},
	{"DeleteIfEqual deletes only keys holding the given value", testDeleteIfEqual},
	{"ExpireIfEqual sets the TTL only of keys holding the given value", testExpireIfEqual},
	{"AddMembers adds to the set and Members lists it", testMembers},
	{"AddMembers sets the TTL of the set", testMembersExpiry},
	{"RemoveMembers returns the members remaining", testRemoveMembers},
	{"concurrent RemoveMembers each see a distinct remaining count", testRemoveMembersConcurrent},
	{"concurrent AddMembers keep every member", testAddMembersConcurrent},
	{"concurrent SetNX gives each key exactly one winner", testSetNXConcurrent},
	{"a batch of 100 keys of 100 incidents works in one call", testBatchAcrossIncidents},
	{"Ping answers", testPing},
	{"a closed store reports itself unavailable", testClosed},
}

// keyMaker builds the suite's keys with store.Key, so keys of one incident
// share a Redis Cluster hash tag and keys of different incidents do not.
type keyMaker struct{ prefix string }

func (k keyMaker) key(incident, rest string) string {
	return store.Key(k.prefix, "claim", incident, rest)
}

func (k keyMaker) set(incident string) string {
	return store.Key(k.prefix, "members", incident, "")
}

func nonce() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// eventually polls cond until it returns true, failing the test after
// expiryWait.
func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(expiryWait)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not true after %v", what, expiryWait)
		}
		time.Sleep(10 * time.Millisecond) // poll interval, not a timing assumption
	}
}

func mustSetNX(t *testing.T, s store.Store, entries ...store.Entry) []bool {
	t.Helper()
	set, err := s.SetNX(t.Context(), entries)
	if err != nil {
		t.Fatalf("SetNX: %v", err)
	}
	if len(set) != len(entries) {
		t.Fatalf("SetNX returned %d results for %d entries", len(set), len(entries))
	}
	return set
}

func mustSet(t *testing.T, s store.Store, entries ...store.Entry) {
	t.Helper()
	if err := s.Set(t.Context(), entries); err != nil {
		t.Fatalf("Set: %v", err)
	}
}

// mustGet returns the value of each key, "<missing>" for absent ones.
func mustGet(t *testing.T, s store.Store, keys ...string) []string {
	t.Helper()
	values, found, err := s.Get(t.Context(), keys)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if len(values) != len(keys) || len(found) != len(keys) {
		t.Fatalf("Get returned %d values, %d found for %d keys", len(values), len(found), len(keys))
	}
	out := make([]string, len(keys))
	for i := range keys {
		out[i] = "<missing>"
		if found[i] {
			out[i] = values[i]
		} else if values[i] != "" {
			t.Fatalf("Get: missing key %q has value %q", keys[i], values[i])
		}
	}
	return out
}

func mustMembers(t *testing.T, s store.Store, key string) []string {
	t.Helper()
	m, err := s.Members(t.Context(), key)
	if err != nil {
		t.Fatalf("Members: %v", err)
	}
	slices.Sort(m)
	return m
}

func mustAdd(t *testing.T, s store.Store, key string, ttl time.Duration, members ...string) {
	t.Helper()
	if err := s.AddMembers(t.Context(), key, ttl, members...); err != nil {
		t.Fatalf("AddMembers: %v", err)
	}
}

func mustRemove(t *testing.T, s store.Store, key string, members ...string) int64 {
	t.Helper()
	n, err := s.RemoveMembers(t.Context(), key, members...)
	if err != nil {
		t.Fatalf("RemoveMembers: %v", err)
	}
	return n
}

func expect[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %v; want %v", what, got, want)
	}
}

func testSetNXPerEntry(t *testing.T, s store.Store, k keyMaker) {
	a, b, c := k.key("i1", "a"), k.key("i1", "b"), k.key("i2", "c")
	mustSet(t, s, store.Entry{Key: a, Value: "first", TTL: longTTL})
	got := mustSetNX(t, s,
		store.Entry{Key: a, Value: "second", TTL: longTTL},
		store.Entry{Key: b, Value: "b", TTL: longTTL},
		store.Entry{Key: c, Value: "c", TTL: longTTL},
	)
	expect(t, "SetNX results", got, []bool{false, true, true})
	expect(t, "values", mustGet(t, s, a, b, c), []string{"first", "b", "c"})
	got = mustSetNX(t, s, store.Entry{Key: b, Value: "again", TTL: longTTL})
	expect(t, "second SetNX of b", got, []bool{false})
}

func testSetNXRepeatedKey(t *testing.T, s store.Store, k keyMaker) {
	x := k.key("i1", "x")
	got := mustSetNX(t, s,
		store.Entry{Key: x, Value: "1", TTL: longTTL},
		store.Entry{Key: x, Value: "2", TTL: longTTL},
	)
	expect(t, "SetNX results", got, []bool{true, false})
	expect(t, "value", mustGet(t, s, x), []string{"1"})
}

func testEmptyBatches(t *testing.T, s store.Store, _ keyMaker) {
	ctx := t.Context()
	if set, err := s.SetNX(ctx, nil); err != nil || len(set) != 0 {
		t.Errorf("SetNX(nil) = %v, %v; want no results, no error", set, err)
	}
	if err := s.Set(ctx, nil); err != nil {
		t.Errorf("Set(nil) = %v", err)
	}
	if v, f, err := s.Get(ctx, nil); err != nil || len(v) != 0 || len(f) != 0 {
		t.Errorf("Get(nil) = %v, %v, %v; want no results, no error", v, f, err)
	}
	if err := s.DeleteIfEqual(ctx, nil); err != nil {
		t.Errorf("DeleteIfEqual(nil) = %v", err)
	}
}

func testSetNXExpiry(t *testing.T, s store.Store, k keyMaker) {
	short, long := k.key("i1", "short"), k.key("i1", "long")
	mustSetNX(t, s,
		store.Entry{Key: short, Value: "v", TTL: shortTTL},
		store.Entry{Key: long, Value: "v", TTL: longTTL},
	)
	eventually(t, "short-TTL key expired", func() (bool, error) {
		_, found, err := s.Get(t.Context(), []string{short})
		return err == nil && !found[0], err
	})
	expect(t, "long-TTL key", mustGet(t, s, long), []string{"v"})
	got := mustSetNX(t, s, store.Entry{Key: short, Value: "again", TTL: longTTL})
	expect(t, "SetNX after expiry", got, []bool{true})
}

func testSetOverwrites(t *testing.T, s store.Store, k keyMaker) {
	a := k.key("i1", "a")
	mustSet(t, s, store.Entry{Key: a, Value: "old", TTL: longTTL})
	mustSet(t, s, store.Entry{Key: a, Value: "new", TTL: shortTTL})
	expect(t, "value after Set", mustGet(t, s, a), []string{"new"})
	// The long TTL was replaced by the short one.
	eventually(t, "overwritten key expired", func() (bool, error) {
		_, found, err := s.Get(t.Context(), []string{a})
		return err == nil && !found[0], err
	})
}

func testGet(t *testing.T, s store.Store, k keyMaker) {
	a, missing, b := k.key("i1", "a"), k.key("i1", "missing"), k.key("i2", "b")
	mustSet(t, s,
		store.Entry{Key: a, Value: "A", TTL: longTTL},
		store.Entry{Key: b, Value: "thread 1712345678.000100", TTL: longTTL},
	)
	expect(t, "values", mustGet(t, s, a, missing, b), []string{"A", "<missing>", "thread 1712345678.000100"})
}

// testGetMany reads more keys than one batched read of the Redis store
// carries (getChunk), every third one missing and one key twice, so the
// answers must come back in the callers' order across batches.
func testGetMany(t *testing.T, s store.Store, k keyMaker) {
	const n = 2500
	keys := make([]string, n)
	want := make([]string, n)
	var entries []store.Entry
	for i := range keys {
		keys[i] = k.key(fmt.Sprintf("incident-%04d", i), "fp")
		want[i] = "<missing>"
		if i%3 != 0 {
			want[i] = fmt.Sprintf("v%d", i)
			entries = append(entries, store.Entry{Key: keys[i], Value: want[i], TTL: longTTL})
		}
	}
	mustSet(t, s, entries...)
	keys = append(keys, keys[1])
	want = append(want, want[1])
	expect(t, "values", mustGet(t, s, keys...), want)
}

func testDeleteIfEqual(t *testing.T, s store.Store, k keyMaker) {
	mine, theirs, missing := k.key("i1", "mine"), k.key("i2", "theirs"), k.key("i3", "missing")
	mustSet(t, s,
		store.Entry{Key: mine, Value: "replica-a", TTL: longTTL},
		store.Entry{Key: theirs, Value: "replica-b", TTL: longTTL},
	)
	err := s.DeleteIfEqual(t.Context(), []store.Entry{
		{Key: mine, Value: "replica-a"},
		{Key: theirs, Value: "replica-a"},
		{Key: missing, Value: "replica-a"},
	})
	if err != nil {
		t.Fatalf("DeleteIfEqual: %v", err)
	}
	expect(t, "values", mustGet(t, s, mine, theirs, missing), []string{"<missing>", "replica-b", "<missing>"})
}

func testExpireIfEqual(t *testing.T, s store.Store, k keyMaker) {
	mine, theirs, missing := k.key("i1", "mine"), k.key("i2", "theirs"), k.key("i3", "missing")
	// mine is set first: without its refresh it expires no later than theirs.
	mustSet(t, s,
		store.Entry{Key: mine, Value: "marker-a", TTL: shortTTL},
		store.Entry{Key: theirs, Value: "marker-b", TTL: shortTTL},
	)
	err := s.ExpireIfEqual(t.Context(), []store.Entry{
		{Key: mine, Value: "marker-a", TTL: longTTL},
		{Key: theirs, Value: "marker-a", TTL: longTTL},
		{Key: missing, Value: "marker-a", TTL: longTTL},
	})
	if err != nil {
		t.Fatalf("ExpireIfEqual: %v", err)
	}
	eventually(t, "the key holding another value expired", func() (bool, error) {
		_, found, err := s.Get(t.Context(), []string{theirs})
		return err == nil && !found[0], err
	})
	expect(t, "values", mustGet(t, s, mine, theirs, missing), []string{"marker-a", "<missing>", "<missing>"})
	if err := s.ExpireIfEqual(t.Context(), nil); err != nil {
		t.Errorf("ExpireIfEqual(nil) = %v", err)
	}
}

func testMembers(t *testing.T, s store.Store, k keyMaker) {
	key := k.set("i1")
	expect(t, "Members of an absent set", mustMembers(t, s, key), []string{})
	mustAdd(t, s, key, longTTL, "m1", "m2")
	mustAdd(t, s, key, longTTL, "m2", "m3")
	mustAdd(t, s, key, longTTL) // no members: nothing to do
	expect(t, "Members", mustMembers(t, s, key), []string{"m1", "m2", "m3"})
}

func testMembersExpiry(t *testing.T, s store.Store, k keyMaker) {
	short, long := k.set("i1"), k.set("i2")
	mustAdd(t, s, short, shortTTL, "m1")
	mustAdd(t, s, long, longTTL, "m1")
	eventually(t, "short-TTL set expired", func() (bool, error) {
		m, err := s.Members(t.Context(), short)
		return err == nil && len(m) == 0, err
	})
	expect(t, "long-TTL set", mustMembers(t, s, long), []string{"m1"})
}

func testRemoveMembers(t *testing.T, s store.Store, k keyMaker) {
	key := k.set("i1")
	if n := mustRemove(t, s, key, "m1"); n != 0 {
		t.Errorf("RemoveMembers of an absent set = %d; want 0", n)
	}
	mustAdd(t, s, key, longTTL, "a", "b", "c")
	for _, step := range []struct {
		remove []string
		want   int64
	}{
		{[]string{"a"}, 2},
		{[]string{"a"}, 2},
		{[]string{"b", "not-a-member"}, 1},
		{[]string{"c"}, 0},
	} {
		if n := mustRemove(t, s, key, step.remove...); n != step.want {
			t.Fatalf("RemoveMembers(%v) = %d; want %d", step.remove, n, step.want)
		}
	}
	expect(t, "Members after removing all", mustMembers(t, s, key), []string{})
}

func testRemoveMembersConcurrent(t *testing.T, s store.Store, k keyMaker) {
	const n = 50
	key := k.set("i1")
	members := make([]string, n)
	for i := range members {
		members[i] = fmt.Sprintf("alert-%02d", i)
	}
	mustAdd(t, s, key, longTTL, members...)

	remaining := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() { remaining[i], errs[i] = s.RemoveMembers(t.Context(), key, m) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("RemoveMembers: %v", err)
	}
	// Removal and count are atomic, so exactly one remover saw each count,
	// and exactly one saw the set become empty.
	slices.Sort(remaining)
	want := make([]int64, n)
	for i := range want {
		want[i] = int64(i)
	}
	expect(t, "remaining counts seen", remaining, want)
}

func testAddMembersConcurrent(t *testing.T, s store.Store, k keyMaker) {
	const n = 50
	key := k.set("i1")
	errs := make([]error, n)
	want := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		want[i] = fmt.Sprintf("alert-%02d", i)
		wg.Go(func() { errs[i] = s.AddMembers(t.Context(), key, longTTL, want[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("AddMembers: %v", err)
	}
	expect(t, "Members", mustMembers(t, s, key), want)
}

func testSetNXConcurrent(t *testing.T, s store.Store, k keyMaker) {
	const replicas, nkeys = 20, 20
	entries := make([][]store.Entry, replicas)
	keys := make([]string, nkeys)
	for j := range keys {
		keys[j] = k.key(fmt.Sprintf("incident-%d", j), "claim")
	}
	for r := range entries {
		for _, key := range keys {
			entries[r] = append(entries[r], store.Entry{Key: key, Value: fmt.Sprintf("replica-%d", r), TTL: longTTL})
		}
	}
	results := make([][]bool, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for r := range replicas {
		wg.Go(func() { results[r], errs[r] = s.SetNX(t.Context(), entries[r]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("SetNX: %v", err)
	}
	values := mustGet(t, s, keys...)
	for j, key := range keys {
		var winners []int
		for r := range replicas {
			if results[r][j] {
				winners = append(winners, r)
			}
		}
		if len(winners) != 1 {
			t.Errorf("key %q: winners %v; want exactly one", key, winners)
			continue
		}
		if want := fmt.Sprintf("replica-%d", winners[0]); values[j] != want {
			t.Errorf("key %q = %q; want the winner's value %q", key, values[j], want)
		}
	}
}

func testBatchAcrossIncidents(t *testing.T, s store.Store, k keyMaker) {
	const n = 100
	entries := make([]store.Entry, n)
	keys := make([]string, n)
	values := make([]string, n)
	allTrue, allFalse := make([]bool, n), make([]bool, n)
	for i := range entries {
		keys[i] = k.key(fmt.Sprintf("incident-%03d", i), "fp")
		values[i] = fmt.Sprintf("v%d", i)
		entries[i] = store.Entry{Key: keys[i], Value: values[i], TTL: longTTL}
		allTrue[i] = true
	}
	expect(t, "first SetNX", mustSetNX(t, s, entries...), allTrue)
	// The same claims again (a client's retry after a lost reply) find
	// their own values: still won. Other values lose, and change nothing.
	expect(t, "the same SetNX again", mustSetNX(t, s, entries...), allTrue)
	others := make([]store.Entry, n)
	for i, e := range entries {
		others[i] = store.Entry{Key: e.Key, Value: e.Value + "-other", TTL: e.TTL}
	}
	expect(t, "SetNX of other values", mustSetNX(t, s, others...), allFalse)
	expect(t, "values", mustGet(t, s, keys...), values)

	// Release the even claims with the right value, the odd ones with a
	// wrong one: only the even ones go.
	release := make([]store.Entry, n)
	want := make([]string, n)
	for i, e := range entries {
		release[i] = e
		want[i] = "<missing>"
		if i%2 == 1 {
			release[i].Value = "someone else"
			want[i] = values[i]
		}
	}
	if err := s.DeleteIfEqual(t.Context(), release); err != nil {
		t.Fatalf("DeleteIfEqual: %v", err)
	}
	expect(t, "values after release", mustGet(t, s, keys...), want)

	for i := range entries {
		entries[i].Value = "confirmed"
		want[i] = "confirmed"
	}
	mustSet(t, s, entries...)
	expect(t, "values after Set", mustGet(t, s, keys...), want)
}

func testPing(t *testing.T, s store.Store, _ keyMaker) {
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

func testClosed(t *testing.T, s store.Store, k keyMaker) {
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx := t.Context()
	key := k.key("i1", "a")
	_, err := s.SetNX(ctx, []store.Entry{{Key: key, Value: "v", TTL: longTTL}})
	cj := store.ClaimJoin(ctx, s, []store.Entry{{Key: key, Value: "v", TTL: longTTL}}, nil,
		[]store.ClaimedOp{{Op: store.IncidentOp{Key: k.incident("i1"), Step: store.StepJoin, Token: "v", Members: members("a")}, Claims: []int{0}}})
	for name, err := range map[string]error{
		"SetNX":                 err,
		"Ping":                  s.Ping(ctx),
		"ClaimJoin (claims)":    cj.ClaimErr,
		"ClaimJoin (incidents)": cj.IncidentsErr,
	} {
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s after Close: err = %v; want it to wrap store.ErrUnavailable", name, err)
		}
	}
}
