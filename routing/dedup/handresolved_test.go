package dedup_test

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing/dedup"
)

// A hand resolve is marked per PagerDuty integration: two teams' marks of
// one incident key, and the per-incident mark of earlier builds, are three
// keys, all in the incident's hash slot (read together in one round trip
// on Redis Cluster).
func TestHandResolveMarksArePerIntegration(t *testing.T) {
	const incident = "NodeDiskFull/NodeDiskFull/prod-eu1/node-exporter"
	a := dedup.HandResolvedAtKey("ar:", incident, "team-02-pd/pagerduty/0")
	b := dedup.HandResolvedAtKey("ar:", incident, "team-14-pd/pagerduty/0")
	legacy := dedup.HandResolvedKey("ar:", incident)
	if a == b || a == legacy || b == legacy {
		t.Fatalf("keys %q, %q, %q: want three", a, b, legacy)
	}
	for _, k := range []string{a, b, legacy} {
		if !strings.HasPrefix(k, "ar:handresolved:{"+incident+"}") {
			t.Errorf("key %q: want it under the incident's hash tag", k)
		}
	}
}
