package storetest

import (
	"testing"

	"github.com/alertrouter/alertrouter/store"
)

func init() {
	cases = append(cases, conformance{"AddMembers without a TTL leaves the set's as it was", testAddMembersWithoutTTL})
}

// A TTL that is not positive leaves the set's as it was (as Set does):
// taken as zero, Redis deleted the set with its members.
func testAddMembersWithoutTTL(t *testing.T, s store.Store, k keyMaker) {
	key := k.set("nottl")
	mustAdd(t, s, key, longTTL, "m1")
	mustAdd(t, s, key, 0, "m2")
	expect(t, "Members", mustMembers(t, s, key), []string{"m1", "m2"})
}
