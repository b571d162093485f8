package routing

import (
	"testing"
	"time"
)

// A parent this replica saw "in the future" — its clock stepped back since
// (NTP, a VM resumed) — is not reused in an outage: when it was seen is
// unknown, so a new episode's alert, started after the incident's resolve,
// would read as older than the parent and reply under the resolved one,
// hidden, instead of posting its own (a mutation audit found it untested).
func TestAParentSeenAfterNowIsNotReused(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name string
		seen time.Time
		want bool
	}{
		{"seen a minute ago", now.Add(-time.Minute), true},
		{"seen a minute after now", now.Add(time.Minute), false},
		{"seen over knownRefTTL ago", now.Add(-knownRefTTL - time.Second), false},
	} {
		var k knownRefs
		k.note("inc", "P1", tc.seen)
		if ref, _, ok := k.get("inc", now); ok != tc.want || ok && ref != "P1" {
			t.Errorf("%s: get = %q, %v; want reused %v", tc.name, ref, ok, tc.want)
		}
	}
}
