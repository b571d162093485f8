package pagerduty_test

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

// An incident key PagerDuty takes as it is (up to its 255 characters) is
// sent unchanged; only a longer one is hashed. The boundary is part of
// the incident's identity: a key of exactly 255 hashed by one version and
// sent whole by another would open a second incident across an upgrade.
func TestADedupKeyOfAtMost255CharactersIsSentAsItIs(t *testing.T) {
	for _, n := range []int{1, 254, 255} {
		key := strings.Repeat("k", n)
		if got := pagerduty.DedupKey(key); got != key {
			t.Errorf("a key of %d characters sent as %q, want it unchanged", n, got)
		}
	}
	long := strings.Repeat("k", 256)
	if got := pagerduty.DedupKey(long); got == long || len(got) > 255 || !strings.HasPrefix(got, strings.Repeat("k", 180)+"~") {
		t.Errorf("a key of 256 characters sent as %q, want its first 180 characters, ~ and its hash", got)
	}
}
