package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
)

// A routing key rotated while an incident is open (a Kubernetes Secret's
// new value, or the team's route moved to another PagerDuty integration)
// sent the incident's retrigger and resolve to the new key: PagerDuty
// opened a second incident there and the first stayed open, paging on (an
// audit). The incident's later events now go to the key its trigger went
// to; new incidents go to the new key; the reload says so.
func TestARotatedRoutingKeyKeepsOpenIncidentsAtTheirKey(t *testing.T) {
	const oldKey, newKey = "old0000000000000000000000000key0", "new0000000000000000000000000key0"
	pd := pdtest.NewServer()
	defer pd.Close()
	keyFile, _, _, base, log := keyFileRouter(t, pd, oldKey, "incidents: {retrigger_interval: 1s}\n")
	post := func(status, service, instance string) {
		t.Helper()
		postAlerts(t, base, fmt.Sprintf(`{"version":"4","status":%q,"receiver":"router","groupKey":"{}:{}","alerts":[{"status":%q,"labels":{"alertname":"GPUDown","severity":"critical","service":%q,"instance":%q},"startsAt":"2026-12-04T10:00:00Z"%s}]}`,
			status, status, service, instance, map[string]string{"resolved": `,"endsAt":"2026-12-04T10:30:00Z"`}[status]))
	}
	events := func() []string {
		var out []string
		for _, e := range pd.Events() {
			out = append(out, e.EventAction+"@"+e.RoutingKey[:3])
		}
		return out
	}

	post("firing", "chat", "i1")
	if got := strings.Join(events(), " "); got != "trigger@old" {
		t.Fatalf("PagerDuty got %q, want the trigger at the old key", got)
	}
	if err := os.WriteFile(keyFile, []byte(newKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(log.String(), "configuration reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("no reload after the key file changed; log:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(log.String(), "changed the routing key or events URL") || !strings.Contains(log.String(), `changed=pd/pagerduty/0`) {
		t.Errorf("the reload did not warn of the changed key, naming the integration:\n%s", log.String())
	}

	time.Sleep(1100 * time.Millisecond) // past incidents.retrigger_interval
	post("firing", "chat", "i2")        // joins the open incident: a retrigger
	post("firing", "embed", "i1")       // a new incident
	post("resolved", "chat", "i1")
	post("resolved", "chat", "i2") // the incident's resolve
	want := "trigger@old trigger@old trigger@new resolve@old"
	if got := strings.Join(events(), " "); got != want {
		t.Fatalf("PagerDuty got %q, want %q: the open incident's retrigger and resolve at the key it was triggered with, the new incident at the new key", got, want)
	}
}
