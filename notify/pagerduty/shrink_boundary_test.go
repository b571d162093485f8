package pagerduty_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

// An event of exactly 512,000 bytes is within PagerDuty's limit (as
// Alertmanager and Grafana read it): it goes out whole, its per-alert
// details kept and no field cut. Shrunk, on-call would read a cut field
// and a count of omitted alerts on a page that fitted (a mutation audit
// found the boundary untested).
func TestAnEventOfExactly512000BytesGoesOutWhole(t *testing.T) {
	send := func(n int) pdtest.Event {
		t.Helper()
		h := newHarness(t, func(c *pagerduty.Config) {
			c.CustomDetails = map[string]string{"description": "{{ .CommonAnnotations.description }}"}
		})
		no := opening("aaa")
		no.Data.CommonAnnotations["description"] = strings.Repeat("x", n)
		return h.sendOne(t, no)
	}
	probe := send(500_000) // each x of the description is one byte of the event
	e := send(500_000 + 512_000 - len(probe.Raw))
	var d map[string]json.RawMessage
	if err := json.Unmarshal(e.Payload.CustomDetails, &d); err != nil {
		t.Fatal(err)
	}
	if _, ok := d["alerts"]; len(e.Raw) != 512_000 || !ok || cutMarker.Match(d["description"]) {
		t.Errorf("event of %d bytes, custom_details alerts %.60s, description …%s: want the 512,000-byte event whole",
			len(e.Raw), d["alerts"], d["description"][max(0, len(d["description"])-40):])
	}
}
